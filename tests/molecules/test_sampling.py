"""Samplers of UniGEM / EDM (the engine's solvers with ``project=`` on EDM's discrete path) against a
closed form: zero-CoM Gaussian data ``x ~ N(0, c² P)`` per molecule (``P = I − 11ᵀ/n`` on each axis) has
the exact noise predictor ``ε̂(z, t) = σ z / (α² c² + σ²)``; a correct sampler returns atoms whose
coordinates have variance ``c² (1 − 1/n)``. A spy network checks that every model call sees
zero-centre-of-mass coordinates (the subspace the model is trained on)."""

import pytest
import torch
from torch import nn

from scigen.molecules.data import com_norm, ptr_from_counts
from scigen.molecules.unigem.config import METHODS
from scigen.molecules.unigem.process import make_process, make_schedule, sample_molecules, zero_com_projection

C = 1.5
SCHEDULE = make_schedule(1000, 1e-5)
PATH = SCHEDULE.as_path()


class ExactGaussianEps(nn.Module):
    """The exact ε-predictor of ``N(0, C² P)`` coordinates (and ``N(0, I)`` type features for EDM);
    records the largest centre-of-mass norm of the coordinates it is called with."""

    def __init__(self, n_feat: int = 0):
        super().__init__()
        self.dummy = nn.Parameter(torch.zeros(1))
        self.n_feat, self.max_com, self.calls = n_feat, 0.0, 0

    def forward(self, x, ptr, t, low, h=None):
        self.calls += 1
        self.max_com = max(self.max_com, float(com_norm(x, ptr).max()))
        tn = torch.repeat_interleave(t.double(), ptr[1:] - ptr[:-1])[:, None]
        a, s = PATH.alpha(tn), PATH.sigma(tn)
        out = {"eps_x": (s * x.double() / (a**2 * C**2 + s**2)).to(x.dtype),
               "types": torch.zeros(x.shape[0], 6, dtype=x.dtype)}
        if h is not None:
            out["eps_h"] = (s * h.double() / (a**2 + s**2)).to(h.dtype)
        return out


@pytest.mark.parametrize("method,steps", [("ddpm", 200), ("ddim", 100), ("dpmpp_2m", 40), ("unipc", 40),
                                          ("heun", 40)])
def test_samplers_reproduce_zero_com_gaussian(method, steps):
    n_atoms, n_mol = 5, 800
    net = ExactGaussianEps()
    res = sample_molecules(make_process(net, SCHEDULE, t_n=10), torch.full((n_mol,), n_atoms), mode="unigem",
                           vocab=(1, 6, 7, 8, 9), method=method, steps=steps,
                           generator=torch.Generator().manual_seed(0))
    pos = res["pos"].double()
    assert float(com_norm(pos, res["ptr"]).max()) < 1e-5
    var = pos.pow(2).mean()
    assert float(var) == pytest.approx(C**2 * (1 - 1 / n_atoms), rel=0.06)  # MC std of the estimate ~1.5 %
    assert net.max_com < 1e-4  # every model call saw centred coordinates


@pytest.mark.parametrize("method", METHODS)
def test_engine_methods_stay_in_zero_com_subspace(method):
    """EDM state [x, y, z, h...]: coordinates stay centred at every call, features are not projected."""
    net = ExactGaussianEps()
    counts = torch.tensor([3, 7, 4])
    res = sample_molecules(make_process(net, SCHEDULE, t_n=10), counts, mode="edm", vocab=(1, 6, 7, 8, 9),
                           method=method, steps=6, generator=torch.Generator().manual_seed(1))
    assert net.calls >= 6 and net.max_com < 1e-4
    assert res["pos"].shape == (14, 3) and bool(torch.isfinite(res["pos"]).all())
    assert float(com_norm(res["pos"], res["ptr"]).max()) < 1e-5
    assert set(res["types"].tolist()) <= set(range(5))


def test_zero_com_projection_is_linear_idempotent_and_leaves_features():
    ptr = ptr_from_counts(torch.tensor([2, 3]))
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(5, 7, generator=g, dtype=torch.float64), torch.randn(5, 7, generator=g, dtype=torch.float64)
    P = zero_com_projection(ptr)
    torch.testing.assert_close(P(2 * a - 3 * b), 2 * P(a) - 3 * P(b))
    torch.testing.assert_close(P(P(a)), P(a))
    torch.testing.assert_close(P(a)[:, 3:], a[:, 3:])
    # brute force: the centring matrix of each molecule applied to the coordinate columns
    want = a[:, :3].clone()
    for lo, hi in ((0, 2), (2, 5)):
        n = hi - lo
        want[lo:hi] = (torch.eye(n, dtype=torch.float64) - torch.full((n, n), 1 / n, dtype=torch.float64)) @ a[lo:hi, :3]
    torch.testing.assert_close(P(a)[:, :3], want)


def test_unknown_method_is_rejected():
    with pytest.raises(ValueError, match="unknown sampler method .rk45.; valid: "):
        sample_molecules(make_process(ExactGaussianEps(), make_schedule(100, 1e-5), t_n=10), torch.tensor([3]),
                         mode="unigem", vocab=(1, 6), method="rk45")
