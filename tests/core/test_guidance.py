"""Guidance transforms against closed forms on Gaussian data.

For ``x0 ~ N(m, diag(s²))`` the exact denoiser of any Gaussian path is
``D(x, t) = m + alpha s²/(alpha² s² + sigma²)·(x − alpha m)``.
"""

from __future__ import annotations

import math

import pytest
import torch

from scigen.core.guidance import (
    DualAscent,
    classifier_free,
    cost_gradient,
    dps,
    dynamic_threshold,
    inpainting,
    static_threshold,
)
from scigen.core.paths.linear import LinearPath
from scigen.core.paths.vp import VPCosine, VPLinear
from scigen.core.samplers import Denoiser, sample, time_grid

F64 = torch.float64


def gaussian_x0(path, m, s):
    m, s = torch.as_tensor(m, dtype=F64), torch.as_tensor(s, dtype=F64)

    def model(x, t):
        tb = t.reshape(-1, *([1] * (x.ndim - 1)))
        a, sg = path.alpha(tb), path.sigma(tb)
        return m + a * s**2 / (a**2 * s**2 + sg**2) * (x - a * m)

    return model


def prior(path, n, d, seed, t=1.0, m=None, s=None):
    """Draw x_t of Gaussian data N(m, s²) (default N(0, 1)) at time t."""
    g = torch.Generator().manual_seed(seed)
    m = torch.zeros(d, dtype=F64) if m is None else torch.as_tensor(m, dtype=F64)
    s = torch.ones(d, dtype=F64) if s is None else torch.as_tensor(s, dtype=F64)
    t = torch.tensor(t, dtype=F64)
    a, sg = path.alpha(t), path.sigma(t)
    return a * m + torch.sqrt(a**2 * s**2 + sg**2) * torch.randn(n, d, generator=g, dtype=F64)


# ------------------------------------------------------------------ classifier-free
def test_cfg_scale_0_and_1_give_uncond_and_cond():
    path = VPCosine()
    s = torch.tensor([0.5, 0.8], dtype=F64)
    mc, mu = torch.tensor([2.0, -1.0], dtype=F64), torch.tensor([-1.0, 0.5], dtype=F64)
    cond, unc = gaussian_x0(path, mc, s), gaussian_x0(path, mu, s)
    b = 3000
    x = prior(path, b, 2, seed=0, t=0.999, m=torch.zeros(2), s=s)
    grid = time_grid(30, "logsnr", path=path, t_max=0.999, dtype=F64)
    for scale, m_want in ((0.0, mu), (1.0, mc)):
        out = sample(cond, x, grid, path=path, prediction="x0", method="dpmpp_2m",
                     guidance=classifier_free(unc, scale))
        assert torch.all((out.mean(0) - m_want).abs() < 4 * s / math.sqrt(b) + 0.02), (scale, out.mean(0))
        assert torch.all((out.std(0) / s - 1).abs() < 0.06)


def test_cfg_mixing_at_x0_equals_the_w_form_on_eps():
    """Ho & Salimans (2022, Eq. 6): eps~ = (1 + w) eps_c − w eps_u with w = scale − 1."""
    path = VPLinear()
    cond = gaussian_x0(path, [1.0, 2.0], [0.5, 0.7])
    unc = gaussian_x0(path, [0.0, 0.0], [1.0, 1.0])

    def eps_of(fn):
        return lambda x, t: path.convert(fn(x, t), x, t, src="x0", dst="eps")

    x = torch.randn(5, 2, generator=torch.Generator().manual_seed(1), dtype=F64)
    t = torch.full((5,), 0.4, dtype=F64)
    w = 2.5
    guided = classifier_free(eps_of(unc), 1 + w)(Denoiser.from_model(eps_of(cond), path, "eps"))
    eps_tilde = (1 + w) * eps_of(cond)(x, t) - w * eps_of(unc)(x, t)
    torch.testing.assert_close(guided(x, t), path.convert(eps_tilde, x, t, src="eps", dst="x0"))


