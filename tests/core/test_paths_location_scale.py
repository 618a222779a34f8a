"""LocationScalePath with two variance sources (NsDiff's chain), against closed forms:
brute-force recursions, Monte Carlo marginals, joint-Gaussian conditioning, the DDPM and TMDM/CARD
posteriors, the exact score; denoising_loss on it; ddpm's Analytic-DPM reverse variance."""

from __future__ import annotations

import math

import pytest
import torch

from scigen.core.losses import denoising_loss
from scigen.core.paths import DiscreteSchedule, LocationScalePath, VPLinear
from scigen.core.samplers import sample

D = torch.float64


def _nsdiff(T=50, b0=1e-4, b1=0.3):
    sched = DiscreteSchedule.linear(T, b0, b1)
    return sched, LocationScalePath.nsdiff(sched)


def _k(k, T):
    return torch.tensor(k / T, dtype=D)


def _recursions(betas):
    """Brute force: Σ2_k = α_k Σ2_{k−1} + Σ1_k, Σ1_k = β_k² g + α_k β_k σ, for the g- and σ-coefficients."""
    G, B = [0.0], [0.0]
    for b in betas.tolist():
        a = 1 - b
        G.append(a * G[-1] + b * b)
        B.append(a * B[-1] + a * b)
    return torch.tensor(G, dtype=D), torch.tensor(B, dtype=D)


@pytest.mark.parametrize("T,b0,b1", [(20, 1e-4, 0.01), (100, 1e-4, 0.15), (1000, 1e-4, 0.02)])
def test_two_source_tables_match_the_recursion_and_sum_to_one_minus_alpha_bar(T, b0, b1):
    sched, path = _nsdiff(T, b0, b1)
    G, B = _recursions(sched.betas)
    A_tab, B_tab = path.tables
    torch.testing.assert_close(A_tab, G, rtol=1e-10, atol=1e-15)
    torch.testing.assert_close(B_tab, B, rtol=1e-10, atol=1e-15)
    assert bool((A_tab >= 0).all())  # the difference form of the reference code goes negative (issue #10)
    torch.testing.assert_close(A_tab[1:] + B_tab[1:], sched.one_minus_alphas_cumprod, rtol=1e-10, atol=1e-12)
    # at the grid times the path's coefficients are the tables, alpha is sqrt(ᾱ_k)
    k = torch.arange(T + 1)
    a, b = path.variance_coefficients(k.double() / T)
    torch.testing.assert_close(a, A_tab, rtol=1e-12, atol=1e-18)
    torch.testing.assert_close(path.base.alpha(k.double() / T) ** 2, sched.alpha_bar(k), rtol=1e-10, atol=1e-14)


def test_forward_marginal_of_the_two_source_chain_by_monte_carlo():
    torch.manual_seed(0)
    sched, path = _nsdiff(30, 1e-3, 0.2)
    n = 200_000
    y0, f, g, sig = 1.5, -0.5, 2.0, 0.3
    y = torch.full((n, 1), y0, dtype=D)
    fT, gT, sT = (torch.full((n, 1), v, dtype=D) for v in (f, g, sig))
    for k in range(1, sched.T + 1):  # simulate the one-step kernel of Ye et al. Eq. 5
        a, b = float(sched.alphas[k - 1]), float(sched.betas[k - 1])
        y = a**0.5 * y + (1 - a**0.5) * fT + (b * b * gT + a * b * sT).sqrt() * torch.randn(n, 1, dtype=D)
        if k in (1, 10, 30):
            t = _k(k, sched.T)
            var = float(path.variance(t, gT[:1], sT[:1]))
            mean = float(path.marginal(torch.full((1, 1), y0, dtype=D), t, fT[:1], gT[:1], torch.zeros(1, 1, dtype=D),
                                       var2=sT[:1]))
            assert float(y.mean()) == pytest.approx(mean, abs=4 * (var / n) ** 0.5)
            assert float(y.var()) == pytest.approx(var, rel=0.02)


def _joint(sched, path, k, m, v, f, g, sig):
    """Mean and covariance of (Y0, Y_{k−1}, Y_k) built from the one-step kernels (Y0 ~ N(m, v))."""
    T = sched.T
    ab1, a, b = float(sched.alpha_bar(k - 1)), float(sched.alphas[k - 1]), float(sched.betas[k - 1])
    S2 = float(path.variance(_k(k - 1, T), torch.tensor([g], dtype=D), torch.tensor([sig], dtype=D)))
    S1 = b * b * g + a * b * sig
    c01, v1 = ab1**0.5 * v, ab1 * v + S2
    mu = torch.tensor([m, ab1**0.5 * m + (1 - ab1**0.5) * f, 0.0], dtype=D)
    mu[2] = a**0.5 * mu[1] + (1 - a**0.5) * f
    C = torch.tensor([[v, c01, a**0.5 * c01], [c01, v1, a**0.5 * v1], [a**0.5 * c01, a**0.5 * v1, a * v1 + S1]], dtype=D)
    return mu, C


