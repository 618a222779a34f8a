"""Old (NsDiff's own schedule/loss/sampler, frozen in ``_reference_nsdiff.py``) vs new (on the engine's
LocationScalePath, denoising_loss and sample): same loss on the same batch and noise, same samples from
the same generator — for NsDiff (both σ sources, both reverse variances) and TMDM mode."""

from __future__ import annotations

import pytest
import torch

from scigen.timeseries.nsdiff.config import NsDiffConfig
from scigen.timeseries.nsdiff.process import NsDiffNet, estimate_eps_error, nsdiff_loss, nsdiff_path
from scigen.timeseries.nsdiff.sampling import sample_windows

from . import _reference_nsdiff as ref

CFG = dict(context_length=16, horizon=6, rolling_length=4, diffusion_steps=12, beta_end=0.6, d_model=8, n_heads=2,
           e_layers=1, d_layers=1, d_ff=8, g_hidden=8, denoiser_hidden=16, dropout=0.0)


def _setup(mode: str, trained_gamma: bool = True):
    cfg = NsDiffConfig(**CFG, mode=mode)
    torch.manual_seed(0)
    net = NsDiffNet(cfg, 2).eval()
    with torch.no_grad():  # perturb the step gains so that every step's denoiser differs visibly
        for e in net.denoiser.gains:
            e.weight.mul_(torch.linspace(0.5, 2.0, e.weight.shape[0])[:, None])
        if trained_gamma:
            net.eps_error.copy_(torch.linspace(0.0, 0.6, cfg.diffusion_steps + 1))
    old = ref.NsDiffSchedule.linear(cfg.diffusion_steps, cfg.beta_start, cfg.beta_end)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(7, 16, 2, generator=gen) * torch.linspace(0.5, 2, 16)[:, None] + 0.3
    y = torch.randn(7, 6, 2, generator=gen) * 1.5 - 0.2
    return cfg, net, old, nsdiff_path(cfg), x, y


@pytest.mark.parametrize("mode", ["nsdiff", "tmdm"])
def test_same_loss_terms_on_the_same_batch_and_noise(mode):
    cfg, net, old, path, x, y = _setup(mode)
    want = ref.nsdiff_loss(net, old, x, y, cfg.rolling_length, torch.Generator().manual_seed(9), reduce=False)
    got = nsdiff_loss(net, path, x, y, cfg.rolling_length, torch.Generator().manual_seed(9), reduce=False)
    assert set(got) == set(want) == ({"eps", "f"} if mode == "tmdm" else {"eps", "f", "var", "g"})
    for term in want:
        torch.testing.assert_close(got[term], want[term], rtol=2e-5, atol=1e-6)
    # the gradients agree as well (the ε term flows into the denoiser only: f and g enter it detached)
    l_old = sum(want.values())
    l_new = sum(nsdiff_loss(net, path, x, y, cfg.rolling_length, torch.Generator().manual_seed(9),
                            reduce=False).values())
    g_old = torch.autograd.grad(l_old, list(net.denoiser.parameters()), allow_unused=True)
    g_new = torch.autograd.grad(l_new, list(net.denoiser.parameters()), allow_unused=True)
    for a, b in zip(g_new, g_old, strict=True):
        assert (a is None) == (b is None)  # TMDM leaves the variance head unused in both
        if a is not None:
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("mode,source,gamma", [("nsdiff", "denoiser", True), ("nsdiff", "denoiser", False),
                                               ("nsdiff", "g", True), ("nsdiff", "g", False), ("tmdm", "denoiser", True),
                                               ("tmdm", "g", False)])
def test_same_samples_from_the_same_generator(mode, source, gamma):
    cfg, net, old, path, x, _ = _setup(mode)
    want = ref.sample_windows(net, old, x, 5, sigma_source=source, generator=torch.Generator().manual_seed(3),
                              use_eps_error=gamma)
    got = sample_windows(net, path, x, 5, sigma_source=source, generator=torch.Generator().manual_seed(3),
                         use_eps_error=gamma)
    assert got.shape == want.shape == (5, 7, 6, 2)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_eps_error_of_a_zero_denoiser_is_one(monkeypatch):
    """Γ_k = E[(ε − ε̂)²] with ε̂ ≡ 0 is E[ε²] = 1 at every step (closed form; Γ_0 = 0)."""
    cfg, net, _, path, _, _ = _setup("nsdiff", trained_gamma=False)
    gen = torch.Generator().manual_seed(5)
    x, y = torch.randn(64, 16, 2, generator=gen), torch.randn(64, 6, 2, generator=gen)
    monkeypatch.setattr(net.denoiser, "forward", lambda y_k, k, f, g: (torch.zeros_like(y_k), torch.ones_like(y_k)))
    got = estimate_eps_error(net, path, x, y, cfg.rolling_length, generator=torch.Generator().manual_seed(4))
    assert float(got[0]) == 0.0
    torch.testing.assert_close(got[1:], torch.ones(cfg.diffusion_steps, dtype=torch.float64), rtol=0, atol=0.15)


def test_engine_path_equals_the_old_schedule_tensors():
    cfg, _, old, path, _, _ = _setup("nsdiff")
    A, B = path.tables
    torch.testing.assert_close(A, old.G, rtol=1e-12, atol=1e-16)
    torch.testing.assert_close(B, old.btilde, rtol=1e-12, atol=1e-16)
    g = torch.tensor([[0.3, 2.0]], dtype=torch.float64)
    s = torch.tensor([[1.1, 0.05]], dtype=torch.float64)
    for k in (2, 7, 12):
        t, tp = torch.tensor(k / 12, dtype=torch.float64), torch.tensor((k - 1) / 12, dtype=torch.float64)
        g0, g1, g2, var = old.posterior(k, g, s)
        c0, ct, v = path.posterior(t, tp, g, s)
        torch.testing.assert_close(c0, g0, rtol=1e-10, atol=1e-14)
        torch.testing.assert_close(ct, g1, rtol=1e-10, atol=1e-14)
        torch.testing.assert_close(1 - c0 - ct, g2, rtol=1e-9, atol=1e-12)
        torch.testing.assert_close(v, var, rtol=1e-10, atol=1e-14)
        torch.testing.assert_close(path.var2_from_posterior_variance(t, tp, v, g), old.sigma_from_posterior_var(k, g, var),
                                   rtol=1e-8, atol=1e-10)
