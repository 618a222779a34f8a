"""D3U's parts against closed forms: patching, PatchDN (shapes, zero init, channel independence), antithetic
steps, the x0 loss, exact residual reconstruction, and the reverse chain on a Gaussian residual."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from scigen.core.paths import DiscreteSchedule
from scigen.timeseries.d3u.config import D3UConfig
from scigen.timeseries.d3u.patchdn import PatchDN
from scigen.timeseries.d3u.process import antithetic_steps, residual_loss, sample_residuals
from scigen.timeseries.forecasters.patching import n_patches, padding, patchify


@pytest.mark.parametrize("length", [1, 3, 5, 12, 13, 23, 24, 96, 192, 200])
def test_patching_covers_every_step_for_any_length(length):
    x = torch.arange(length, dtype=torch.float64)[None]
    p = patchify(x, 16, 8)
    pad = padding(length, 16, 8)
    assert p.shape == (1, n_patches(length, 16, 8), 16)
    assert pad >= 8 and (length + pad - 16) % 8 == 0
    # patch i starts at 8i; the padded series ends with the last value repeated; nothing is dropped
    padded = torch.cat([x[0], x[0, -1].repeat(pad)])
    for i in range(p.shape[1]):
        assert torch.equal(p[0, i], padded[8 * i : 8 * i + 16])
    assert 8 * (p.shape[1] - 1) + 16 == length + pad


def test_patch_count_matches_the_papers_formula_where_it_applies():
    for H in (96, 192, 336, 720, 24):  # (H - 16) divisible by 8: the paper's pad-by-stride gives (H-16)/8 + 2
        assert n_patches(H, 16, 8) == (H - 16) // 8 + 2
    assert n_patches(192, 16, 8) == 24


def _dn(H, cond_dim=5, **kw):
    torch.manual_seed(0)
    return PatchDN(H, cond_dim, 100, d_model=16, n_heads=2, t_embed_dim=32, **kw)


def _randomise(m: nn.Module):
    torch.manual_seed(1)
    for p in m.parameters():
        nn.init.normal_(p, std=0.3)
    return m


@pytest.mark.parametrize("H", [1, 5, 7, 13, 23])
def test_patchdn_shapes_for_odd_horizons_and_zero_output_at_init(H):
    dn = _dn(H)
    r, t, c = torch.randn(3, H, 4), torch.rand(3), torch.randn(3, 4, 5)
    out = dn(r, t, cond=c)
    assert out.shape == (3, H, 4)
    assert torch.equal(out, torch.zeros_like(out))  # zero-initialised final layer: predicts r0 = 0
    assert _randomise(dn)(r, t, cond=c).abs().sum() > 0


def test_patchdn_is_channel_independent():
    dn = _randomise(_dn(13, depth=2)).eval()
    r, t, c = torch.randn(2, 13, 5), torch.rand(2), torch.randn(2, 5, 5)
    out = dn(r, t, cond=c)
    perm = torch.tensor([3, 0, 4, 1, 2])
    assert torch.allclose(dn(r[:, :, perm], t, cond=c[:, perm]), out[:, :, perm], atol=1e-6)
    r2, c2 = r.clone(), c.clone()
    r2[:, :, 0] += 5.0
    c2[:, 0] += 1.0  # another variable's input and condition leave variable 1..4 unchanged
    assert torch.allclose(dn(r2, t, cond=c2)[:, :, 1:], out[:, :, 1:], atol=1e-6)
    assert not torch.allclose(dn(r2, t, cond=c2)[:, :, 0], out[:, :, 0])


def test_patchdn_rejects_a_wrong_condition_width():
    with pytest.raises(ValueError, match="cond"):
        _dn(12)(torch.randn(2, 12, 3), torch.rand(2), cond=torch.randn(2, 3, 4))


def test_antithetic_steps_pair_up_and_cover_the_schedule():
    g = torch.Generator().manual_seed(0)
    k = antithetic_steps(20000, 100, g)
    assert k.min() >= 1 and k.max() <= 100
    assert torch.equal(k[:10000] + k[10000:], torch.full((10000,), 101))
    counts = torch.bincount(k, minlength=101)[1:].double()
    assert counts.min() > 0.7 * 200 and counts.max() < 1.3 * 200  # uniform on 1..100 (200 expected each)


def test_the_default_schedule_is_the_papers():
    c = D3UConfig()
    s = DiscreteSchedule.linear(c.diffusion_steps, c.beta_start, c.beta_end)
    beta = torch.linspace(1e-4, 0.1, 100, dtype=torch.float64)
    assert c.diffusion_steps == 100 and c.prediction == "x0" and c.method == "dpmpp_2m" and c.steps == 20
    assert math.isclose(float(s.alphas_cumprod[-1]), float(torch.prod(1 - beta)), rel_tol=1e-9)
    assert 0.004 < float(s.alphas_cumprod[-1]) < 0.007  # the paper's alpha_bar_T ~ 0.0056


class _Linear(nn.Module):
    """A fixed forecaster: Ŷ = the context's last value repeated (no tokens)."""

    def __init__(self, H):
        super().__init__()
        self.H = H
        self.dummy = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return x[:, -1:].expand(-1, self.H, -1) + self.dummy


