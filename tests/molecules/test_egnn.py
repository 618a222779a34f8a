"""E(3) equivariance of the EGNN, invariance of the heads, and the two fixed evaluation bugs of UniGEM."""

import pytest
import torch

from scigen.molecules.data import ptr_from_counts, remove_mean, to_padded
from scigen.molecules.unigem.model import MoleculeDenoiser
from scigen.molecules.unigem.process import make_process, make_schedule, predict_properties, training_loss


def _rot(seed):
    g = torch.Generator().manual_seed(seed)
    q, r = torch.linalg.qr(torch.randn(3, 3, generator=g, dtype=torch.float64))
    q = q * torch.sign(torch.diagonal(r))
    q[:, 0] *= -1 if torch.det(q) > 0 else 1  # a reflection too: E(3), not only SE(3)
    return q


def _net(mode):
    torch.manual_seed(0)
    net = MoleculeDenoiser(mode, 5, 2, hidden=16, n_layers=3).double()
    for p in net.parameters():  # non-trivial coordinate updates (EDM initialises them ~0)
        p.data.add_(0.05 * torch.randn_like(p))
    return net


@pytest.mark.parametrize("mode", ["unigem", "edm"])
def test_e3_equivariance_and_permutation(mode):
    g = torch.Generator().manual_seed(1)
    ptr = ptr_from_counts(torch.tensor([5, 3, 7]))
    x = remove_mean(torch.randn(15, 3, generator=g, dtype=torch.float64) * 1.5, ptr)
    h = torch.randn(15, 6, generator=g, dtype=torch.float64)
    t = torch.tensor([0.5, 0.005, 0.9], dtype=torch.float64)
    low = torch.tensor([False, True, False])
    net = _net(mode)
    out = net(x, ptr, t, low, h=h)
    q, shift = _rot(2), torch.tensor([3.0, -1.0, 2.0], dtype=torch.float64)
    out2 = net(x @ q.T + shift, ptr, t, low, h=h)
    torch.testing.assert_close(out2["eps_x"], out["eps_x"] @ q.T, atol=1e-9, rtol=1e-7)
    assert float(out["eps_x"].detach().abs().max()) > 1e-3  # not trivially zero
    keys = ["eps_h"] if mode == "edm" else ["types", "props"]
    for k in keys:  # invariant heads
        torch.testing.assert_close(out2[k], out[k], atol=1e-9, rtol=1e-7)
    perm = torch.cat([torch.tensor([4, 2, 0, 1, 3]), 5 + torch.tensor([2, 0, 1]), 8 + torch.randperm(7, generator=g)])
    out3 = net(x[perm], ptr, t, low, h=h[perm])
    torch.testing.assert_close(out3["eps_x"], out["eps_x"][perm], atol=1e-9, rtol=1e-7)
    if mode == "unigem":
        torch.testing.assert_close(out3["types"], out["types"][perm], atol=1e-9, rtol=1e-7)
        torch.testing.assert_close(out3["props"], out["props"], atol=1e-9, rtol=1e-7)


def test_property_prediction_ignores_batch_padding():
    """Bug 1 of the official code: padded rows entered the node sum, so a molecule's prediction depended
    on the largest molecule in its batch. Here it must not."""
    net = _net("unigem")
    g = torch.Generator().manual_seed(3)
    small = torch.randn(4, 3, generator=g, dtype=torch.float64)
    big = torch.randn(12, 3, generator=g, dtype=torch.float64)
    mean, mad = torch.tensor([1.0, -2.0], dtype=torch.float64), torch.tensor([0.5, 3.0], dtype=torch.float64)
    pos_a, mask_a = to_padded(small, ptr_from_counts(torch.tensor([4])))
    pos_b, mask_b = to_padded(torch.cat([small, big]), ptr_from_counts(torch.tensor([4, 12])))
    pos_b[0, 4:] = 7.0  # garbage in the padding
    alone = predict_properties(net, pos_a, mask_a, mean, mad)
    batched = predict_properties(net, pos_b, mask_b, mean, mad)
    torch.testing.assert_close(batched[0], alone[0], atol=1e-10, rtol=1e-9)


def test_property_prediction_is_denormalised():
    """Bug 2: the official MAE compared the normalised prediction with the raw label. Our prediction is
    yhat * MAD + mean: with the last layer of graph_dec zeroed (yhat = bias), it equals bias*MAD + mean."""
    net = _net("unigem")
    last = net.graph_dec[-1]
    last.weight.data.zero_()
    last.bias.data = torch.tensor([0.5, -1.0], dtype=torch.float64)
    mean, mad = torch.tensor([10.0, -2.0], dtype=torch.float64), torch.tensor([4.0, 3.0], dtype=torch.float64)
    pos, mask = to_padded(torch.randn(9, 3, dtype=torch.float64), ptr_from_counts(torch.tensor([5, 4])))
    y = predict_properties(net, pos, mask, mean, mad)
    torch.testing.assert_close(y, torch.tensor([[12.0, -5.0]] * 2, dtype=torch.float64))


def test_loss_uses_zero_com_noise_and_nucleation_split(monkeypatch):
    """The noise fed to the network is centred per molecule; half of the batch has k <= t_n; heads'
    terms only count for k <= t_n."""
    from scigen.molecules.unigem import process as diffusion

    seen = {}
    real = diffusion.zero_com_noise

    def spy(ptr, **kw):
        eps = real(ptr, **kw)
        seen["eps"], seen["ptr"] = eps, ptr
        return eps

    monkeypatch.setattr(diffusion, "zero_com_noise", spy)
    k = diffusion.draw_steps(1000, 1000, 10, generator=torch.Generator().manual_seed(0))
    assert bool((k[:500] > 10).all()) and bool((k[500:] <= 10).all()) and int(k[500:].min()) == 0
    net = MoleculeDenoiser("unigem", 5, 1, hidden=8, n_layers=2)
    pos = torch.randn(4, 6, 3)
    mask = torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [1] * 5 + [0], [1] * 3 + [0] * 3], dtype=torch.bool)
    batch = {"pos": pos, "mask": mask, "types": torch.zeros(4, 6, dtype=torch.long), "props": torch.randn(4, 1)}
    loss, parts = training_loss(make_process(net, make_schedule(1000, 1e-5), t_n=10), net, batch, mode="unigem", t_n=10, vocab=(1, 6, 7, 8, 9),
                                prop_mean=torch.zeros(1), prop_mad=torch.ones(1), return_parts=True,
                                generator=torch.Generator().manual_seed(0))
    from scigen.molecules.data import com_norm

    assert float(com_norm(seen["eps"], seen["ptr"]).max()) < 1e-6
    assert torch.isfinite(loss) and set(parts) == {"eps", "types", "props"}
    # total = mean_b(eps_b + 1{k<=tn}(types_b + props_b)) and the low half is exactly half the batch
    assert float(loss.detach()) == pytest.approx(float(parts["eps"].detach() + 0.5 * (parts["types"] + parts["props"])), rel=1e-5)
