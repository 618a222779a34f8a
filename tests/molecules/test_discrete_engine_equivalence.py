"""The engine's ``ddpm`` / ``ddim`` on ``DiscreteSchedule.as_path()`` and its integer grid give the same
molecules as UniGEM's own ancestral / DDIM loops (``sample_molecules(method="ancestral"|"ddim")``),
sample for sample from the same generator: the prerequisite for moving UniGEM and EDM onto
``scigen.core.samplers.sample`` (issue 13, item 2).

The network is a small randomly initialised :class:`MoleculeDenoiser` (so the eps predictor is a
real, nonlinear, time-dependent E(3)-equivariant function) added to the exact eps of zero-CoM
Gaussian data (so the states stay O(1) over a thousand steps). UniGEM draws its noise as
``remove_mean(randn(N, 3))``; the engine draws ``randn(N, 3)`` and runs with
``project=zero_com_projection(ptr)``, which gives the same projected states for the same draws.
"""

import pytest
import torch
from torch import nn

from scigen.core.samplers import sample, time_grid
from scigen.molecules.data import ptr_from_counts
from scigen.molecules.unigem.diffusion import make_schedule, sample_molecules, zero_com_projection
from scigen.molecules.unigem.model import MoleculeDenoiser

VOCAB = (1, 6, 7, 8, 9)
T_N = 10
C = 1.5


class Net(nn.Module):
    """``eps = exact eps of N(0, C² P) data + 0.3·random MoleculeDenoiser`` (EDM: features likewise)."""

    def __init__(self, mode: str, schedule):
        super().__init__()
        torch.manual_seed(0)
        self.inner = MoleculeDenoiser(mode, len(VOCAB), 0, hidden=16, n_layers=2)
        self.schedule, self.calls = schedule, []

    def forward(self, x, ptr, t, low, h=None):
        self.calls.append((t.clone(), low.clone()))
        out = dict(self.inner(x, ptr, t, low, h=h))
        k = (t.double() * self.schedule.T).round().long()
        tn = torch.repeat_interleave(k, ptr[1:] - ptr[:-1])
        a = self.schedule.signal(tn)[:, None].to(x.dtype)
        s = self.schedule.noise(tn)[:, None].to(x.dtype)
        out["eps_x"] = s * x / (a**2 * C**2 + s**2) + 0.3 * out["eps_x"]
        if h is not None:
            out["eps_h"] = s * h / (a**2 + s**2) + 0.3 * out["eps_h"]
        return out


def _engine(net, counts, schedule, *, mode, method, steps, seed):
    """The same model through ``sample(...)``: what the UniGEM migration will do."""
    ptr = ptr_from_counts(counts)
    g = torch.Generator().manual_seed(seed)
    x_init = torch.randn(int(ptr[-1]), 3, generator=g)  # = zero_com_noise's draw before centring
    if mode == "edm":
        x_init = torch.cat([x_init, torch.randn(int(ptr[-1]), len(VOCAB) + 1, generator=g)], -1)
    path = schedule.as_path()
    first, T = ptr[:-1], schedule.T

    def model_fn(state, t):
        k = (t.double() * T).round().long()[first]  # per-molecule integer step
        tm, low = k.float() / T, k <= T_N
        if mode != "edm":
            return net(state, ptr, tm, low)["eps_x"]
        out = net(state[:, :3], ptr, tm, low, h=state[:, 3:])
        return torch.cat([out["eps_x"], out["eps_h"]], -1)

    times = time_grid(steps or T, "discrete", path=path)
    x = sample(model_fn, x_init, times, path=path, prediction="eps", method=method, generator=g,
               progress=False, project=zero_com_projection(ptr), final_denoise=True)
    return x, times


@pytest.mark.parametrize(
    "mode,own,method,T,steps",
    [
        ("unigem", "ancestral", "ddpm", 1000, None),  # UniGEM's default: all T = 1000 steps
        ("unigem", "ancestral", "ddpm", 1000, 37),  # a rounded, uneven sub-grid
        ("unigem", "ddim", "ddim", 1000, 50),
        ("edm", "ddim", "ddim", 200, None),  # EDM's [x, h] state (deterministic: same draws order-free)
    ],
)
def test_engine_equals_unigem_loop_sample_for_sample(mode, own, method, T, steps):
    schedule = make_schedule(T, 1e-5)
    counts = torch.tensor([3, 6, 4, 5])
    ref_net = Net(mode, schedule)
    ref = sample_molecules(ref_net, counts, schedule, mode=mode, t_n=T_N, vocab=VOCAB, method=own, steps=steps,
                           generator=torch.Generator().manual_seed(7))
    net = Net(mode, schedule)
    x, times = _engine(net, counts, schedule, mode=mode, method=method, steps=steps, seed=7)
    # same network inputs in the same order: integer steps T -> 0, then the final k = 0 call
    assert len(net.calls) == len(ref_net.calls) == times.numel()
    for (t1, l1), (t2, l2) in zip(net.calls, ref_net.calls, strict=True):
        assert torch.equal(t1, t2) and torch.equal(l1, l2)
    pos = x[:, :3]
    scale = float(ref["pos"].abs().max())
    assert 0.3 < scale < 50  # O(1) molecules, not a degenerate or exploded run
    torch.testing.assert_close(pos, ref["pos"], rtol=0, atol=2e-5 * scale)
    if mode == "edm":
        h0 = x[:, 3:]
        assert torch.equal(h0[:, : len(VOCAB)].argmax(-1), ref["types"])
    # the engine really ran its own loop: a different seed gives different molecules
    x_other, _ = _engine(Net(mode, schedule), counts, schedule, mode=mode, method=method, steps=steps, seed=8)
    assert float((x_other[:, :3] - ref["pos"]).abs().max()) > 100 * 2e-5 * scale
