"""NsDiff's location-scale process: sums vs recursions, Monte Carlo marginals, exact posterior, TMDM reduction."""

from __future__ import annotations

import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.core.system import make_config
from scigen.timeseries.nsdiff import NsDiffConfig, NsDiffSchedule
from scigen.timeseries.nsdiff.process import reverse_step

D = torch.float64


def _recursions(betas):
    """Brute force: Σ2_k = α_k Σ2_{k−1} + Σ1_k for the g- and σ-coefficients separately."""
    G, B = [0.0], [0.0]
    for b in betas.tolist():
        a = 1 - b
        G.append(a * G[-1] + b * b)
        B.append(a * B[-1] + a * b)
    return torch.tensor(G, dtype=D), torch.tensor(B, dtype=D)


@pytest.mark.parametrize("T,b0,b1", [(20, 1e-4, 0.01), (100, 1e-4, 0.15), (1000, 1e-4, 0.02)])
def test_sums_match_the_recursion_and_stay_nonnegative(T, b0, b1):
    s = NsDiffSchedule.linear(T, b0, b1)
    G, B = _recursions(s.betas[1:])
    torch.testing.assert_close(s.G, G, rtol=1e-10, atol=1e-15)
    torch.testing.assert_close(s.btilde, B, rtol=1e-10, atol=1e-15)
    assert bool((s.G >= 0).all())
    # G + β̃ = 1 − ᾱ (so g = σ = 1 gives the DDPM variance)
    torch.testing.assert_close(s.G + s.btilde, 1 - s.alpha_bar, rtol=1e-10, atol=1e-12)


def test_reference_schedule_is_far_from_the_prior_and_config_rejects_it():
    ref = NsDiffSchedule.linear(20, 1e-4, 0.01)
    assert ref.alpha_bar_T == pytest.approx(0.9036, abs=1e-3)  # the released code's defaults
    with pytest.raises(InvalidInputError, match="alpha_bar_T"):
        make_config(NsDiffConfig, diffusion_steps=20, beta_end=0.01)
    assert NsDiffConfig(diffusion_steps=20, beta_end=0.01, prior_tolerance=1.0).diffusion_steps == 20
    assert NsDiffSchedule.linear(100, 1e-4, 0.15).alpha_bar_T < 1e-3  # our default reaches the prior


def test_forward_marginal_by_monte_carlo():
    torch.manual_seed(0)
    s = NsDiffSchedule.linear(30, 1e-3, 0.2)
    n = 200_000
    y0, f, g, sig = 1.5, -0.5, 2.0, 0.3
    y = torch.full((n,), y0, dtype=D)
    fT, gT, sT = (torch.full((n,), v, dtype=D) for v in (f, g, sig))
    for k in range(1, s.T + 1):  # simulate the one-step kernel
        a = float(s.alphas[k])
        y = a**0.5 * y + (1 - a**0.5) * fT + s.step_var(k, gT, sT).sqrt() * torch.randn(n, dtype=D)
        if k in (1, 10, 30):
            mean = float(s.marginal_mean(k, torch.tensor(y0, dtype=D), torch.tensor(f, dtype=D)))
            var = float(s.marginal_var(k, torch.tensor(g, dtype=D), torch.tensor(sig, dtype=D)))
            assert float(y.mean()) == pytest.approx(mean, abs=4 * (var / n) ** 0.5)
            assert float(y.var()) == pytest.approx(var, rel=0.02)


def _joint(s, k, m, v, f, g, sig):
    """Covariance of (Y0, Y_{k−1}, Y_k) and their means, built from the kernels (Y0 ~ N(m, v))."""
    ab1, a = float(s.alpha_bar[k - 1]), float(s.alphas[k])
    S2 = float(s.marginal_var(k - 1, torch.tensor(g, dtype=D), torch.tensor(sig, dtype=D)))
    S1 = float(s.step_var(k, torch.tensor(g, dtype=D), torch.tensor(sig, dtype=D)))
    c01 = ab1**0.5 * v
    v1 = ab1 * v + S2
    mu = torch.tensor([m, ab1**0.5 * m + (1 - ab1**0.5) * f, 0.0], dtype=D)
    mu[2] = a**0.5 * mu[1] + (1 - a**0.5) * f
    C = torch.tensor([[v, c01, a**0.5 * c01], [c01, v1, a**0.5 * v1],
                      [a**0.5 * c01, a**0.5 * v1, a * v1 + S1]], dtype=D)
    return mu, C


