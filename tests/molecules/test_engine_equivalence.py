"""UniGEM / EDM on the engine equal the pre-migration code (``_reference_unigem.py``) on the same draws.

* Loss: the new ``process.training_loss`` (eps term through ``Diffusion.loss`` / ``denoising_loss`` with
  ``reduction="per_sample"`` on the padded batch + UniGEM's head terms) equals the old three-term loss for
  the same generator (same integer steps, same zero-CoM noise), term by term, and so do the gradients.
* Sampling: ``process.sample_molecules`` (``scigen.core.samplers.sample`` with ``project=``) equals the old
  ancestral / DDIM loops plus their k = 0 call, molecule for molecule: coordinates, atom types from the
  type head and the normalised properties.

The networks are small randomly initialised ``MoleculeDenoiser`` s; for sampling their eps is added to
the exact eps of zero-CoM Gaussian data so the states stay O(1) over a thousand steps.
"""

import pytest
import torch
from torch import nn

from scigen.molecules.data import MoleculeSet
from scigen.molecules.unigem.model import MoleculeDenoiser
from scigen.molecules.unigem.process import make_process, make_schedule, sample_molecules, training_loss

VOCAB = (1, 6, 7, 8, 9)
T_N = 10


def _batch(n_mol=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    sizes = torch.randint(2, 9, (n_mol,), generator=g).tolist()
    z = [torch.tensor(VOCAB)[torch.randint(0, 5, (n,), generator=g)].numpy() for n in sizes]
    pos = [(1.4 * torch.randn(n, 3, generator=g, dtype=torch.float64)).numpy() for n in sizes]
    props = {"gap": torch.randn(n_mol, generator=g).numpy() + 6.0, "alpha": 10 * torch.rand(n_mol, generator=g).numpy()}
    ms = MoleculeSet(z, pos, props, atom_vocab=VOCAB, max_atoms=10)
    items = [ms[i] for i in range(len(ms))]
    return {k: torch.stack([it[k] for it in items]) for k in items[0]}


@pytest.mark.parametrize("mode", ["unigem", "edm"])
def test_loss_equals_the_old_loss_on_the_same_draws(mode, ref_unigem):
    n_props = 2 if mode == "unigem" else 0
    torch.manual_seed(0)
    net = MoleculeDenoiser(mode, len(VOCAB), n_props, hidden=16, n_layers=2)
    schedule = make_schedule(1000, 1e-5)
    process = make_process(net, schedule, t_n=T_N)
    batch = _batch()
    mean, mad = (torch.tensor([6.0, 5.0]), torch.tensor([0.8, 2.5])) if n_props else (None, None)
    kw = dict(mode=mode, t_n=T_N, vocab=VOCAB, prop_mean=mean, prop_mad=mad, return_parts=True)
    old, old_parts = ref_unigem.training_loss(net, batch, schedule, generator=torch.Generator().manual_seed(3), **kw)
    old_grads = torch.autograd.grad(old, list(net.parameters()), allow_unused=True)
    new, new_parts = training_loss(process, net, batch, generator=torch.Generator().manual_seed(3), **kw)
    new_grads = torch.autograd.grad(new, list(net.parameters()), allow_unused=True)
    assert set(new_parts) == set(old_parts) == ({"eps", "types", "props"} if n_props else {"eps"})
    for key in old_parts:
        torch.testing.assert_close(new_parts[key], old_parts[key], rtol=2e-5, atol=1e-6)
    torch.testing.assert_close(new, old, rtol=2e-5, atol=1e-6)
    assert sum(g is not None for g in old_grads) > 10
    for a, b in zip(new_grads, old_grads, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            torch.testing.assert_close(a, b, rtol=1e-3, atol=1e-6)
    # the loss depends on the draws (it is not a constant of the batch)
    other = training_loss(process, net, batch, generator=torch.Generator().manual_seed(4), **kw)[0]
    assert abs(float(other.detach()) - float(new.detach())) > 1e-4


class NearGaussian(nn.Module):
    """eps = exact eps of N(0, C² P) data + 0.3·(a random MoleculeDenoiser), heads from the denoiser."""

    def __init__(self, mode, schedule, n_props=0, c=1.5):
        super().__init__()
        torch.manual_seed(0)
        self.inner = MoleculeDenoiser(mode, len(VOCAB), n_props, hidden=16, n_layers=2)
        self.schedule, self.c = schedule, c

    def forward(self, x, ptr, t, low, h=None):
        out = dict(self.inner(x, ptr, t, low, h=h))
        path = self.schedule.as_path()
        tn = torch.repeat_interleave(t.double(), ptr[1:] - ptr[:-1])[:, None]
        a, s = path.alpha(tn).to(x.dtype), path.sigma(tn).to(x.dtype)
        out["eps_x"] = s * x / (a**2 * self.c**2 + s**2) + 0.3 * out["eps_x"]
        if h is not None:
            out["eps_h"] = s * h / (a**2 + s**2) + 0.3 * out["eps_h"]
        return out


@pytest.mark.parametrize("mode,own,method,T,steps", [
    ("unigem", "ancestral", "ddpm", 1000, None),  # the paper's sampler: all 1000 steps
    ("unigem", "ancestral", "ddpm", 1000, 37),
    ("unigem", "ddim", "ddim", 1000, 50),
    ("edm", "ddim", "ddim", 200, None),
])
def test_samples_equal_the_old_loops(mode, own, method, T, steps, ref_unigem):
    schedule = make_schedule(T, 1e-5)
    n_props = 2 if mode == "unigem" else 0
    net = NearGaussian(mode, schedule, n_props)
    counts = torch.tensor([3, 6, 4, 5, 2])
    old = ref_unigem.sample_molecules(net, counts, schedule, mode=mode, t_n=T_N, vocab=VOCAB, method=own,
                                      steps=steps, generator=torch.Generator().manual_seed(7))
    new = sample_molecules(make_process(net, schedule, t_n=T_N), counts, mode=mode, vocab=VOCAB, method=method,
                           steps=steps, generator=torch.Generator().manual_seed(7))
    scale = float(old["pos"].abs().max())
    assert 0.3 < scale < 50
    torch.testing.assert_close(new["pos"], old["pos"], rtol=0, atol=5e-5 * scale)
    assert torch.equal(new["ptr"], old["ptr"])
    assert torch.equal(new["types"], old["types"])
    if n_props:
        torch.testing.assert_close(new["props"], old["props"], rtol=1e-4, atol=1e-4)
    other = sample_molecules(make_process(net, schedule, t_n=T_N), counts, mode=mode, vocab=VOCAB, method=method,
                             steps=steps, generator=torch.Generator().manual_seed(8))
    assert float((other["pos"] - old["pos"]).abs().max()) > 1e-2 * scale
