"""NsDiff's own ancestral chain (σ_Y0 recovered from σ̂) on the full and on a respaced grid, against the
exact law: Gaussian data with an exact denoiser."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from scigen.timeseries.nsdiff.config import NsDiffConfig
from scigen.timeseries.nsdiff.process import nsdiff_path
from scigen.timeseries.nsdiff.sampling import sample_windows

D = torch.float64


class _ExactGaussian(nn.Module):
    """Y0 ~ N(f, v) elementwise with g = σ_Y0 = v, so the two-source chain's prior N(f, g) is exact.

    ε̂ = E[ε | Y_k] = √Σ2_k (Y_k − f) / (ᾱ_k v + Σ2_k), σ̂ = the one-step posterior variance with σ_Y0 = v,
    ``eps_error[k] = Var(ε | Y_k) = ᾱ_k v / (ᾱ_k v + Σ2_k)``."""

    mode = "nsdiff"

    def __init__(self, path, T: int, f: float, v: float, horizon: int):
        super().__init__()
        self.path, self.T, self.fv, self.v, self.h = path, T, f, v, horizon
        ks = torch.arange(T + 1, dtype=D)
        a2 = path.base.alpha(ks / T) ** 2
        s2 = torch.stack([path.variance(k / T, torch.tensor([v], dtype=D), torch.tensor([v], dtype=D))[0] for k in ks])
        self.register_buffer("eps_error", a2 * v / (a2 * v + s2))
        self.denoiser = self._denoise

    def mean_var(self, x):
        shape = (x.shape[0], self.h, x.shape[2])
        return torch.full(shape, self.fv, dtype=D), torch.full(shape, self.v, dtype=D)

    def _denoise(self, y, k, f, g):
        t = k[0].double() / self.T
        s2 = self.path.variance(t, g, g)
        a2 = self.path.base.alpha(t) ** 2
        eps = s2.sqrt() * (y - f) / (a2 * self.v + s2)
        var = self.path.posterior(t, (k[0].double() - 1) / self.T, g, g)[2] if int(k[0]) > 1 else torch.zeros_like(y)
        return eps, var


@pytest.mark.parametrize("steps", [None, 10])
def test_the_chain_on_full_and_respaced_grids_samples_the_gaussian_law(steps):
    cfg = NsDiffConfig(context_length=4, horizon=2, rolling_length=2, diffusion_steps=50, beta_end=0.3)
    path = nsdiff_path(cfg)
    f, v = 0.3, 2.0
    net = _ExactGaussian(path, 50, f, v, cfg.horizon)
    x = torch.zeros(1, 4, 1, dtype=D)
    out = sample_windows(net, path, x, 20_000, steps=steps, generator=torch.Generator().manual_seed(0))
    assert out.shape == (20_000, 1, 2, 1)
    assert float(out.mean()) == pytest.approx(f, abs=0.03)
    assert float(out.var()) == pytest.approx(v, rel=0.03)
    # the paper's reverse variance (no Γ_k) under-disperses on both grids
    plain = sample_windows(net, path, x, 20_000, steps=steps, use_eps_error=False,
                           generator=torch.Generator().manual_seed(0))
    assert float(plain.var()) < 0.9 * v


def test_the_respaced_chain_calls_the_denoiser_once_per_grid_step():
    cfg = NsDiffConfig(context_length=4, horizon=2, rolling_length=2, diffusion_steps=50, beta_end=0.3)
    path = nsdiff_path(cfg)
    net = _ExactGaussian(path, 50, 0.0, 1.0, cfg.horizon)
    seen = []
    inner = net.denoiser
    net.denoiser = lambda y, k, f, g: (seen.append(int(k[0])), inner(y, k, f, g))[1]
    sample_windows(net, path, torch.zeros(1, 4, 1, dtype=D), 3, steps=10)
    assert seen == path.base.schedule.steps(10).tolist()[:-1] == [50, 45, 40, 35, 30, 25, 20, 15, 10, 5]