# ------------------------------------------------------------------ inpainting
@pytest.mark.parametrize("method", ["ddim", "dpmpp_2m", "heun", "unipc", "ddpm"])
@pytest.mark.parametrize("renoise", [False, True])
def test_inpainting_keeps_known_entries_exactly(method, renoise):
    path = LinearPath()
    m, s = torch.tensor([1.0, -1.0, 0.5], dtype=F64), torch.tensor([0.5, 0.4, 0.3], dtype=F64)
    b = 2000
    mask = torch.tensor([True, False, True])
    known = torch.tensor([0.7, 0.0, -0.2], dtype=F64)
    x = prior(path, b, 3, seed=2, m=m, s=s)
    n = 200 if method in ("ddim", "ddpm") else 30  # first-order methods need more steps
    out = sample(gaussian_x0(path, m, s), x, time_grid(n, "logsnr", path=path, dtype=F64), path=path,
                 prediction="x0", method=method, generator=torch.Generator().manual_seed(3),
                 guidance=inpainting(mask, known, renoise=renoise, generator=torch.Generator().manual_seed(4)))
    assert torch.equal(out[:, mask], known[mask].expand(b, 2))
    # independent coordinates: the free one keeps its marginal N(m1, s1²)
    assert abs(float(out[:, 1].mean()) - m[1]) < 4 * s[1] / math.sqrt(b) + 0.01
    assert abs(float(out[:, 1].std()) / s[1] - 1) < 0.07


def test_inpainting_bad_input():
    with pytest.raises(TypeError, match="mask"):
        inpainting(torch.ones(3), torch.zeros(3))
    with pytest.raises(ValueError, match="broadcast"):
        inpainting(torch.ones(3, dtype=torch.bool), torch.zeros(4))


# ------------------------------------------------------------------ cost gradient + dual ascent
def _toy(path, guidance, seed=5):
    m, s = torch.tensor([2.0, 2.0], dtype=F64), torch.tensor([0.5, 0.5], dtype=F64)
    x = prior(path, 1000, 2, seed=seed, m=m, s=s)
    return sample(gaussian_x0(path, m, s), x, time_grid(20, "logsnr", path=path, dtype=F64), path=path,
                  prediction="x0", method="ddim", guidance=guidance)


def objective(x0):  # pull towards (3, 3)
    return (x0 - 3.0).pow(2).sum(1)


def constraint(x0):  # "overlap": the first coordinate should stay below 2
    return torch.relu(x0[:, 0] - 2.0).pow(2)


def test_cost_gradient_reduces_the_cost():
    path = LinearPath()
    plain = _toy(path, None)
    guided = _toy(path, cost_gradient(objective, inner_steps=3, lr=0.05))
    assert float(objective(guided).mean()) < 0.5 * float(objective(plain).mean())
    guided_sgd = _toy(path, cost_gradient(objective, inner_steps=3, lr=0.1, optimizer="sgd"))
    assert float(objective(guided_sgd).mean()) < 0.7 * float(objective(plain).mean())


def test_dual_ascent_drives_the_constraint_to_its_target():
    path = LinearPath()
    target = 0.01
    fixed = cost_gradient(objective, constraint=constraint, alpha=0.1, inner_steps=5, lr=0.05)
    out_fixed = _toy(path, fixed)
    dual = cost_gradient(objective, constraint=constraint, alpha=0.1, inner_steps=5, lr=0.05,
                         dual_ascent=DualAscent(target=target, step=20.0))
    out_dual = _toy(path, dual)
    c_fixed, c_dual = float(constraint(out_fixed).mean()), float(constraint(out_dual).mean())
    assert abs(c_dual - target) < 0.3 * abs(c_fixed - target), (c_fixed, c_dual)
    alphas = [h["alpha"] for h in dual.history]
    assert alphas[-1] > 10 * 0.1  # the multiplier grew from 0.1 while the constraint was violated
    assert all(abs(h["alpha"] - 0.1) < 1e-12 for h in fixed.history)