@pytest.mark.parametrize("k", [2, 7, 40])
def test_posterior_coefficients_equal_gaussian_conditioning(k):
    s = NsDiffSchedule.linear(50, 1e-4, 0.3)
    m, v, f, g, sig = 0.7, 1.3, -0.4, 0.8, 1.9
    mu, C = _joint(s, k, m, v, f, g, sig)
    # condition Y_{k−1} on (Y0, Y_k): mean = mu1 + C[1,(0,2)] C[(0,2),(0,2)]^-1 (x − mu_(0,2))
    idx = [0, 2]
    W = torch.linalg.solve(C[idx][:, idx], C[1, idx])
    y0, yk = 0.25, -1.1
    cond_mean = mu[1] + W @ (torch.tensor([y0, yk], dtype=D) - mu[idx])
    cond_var = C[1, 1] - W @ C[idx, 1]
    g0, g1, g2, var = (float(t) for t in s.posterior(k, torch.tensor(g, dtype=D), torch.tensor(sig, dtype=D)))
    assert g0 * y0 + g1 * yk + g2 * f == pytest.approx(float(cond_mean), abs=1e-12)
    assert var == pytest.approx(float(cond_var), rel=1e-10)
    assert g0 + g1 + g2 == pytest.approx(1.0, abs=1e-12)  # the (sqrt(alpha) − 1) form; (alpha − 1) fails this


@pytest.mark.parametrize("k", [3, 25])
def test_reverse_step_with_the_exact_eps_is_the_exact_conditional_mean(k):
    """Gaussian data: E[ε | Y_k] is known, so the step mean must equal E[Y_{k−1} | Y_k] exactly."""
    s = NsDiffSchedule.linear(50, 1e-4, 0.3)
    m, v, f, g, sig = 0.7, 1.3, -0.4, 0.8, 1.9
    mu, C = _joint(s, k, m, v, f, g, sig)
    yk = torch.tensor([-1.1, 0.0, 2.5], dtype=D)
    S2k = float(s.marginal_var(k, torch.tensor(g, dtype=D), torch.tensor(sig, dtype=D)))
    eps = S2k**0.5 * (yk - mu[2]) / C[2, 2]  # E[ε | Y_k]
    true_mean = mu[1] + C[1, 2] / C[2, 2] * (yk - mu[2])
    ft, gt, st = (torch.full_like(yk, x) for x in (f, g, sig))
    var_true = s.posterior(k, gt, st)[3]
    for source in ("denoiser", "g"):
        gg = st if source == "g" else gt  # with sigma_source="g" the step uses s = g, so give it g = sigma
        args = (ft, gg if source == "g" else gt)
        if source == "g":
            # g = sigma: then the process has Σ2 = (G + β̃)·sigma and the exact eps changes accordingly
            mu2, C2 = _joint(s, k, m, v, f, sig, sig)
            eps = float(s.marginal_var(k, st[:1], st[:1])) ** 0.5 * (yk - mu2[2]) / C2[2, 2]
            true_mean = mu2[1] + C2[1, 2] / C2[2, 2] * (yk - mu2[2])
        mean, var, _ = reverse_step(s, k, yk, *args, eps, var_true, sigma_source=source)
        torch.testing.assert_close(mean, true_mean, rtol=1e-9, atol=1e-9)


def test_sigma_root_inverts_the_posterior_variance():
    s = NsDiffSchedule.linear(50, 1e-4, 0.3)
    g = torch.tensor([0.1, 1.0, 3.0, 0.5], dtype=D)
    sig = torch.tensor([0.05, 2.0, 0.7, 10.0], dtype=D)
    for k in (2, 10, 50):
        v = s.posterior(k, g, sig)[3]
        torch.testing.assert_close(s.sigma_from_posterior_var(k, g, v), sig, rtol=1e-8, atol=1e-10)