class _Net(nn.Module):
    def __init__(self, forecaster, denoiser):
        super().__init__()
        self.forecaster, self.denoiser = forecaster, denoiser


class _Const(nn.Module):
    """x0 prediction = a fixed tensor (broadcast), whatever the input."""

    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, r, t, *, cond):
        return self.value.expand_as(r).clone()


CFG = D3UConfig(context_length=8, horizon=6, condition="forecast", residual_scale=False)


def test_x0_loss_is_the_mse_of_the_residual_to_the_prediction():
    x, y = torch.randn(16, 8, 3), torch.randn(16, 6, 3)
    r0 = y - x[:, -1:]
    net = _Net(_Linear(6), _Const(torch.zeros(())))
    assert torch.allclose(residual_loss(net, CFG, x, y), (r0**2).mean(), rtol=1e-6)  # prediction 0: E[r0²]
    net = _Net(_Linear(6), _Const(torch.tensor(0.5)))
    assert torch.allclose(residual_loss(net, CFG, x, y), ((r0 - 0.5) ** 2).mean(), rtol=1e-6)


@pytest.mark.parametrize("method", ["dpmpp_2m", "ddim", "ddpm", "unipc", "heun"])
def test_residual_reconstruction_is_exact(method):
    """With the diffusion switched off (zero-initialised PatchDN) every sample is Ŷ; with an oracle x0
    denoiser that knows the residual, every sample is Ŷ + r0 = Y."""
    x, y = torch.randn(4, 8, 3), torch.randn(4, 6, 3)
    y_hat0 = x[:, -1:].expand(-1, 6, -1)
    off = _Net(_Linear(6), PatchDN(6, 6, 100, d_model=16, n_heads=2, t_embed_dim=32))
    y_hat, r = sample_residuals(off, CFG, x, 5, method=method, steps=20, generator=torch.Generator().manual_seed(0))
    assert torch.equal(y_hat, y_hat0) and torch.equal(r, torch.zeros_like(r))
    oracle = _Net(_Linear(6), _Const((y - y_hat0).repeat(5, 1, 1)))
    _, r = sample_residuals(oracle, CFG, x, 5, method=method, steps=20, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(y_hat0 + r, y.expand(5, -1, -1, -1), atol=1e-5)


class _GaussianPosteriorMean(nn.Module):
    """The exact x0 denoiser of r0 ~ N(0, s²): E[r0 | r_t] = a s² / (a² s² + σ²) · r_t on the path."""

    def __init__(self, path, s):
        super().__init__()
        self.path, self.s = path, s

    def forward(self, r, t, *, cond):
        a = self.path.alpha(t.double()).view(-1, 1, 1)
        sig = self.path.sigma(t.double()).view(-1, 1, 1)
        return (a * self.s**2 / (a * a * self.s**2 + sig * sig) * r.double()).to(r.dtype)


@pytest.mark.parametrize("method,steps", [("dpmpp_2m", 20), ("unipc", 20)])
def test_the_ode_samplers_recover_a_gaussian_residual_law(method, steps):
    """With the exact denoiser, the probability-flow samplers (D3U's default: DPM-Solver++, 20 steps) end at
    the residual's law N(0, s²) (measured: first-order DDIM ends 21 % under s² on 20 steps and 5 % under on all 100)."""
    s = 0.4
    path = DiscreteSchedule.linear(100, 1e-4, 0.1).as_path()
    net = _Net(_Linear(6), _GaussianPosteriorMean(path, s))
    _, r = sample_residuals(net, CFG, torch.zeros(1, 8, 2), 4000, method=method, steps=steps,
                            generator=torch.Generator().manual_seed(0))
    v = float(r.double().reshape(-1).var())
    assert abs(v / s**2 - 1) < 0.04, v  # 48k draws: sd of the ratio ~ 0.0065
    assert abs(float(r.double().mean())) < 0.01


def test_the_ancestral_chain_has_its_closed_form_variance():
    """DDPM on all 100 steps with the exact x0 denoiser of N(0, s²) is a linear Gaussian chain:
    ``Var_{k−1} = (c0 m_k + c_k)² Var_k + β̃_k`` from ``Var_T = 1 − ᾱ_T``, ``m_k = √ᾱ_k s²/(ᾱ_k s² + 1 − ᾱ_k)``.
    It ends below s² (the posterior variance β̃ ignores the uncertainty of x̂0; Bao et al. 2022): measured
    against that recursion, not against s²."""
    s = 0.4
    sched = DiscreteSchedule.linear(100, 1e-4, 0.1)
    var = 1 - float(sched.alpha_bar(100))
    for k in range(100, 0, -1):
        c0, ck, bt = (float(v) for v in sched.posterior(k))
        ab = float(sched.alpha_bar(k))
        m = math.sqrt(ab) * s**2 / (ab * s**2 + 1 - ab)
        var = (c0 * m + ck) ** 2 * var + bt
    net = _Net(_Linear(6), _GaussianPosteriorMean(sched.as_path(), s))
    _, r = sample_residuals(net, CFG, torch.zeros(1, 8, 2), 4000, method="ddpm", steps=100,
                            generator=torch.Generator().manual_seed(0))
    v = float(r.double().reshape(-1).var())
    assert var < 0.95 * s**2 and abs(v / var - 1) < 0.04, (v, var)