def test_time_aware_objective_sees_the_sampler_times():
    path = LinearPath()
    grid = time_grid(20, "logsnr", path=path, dtype=F64)
    seen = []

    def late_objective(x0, t):  # only active close to the data (t <= 0.3)
        seen.append(t.detach().clone())
        return (x0 - 3.0).pow(2).sum(1) * (t <= 0.3).to(x0.dtype)

    m, s = torch.tensor([2.0, 2.0], dtype=F64), torch.tensor([0.5, 0.5], dtype=F64)
    x = prior(path, 1000, 2, seed=5, m=m, s=s)
    out = sample(gaussian_x0(path, m, s), x, grid, path=path, prediction="x0", method="ddim",
                 guidance=cost_gradient(late_objective, inner_steps=3, lr=0.05))
    assert all(t.shape == (1000,) for t in seen)
    called = sorted({round(float(t[0]), 12) for t in seen})
    expected = sorted(round(float(v), 12) for v in grid[:-1])  # every non-terminal grid time, once per inner step
    assert called == expected
    plain = _toy(path, None)
    assert float(objective(out).mean()) < 0.5 * float(objective(plain).mean())


def test_dual_ascent_updates_only_inside_its_t_range():
    path = LinearPath()
    g = cost_gradient(objective, constraint=constraint, alpha=0.1, inner_steps=2, lr=0.05,
                      dual_ascent=DualAscent(target=0.0, step=20.0, t_range=(0.0, 0.5)))
    _toy(path, g)
    early = [h for h in g.history if h["t"] > 0.5]
    late = [h for h in g.history if h["t"] <= 0.5]
    assert early and late
    assert all(abs(h["alpha"] - 0.1) < 1e-12 for h in early)
    assert late[-1]["alpha"] > 1.0
    with pytest.raises(ValueError, match="t_range"):
        DualAscent(t_range=(0.6, 0.2))


def test_cost_gradient_bad_input():
    with pytest.raises(ValueError, match="objective"):
        cost_gradient()
    with pytest.raises(ValueError, match="optimizer"):
        cost_gradient(objective, optimizer="lbfgs")
    with pytest.raises(ValueError, match="step"):
        DualAscent(target=0.0, step=-1.0)
    with pytest.raises(ValueError, match=r"shape \[B\]"):
        _toy(LinearPath(), cost_gradient(lambda x0: x0))
    with pytest.raises(TypeError, match=r"objective\(x0\) or objective\(x0, t\)"):
        cost_gradient(lambda x0, t, extra: x0.sum())


# ------------------------------------------------------------------ DPS
def test_dps_recovers_the_linear_gaussian_posterior_mean():
    """y = A x0 + N(0, r²), x0 ~ N(m, diag s²): posterior mean m + ΣAᵀ(AΣAᵀ + r²I)⁻¹(y − Am)."""
    path = VPLinear()
    m, s = torch.tensor([0.0, 1.0], dtype=F64), torch.tensor([1.0, 0.8], dtype=F64)
    a_mat = torch.tensor([[1.0, 1.0]], dtype=F64)
    r = 0.3
    y = torch.tensor([2.5], dtype=F64)
    cov = torch.diag(s**2)
    gain = cov @ a_mat.T @ torch.linalg.inv(a_mat @ cov @ a_mat.T + r**2 * torch.eye(1, dtype=F64))
    post_mean = m + (gain @ (y - a_mat @ m)).reshape(-1)
    b = 2000
    x = prior(path, b, 2, seed=6, m=m, s=s)
    out = sample(gaussian_x0(path, m, s), x, time_grid(200, "logsnr", path=path, dtype=F64), path=path,
                 prediction="x0", method="ddpm", generator=torch.Generator().manual_seed(7),
                 guidance=dps(lambda x0: x0 @ a_mat.T, y, zeta=1 / (2 * r**2), loss="squared"))
    shift = float((post_mean - m).norm())
    # DPS ignores Cov[x0 | x_t] and overshoots slightly towards y (measured: ~21% of the shift)
    assert float((out.mean(0) - post_mean).norm()) < 0.3 * shift, (out.mean(0), post_mean)
    # the measured combination is pulled to y (posterior of A x0 has mean near y, small spread)
    ax = out @ a_mat.T
    assert abs(float(ax.mean()) - float(a_mat @ post_mean)) < 0.15