def test_g_equal_sigma_equal_one_is_tmdm():
    """With g = σ = 1 the coefficients are CARD/TMDM's closed forms (Han et al. 2022, Eq. 9)."""
    s = NsDiffSchedule.linear(100, 1e-4, 0.15)
    one = torch.ones((), dtype=D)
    for k in (2, 50, 100):
        ab, ab1, a, b = s.alpha_bar[k], s.alpha_bar[k - 1], s.alphas[k], s.betas[k]
        g0, g1, g2, var = s.posterior(k, one, one)
        torch.testing.assert_close(s.marginal_var(k, one, one), 1 - ab)
        torch.testing.assert_close(g0, b * ab1.sqrt() / (1 - ab))
        torch.testing.assert_close(g1, (1 - ab1) * a.sqrt() / (1 - ab))
        torch.testing.assert_close(g2, 1 + (ab.sqrt() - 1) * (a.sqrt() + ab1.sqrt()) / (1 - ab))
        torch.testing.assert_close(var, (1 - ab1) / (1 - ab) * b)


@pytest.mark.parametrize("k", [2, 10, 50])
def test_reverse_variance_with_the_eps_error_is_the_exact_conditional_variance(k):
    """Analytic-DPM term: with Γ_k = Var(ε | Y_k), the step variance is Var(Y_{k−1} | Y_k) of the joint Gaussian;
    the paper's posterior variance alone (Γ = 0) is smaller (it ignores the uncertainty of Y0)."""
    s = NsDiffSchedule.linear(50, 1e-4, 0.3)
    m, v, f, g, sig = 0.7, 1.3, -0.4, 0.8, 1.9
    mu, C = _joint(s, k, m, v, f, g, sig)
    S2k = float(s.marginal_var(k, torch.tensor(g, dtype=D), torch.tensor(sig, dtype=D)))
    gamma = 1 - S2k / float(C[2, 2])  # Var(ε | Y_k): Cov(ε, Y_k) = sqrt(Σ2_k)
    exact = float(C[1, 1] - C[1, 2] ** 2 / C[2, 2])
    yk = torch.tensor([0.3], dtype=D)
    eps = S2k**0.5 * (yk - mu[2]) / C[2, 2]
    ft, gt, st = (torch.full_like(yk, x) for x in (f, g, sig))
    var_post = s.posterior(k, gt, st)[3]
    _, var, _ = reverse_step(s, k, yk, ft, gt, eps, var_post, eps_error=gamma)
    assert float(var) == pytest.approx(exact, rel=1e-9)
    _, var0, _ = reverse_step(s, k, yk, ft, gt, eps, var_post)
    assert float(var0) < exact - 1e-6


@pytest.mark.parametrize("mode", ["nsdiff", "tmdm"])
def test_whole_chain_with_the_exact_denoiser_samples_the_data_law(mode):
    """Y0 ~ N(f, v) with g = σ = v (TMDM: 1): exact ε̂ and Γ_k give N(f, v); without Γ_k the chain under-disperses."""
    s = NsDiffSchedule.linear(20, 1e-4, 0.5)
    gen = torch.Generator().manual_seed(0)
    n, fv, v = 40000, 0.7, 2.5
    f = torch.full((n, 1), fv, dtype=D)
    g = torch.ones_like(f) if mode == "tmdm" else torch.full_like(f, v)
    out = {}
    for corrected in (True, False):
        y = f + g.sqrt() * torch.randn(f.shape, generator=gen, dtype=D)
        for k in range(s.T, 0, -1):
            S2 = s.marginal_var(k, g, g)
            ab = float(s.alpha_bar[k])
            eps = S2.sqrt() * (y - f) / (ab * v + S2)
            gamma = float((ab * v / (ab * v + S2))[0]) if corrected else 0.0
            mean, var, _ = reverse_step(s, k, y, f, g, eps, s.posterior(k, g, g)[3], tmdm=mode == "tmdm",
                                        eps_error=gamma)
            y = mean if k == 1 else mean + var.sqrt() * torch.randn(f.shape, generator=gen, dtype=D)
        out[corrected] = (float(y.mean()), float(y.var()))
    assert out[True][0] == pytest.approx(fv, abs=0.03)
    assert out[True][1] == pytest.approx(v, rel=0.03)  # MC sd of the variance ≈ 0.7 %
    assert out[False][1] < 0.85 * v  # the paper's reverse variance: ≈ 1.9-2.0 here