@pytest.mark.parametrize("k", [2, 7, 40])
def test_posterior_equals_gaussian_conditioning(k):
    sched, path = _nsdiff()
    m, v, f, g, sig = 0.7, 1.3, -0.4, 0.8, 1.9
    mu, C = _joint(sched, path, k, m, v, f, g, sig)
    idx = [0, 2]
    W = torch.linalg.solve(C[idx][:, idx], C[1, idx])
    y0, yk = 0.25, -1.1
    cond_mean = mu[1] + W @ (torch.tensor([y0, yk], dtype=D) - mu[idx])
    cond_var = C[1, 1] - W @ C[idx, 1]
    c0, ct, var = (float(x) for x in path.posterior(_k(k, 50), _k(k - 1, 50), torch.tensor([g], dtype=D),
                                                    torch.tensor([sig], dtype=D)))
    assert f + c0 * (y0 - f) + ct * (yk - f) == pytest.approx(float(cond_mean), abs=1e-12)
    assert var == pytest.approx(float(cond_var), rel=1e-10)


def test_one_source_unit_variance_posterior_is_ddpm_and_tmdm():
    """var = var2 = 1: Ho et al. 2020 Eq. 7 around mu, i.e. CARD/TMDM's γ's (Han et al. 2022, Eq. 9)."""
    sched, path = _nsdiff(100, 1e-4, 0.15)
    one = torch.ones(1, dtype=D)
    for k in (2, 50, 100):
        c0, ct, var = path.posterior(_k(k, 100), _k(k - 1, 100), one, one)
        r0, rk, rv = sched.posterior(k)
        torch.testing.assert_close(c0, r0.reshape(1), rtol=1e-9, atol=1e-12)
        torch.testing.assert_close(ct, rk.reshape(1), rtol=1e-9, atol=1e-12)
        torch.testing.assert_close(var, rv.reshape(1), rtol=1e-9, atol=1e-14)
        ab, ab1, a = sched.alpha_bar(k), sched.alpha_bar(k - 1), sched.alphas[k - 1]
        gamma2 = 1 + (ab.sqrt() - 1) * (a.sqrt() + ab1.sqrt()) / (1 - ab)  # CARD's f coefficient
        torch.testing.assert_close((1 - c0 - ct), gamma2.reshape(1), rtol=1e-9, atol=1e-12)
        torch.testing.assert_close(path.variance(_k(k, 100), one, one), (1 - ab).reshape(1), rtol=1e-10, atol=0)


def test_var2_from_posterior_variance_inverts_it():
    _, path = _nsdiff()
    g = torch.tensor([0.1, 1.0, 3.0, 0.5], dtype=D)
    sig = torch.tensor([0.05, 2.0, 0.7, 10.0], dtype=D)
    for k in (2, 10, 50):
        v = path.posterior(_k(k, 50), _k(k - 1, 50), g, sig)[2]
        torch.testing.assert_close(path.var2_from_posterior_variance(_k(k, 50), _k(k - 1, 50), v, g), sig,
                                   rtol=1e-8, atol=1e-10)
    with pytest.raises(ValueError, match="two-source"):
        LocationScalePath(VPLinear()).var2_from_posterior_variance(_k(2, 50), _k(1, 50), g, g)


def test_two_source_conversions_and_the_exact_score():
    sched, path = _nsdiff(40, 1e-4, 0.3)
    gen = torch.Generator().manual_seed(1)
    x0, eps, mu = (torch.randn(5, 3, generator=gen, dtype=D) for _ in range(3))
    var, var2 = 0.2 + torch.rand(5, 3, generator=gen, dtype=D), 0.3 + torch.rand(5, 3, generator=gen, dtype=D)
    k = torch.tensor([1, 5, 17, 30, 40])
    t = k.double() / 40
    a = sched.alpha_bar(k).sqrt()[:, None]
    S = path.variance(t, var, var2)
    x_t = path.marginal(x0, t, mu, var, eps, var2=var2)
    torch.testing.assert_close(x_t, mu + a * (x0 - mu) + S.sqrt() * eps)
    score = -eps / S.sqrt()
    for src, want in (("eps", eps), ("x0", x0), ("score", score)):
        torch.testing.assert_close(path.target(x0, eps, t, src, mu, var, var2=var2), want)
        for dst, got_want in (("eps", eps), ("x0", x0), ("score", score)):
            torch.testing.assert_close(path.convert(want, x_t, t, src, dst, mu, var, var2=var2), got_want)
    with pytest.raises(ValueError, match="velocity"):
        path.target(x0, eps, t, "velocity", mu, var, var2=var2)
    with pytest.raises(ValueError, match="var2"):
        path.marginal(x0, t, mu, var, eps)
    # Gaussian data x0 ~ N(m, s0²): E[eps | x_t] converts to the closed-form score of N(mean_t, var_t)
    m, s0 = 0.5, 1.2
    mean_t = a * m + (1 - a) * mu
    var_t = a**2 * s0**2 + S
    eps_hat = S.sqrt() * (x_t - mean_t) / var_t
    torch.testing.assert_close(path.convert(eps_hat, x_t, t, "eps", "score", mu, var, var2=var2), -(x_t - mean_t) / var_t)