def test_dps_needs_gradients_through_the_model():
    path = VPLinear()
    seen = []

    def model(x, t):
        seen.append(x.requires_grad)
        return gaussian_x0(path, [0.0], [1.0])(x, t)

    x = prior(path, 4, 1, seed=8)
    sample(model, x, time_grid(3, dtype=F64), path=path, prediction="x0", method="ddim",
           guidance=dps(lambda x0: x0, torch.zeros(1, dtype=F64), zeta=1.0))
    assert all(seen)
    with pytest.raises(ValueError, match="loss"):
        dps(lambda x0: x0, torch.zeros(1), zeta=1.0, loss="l1")


# ------------------------------------------------------------------ thresholding of x0
def _fixed(values):
    v = torch.tensor(values, dtype=F64)
    return Denoiser(lambda x, t: v.expand_as(x).clone(), LinearPath(), "x0")


def test_static_threshold_is_a_clamp():
    d = static_threshold(1.0)(_fixed([[0.5, 2.0, -4.0, 1.0]]))
    torch.testing.assert_close(d(torch.zeros(1, 4, dtype=F64), torch.ones(1, dtype=F64)),
                               torch.tensor([[0.5, 1.0, -1.0, 1.0]], dtype=F64))
    d = static_threshold(low=0.0, high=3.0)(_fixed([[0.5, 2.0, -4.0, 4.0]]))
    torch.testing.assert_close(d(torch.zeros(1, 4, dtype=F64), torch.ones(1, dtype=F64)),
                               torch.tensor([[0.5, 2.0, 0.0, 3.0]], dtype=F64))
    with pytest.raises(ValueError, match="low < high"):
        static_threshold(low=1.0, high=0.0)


def test_dynamic_threshold_matches_the_imagen_rule():
    import numpy as np

    vals = [[0.5, 2.0, -4.0, 1.0], [0.2, -0.5, 0.1, 0.0]]
    x, t = torch.zeros(2, 4, dtype=F64), torch.ones(2, dtype=F64)
    for p in (1.0, 0.5):
        out = dynamic_threshold(p)(_fixed(vals))(x, t)
        for row, got in zip(vals, out, strict=True):
            s = max(float(np.quantile(np.abs(row), p)), 1.0)  # numpy's linear quantile, floor 1
            expected = np.clip(row, -s, s) / s
            np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    with pytest.raises(ValueError, match="percentile"):
        dynamic_threshold(1.5)


def test_static_threshold_keeps_a_biased_eps_models_estimates_inside_the_data_box():
    """Data = ±1 with equal mass; an eps model with a constant bias of 0.3 gives x̂0 = E[x0|x_t] − 0.3·sigma/alpha,
    far outside [−1, 1] near t = 1. Clipped, every x̂0 the sampler steps toward and the result stay in the box."""
    path = VPCosine()

    def biased_eps(x, t):
        tb = t.reshape(-1, 1)
        a, s = path.alpha(tb), path.sigma(tb)
        x0 = torch.tanh(a * x / s**2)  # exact E[x0 | x_t] for x0 = ±1
        return (x - a * x0) / s + 0.3

    x = torch.randn(2000, 1, generator=torch.Generator().manual_seed(0), dtype=F64)
    grid = time_grid(50, "uniform", t_max=0.999, dtype=F64)
    runs = {}
    for name, guidance in (("raw", None), ("clipped", static_threshold(1.0))):
        seen = []
        out = sample(biased_eps, x, grid, path=path, prediction="eps", method="ddpm", guidance=guidance,
                     generator=torch.Generator().manual_seed(1), final_denoise=True,
                     callback=lambda i, t, xs, x0, seen=seen: seen.append(float(x0.abs().max())))
        runs[name] = (max(seen), float(out.abs().max()))
    assert runs["raw"][0] > 10.0, runs
    assert runs["clipped"][0] <= 1.0 + 1e-12 and runs["clipped"][1] <= 1.0 + 1e-12, runs