def test_denoising_loss_on_a_location_scale_path_is_the_eps_mse():
    sched, path = _nsdiff(40, 1e-4, 0.3)
    gen = torch.Generator().manual_seed(2)
    x0, eps, mu = (torch.randn(6, 4, 2, generator=gen) for _ in range(3))
    var, var2 = 0.5 + torch.rand(6, 4, 2, generator=gen), 0.5 + torch.rand(6, 4, 2, generator=gen)
    t = torch.tensor([1, 3, 9, 20, 33, 40]) / 40.0
    w = torch.randn(2, 2, generator=gen)

    def net(x, tt):
        return (x - mu) @ w * tt[:, None, None]

    loss = denoising_loss(net, x0, path, "eps", t=t, noise=eps, mu=mu, var=var, var2=var2)
    a = sched.alpha_bar(torch.round(t * 40).long()).sqrt().float()[:, None, None]
    x_t = mu + a * (x0 - mu) + path.variance(t, var, var2).sqrt() * eps
    assert float(loss) == pytest.approx(float(((net(x_t, t) - eps) ** 2).mean()), rel=1e-5)
    with pytest.raises(ValueError, match="needs mu= and var="):
        denoising_loss(net, x0, path, "eps", t=t, noise=eps)
    with pytest.raises(ValueError, match="weighting"):
        denoising_loss(net, x0, path, "eps", weighting="min_snr", t=t, noise=eps, mu=mu, var=var, var2=var2)


def _gauss_eps(path, m, v):
    """The exact eps-prediction for x0 ~ N(m, v) on a VP path: sigma_t (x − alpha m)/(alpha² v + sigma²)."""

    def fn(x, t):
        a, s = path.alpha(t.double()).to(x)[:, None], path.sigma(t.double()).to(x)[:, None]
        return s * (x - a * m) / (a * a * v + s * s)

    return fn


def test_ddpm_eps_error_gives_the_exact_one_step_variance():
    """Γ(t) = Var(eps | x_t) for Gaussian data: the step variance is Var(x_s | x_t) of the joint Gaussian
    (without Γ: the posterior variance of q(x_s | x_t, x0), smaller by c0²·Var(x0 | x_t))."""
    sched = DiscreteSchedule.linear(50, 1e-4, 0.3)
    path = sched.as_path()
    m, v, n = 0.4, 2.5, 400_000
    for k in (2, 10, 50):
        t, s = _k(k, 50), _k(k - 1, 50)
        a_t, s_t, a_s, s_s = (float(f(x)) for f, x in ((path.alpha, t), (path.sigma, t), (path.alpha, s), (path.sigma, s)))
        var_t = a_t**2 * v + s_t**2
        gamma = 1 - s_t**2 / var_t
        c_ts = a_s * a_t * v + (a_t / a_s) * s_s**2  # Cov(x_s, x_t)
        exact = a_s**2 * v + s_s**2 - c_ts**2 / var_t
        x = torch.full((n, 1), 0.3, dtype=D)
        out = sample(_gauss_eps(path, m, v), x, torch.stack([t, s]), path=path, method="ddpm",
                     generator=torch.Generator().manual_seed(k), eps_error=lambda tt, g=gamma: torch.full_like(tt, g))
        assert float(out.var()) == pytest.approx(exact, rel=0.01)
        plain = sample(_gauss_eps(path, m, v), x, torch.stack([t, s]), path=path, method="ddpm",
                       generator=torch.Generator().manual_seed(k))
        var_ts = s_t**2 - (a_t / a_s) ** 2 * s_s**2
        assert float(plain.var()) == pytest.approx(var_ts * s_s**2 / s_t**2, rel=0.01)  # the posterior variance


def test_ddpm_eps_error_chain_samples_the_gaussian_law():
    """Exact denoiser + exact Γ_k: the whole chain ends at N(m, v); without Γ it under-disperses."""
    sched = DiscreteSchedule.linear(20, 1e-4, 0.5)
    path = sched.as_path()
    m, v, n = 0.7, 2.5, 40_000
    gen = torch.Generator().manual_seed(0)

    def gamma(t):
        a2, s2 = path.alpha(t) ** 2, path.sigma(t) ** 2
        return a2 * v / (a2 * v + s2)

    times = sched.time_grid()
    x1 = torch.randn(n, 1, generator=gen, dtype=D) * math.sqrt(float(path.alpha(times[0])) ** 2 * v
                                                              + float(path.sigma(times[0])) ** 2)
    x1 = x1 + float(path.alpha(times[0])) * m
    good = sample(_gauss_eps(path, m, v), x1, times, path=path, method="ddpm", generator=gen, eps_error=gamma)
    plain = sample(_gauss_eps(path, m, v), x1, times, path=path, method="ddpm", generator=gen)
    assert float(good.mean()) == pytest.approx(m, abs=0.04)
    assert float(good.var()) == pytest.approx(v, rel=0.03)
    assert float(plain.var()) < 0.85 * v
    with pytest.raises(TypeError, match="eps_error"):
        sample(_gauss_eps(path, m, v), x1[:2], times, path=path, method="ddpm", eps_error=0.5)
