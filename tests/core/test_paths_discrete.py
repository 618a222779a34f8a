"""Discrete DDPM schedules, the sum-of-products helper and time-convention converters."""

import math

import numpy as np
import pytest
import torch

from scigen.core.paths import (
    DiscreteSchedule,
    LinearPath,
    VPPolynomial,
    flip_time,
    reverse_velocity,
    step_to_time,
    sum_of_products,
    time_to_step,
)


def test_linear_alphas_cumprod_is_the_direct_product_and_positive():
    sched = DiscreteSchedule.linear(1000)
    betas = np.linspace(1e-4, 0.02, 1000)
    direct = np.array([np.prod(1 - betas[: k + 1]) for k in range(1000)])
    np.testing.assert_allclose(sched.alphas_cumprod.numpy(), direct, rtol=1e-10)
    assert bool((sched.alphas_cumprod > 0).all()) and bool((sched.one_minus_alphas_cumprod > 0).all())
    np.testing.assert_allclose(sched.one_minus_alphas_cumprod.numpy(), 1 - direct, rtol=1e-9)
    assert sched.alpha_bar(torch.tensor(0)) == 1.0 and sched.noise(torch.tensor(0)) == 0.0


def test_cosine_matches_closed_form_where_unclipped():
    T, s = 1000, 0.008
    sched = DiscreteSchedule.cosine(T, s=s)
    k = np.arange(1, T + 1)
    f = np.cos((k / T + s) / (1 + s) * np.pi / 2) ** 2 / np.cos(s / (1 + s) * np.pi / 2) ** 2
    unclipped = sched.betas.numpy() < 0.999
    np.testing.assert_allclose(sched.alphas_cumprod.numpy()[unclipped], f[unclipped], rtol=1e-9)
    assert not unclipped[-1] and unclipped[:-5].all()  # only the last steps hit max_beta
    assert bool((sched.alphas_cumprod > 0).all())


def _hoogeboom_polynomial(T, s, power):
    """EDM-for-molecules polynomial schedule (Hoogeboom et al. 2022, App. B), straight from its definition."""
    x = np.arange(T + 1) / T
    a2 = (1 - x**power) ** 2
    steps = np.clip(a2 / np.concatenate([[1.0], a2[:-1]]), 0.001, 1.0)
    return (1 - 2 * s) * np.cumprod(steps) + s


def test_polynomial_2_matches_reference_table_and_continuous_path():
    T = 1000
    sched = DiscreteSchedule.polynomial(T, power=2.0, precision=1e-5)
    ref = _hoogeboom_polynomial(T, 1e-5, 2.0)
    np.testing.assert_allclose(sched.alpha_bar(torch.arange(T + 1)).numpy(), ref, rtol=1e-10)
    assert bool((sched.noise(torch.arange(T + 1)) > 0).all())
    cont = VPPolynomial(2.0, 1e-5)
    k = torch.arange(0, T - 20)  # away from the discrete ratio clipping at the very end
    np.testing.assert_allclose(cont.alpha(k.double() / T).numpy() ** 2, ref[: T - 20], rtol=1e-9)


def test_discrete_linear_approximates_continuous_vp():
    from scigen.core.paths import VPLinear

    sched, vp = DiscreteSchedule.linear(1000), VPLinear(0.1, 20.0)
    k = torch.arange(0, 1001, 50)
    lhs = torch.log(sched.alpha_bar(k))
    rhs = 2 * vp.log_alpha(k.double() / 1000)
    # log(1 - b) = -b - b^2/2 - ...: the discrete chain loses at most sum b^2 (< 0.15) in log-space
    assert float((lhs - rhs).abs().max()) < 0.15


def test_posterior_coefficients_by_gaussian_conditioning():
    sched = DiscreteSchedule.linear(50, 1e-3, 0.2)
    for k in (1, 7, 50):
        kt = torch.tensor(k)
        ab_prev, a_k = float(sched.alpha_bar(kt - 1)), float(sched.alphas[k - 1])
        # joint of (x_{k-1}, x_k) given x0 from the two-step construction
        v11 = 1 - ab_prev
        v12 = math.sqrt(a_k) * v11
        v22 = a_k * v11 + float(sched.betas[k - 1])
        ck_ref = v12 / v22
        c0_ref = math.sqrt(ab_prev) - ck_ref * math.sqrt(ab_prev * a_k)
        c0, ck, var = sched.posterior(kt)
        assert math.isclose(float(ck), ck_ref, rel_tol=1e-10) and math.isclose(
            float(c0), c0_ref, rel_tol=1e-9, abs_tol=1e-14
        )
        assert math.isclose(float(var), v11 - v12**2 / v22, rel_tol=1e-9, abs_tol=1e-15)


def test_sum_of_products_brute_force_and_ddpm_identity():
    g = torch.Generator().manual_seed(0)
    w, f = (
        torch.rand(12, generator=g, dtype=torch.float64),
        0.5 + torch.rand(12, generator=g, dtype=torch.float64),
    )
    for inclusive in (False, True):
        ref = [
            sum(
                float(w[s]) * math.prod(float(f[j]) for j in range(s + (0 if inclusive else 1), t + 1))
                for s in range(t + 1)
            )
            for t in range(12)
        ]
        np.testing.assert_allclose(sum_of_products(w, f, inclusive=inclusive).numpy(), ref, rtol=1e-12)
    sched = DiscreteSchedule.linear(1000)
    # 1 - abar_t = alpha_t (1 - abar_{t-1}) + beta_t  =>  sum_s beta_s prod_{j>s} alpha_j = 1 - abar_t
    np.testing.assert_allclose(
        sum_of_products(sched.betas, sched.alphas).numpy(), sched.one_minus_alphas_cumprod.numpy(), rtol=1e-10
    )


def test_time_conventions():
    k = torch.arange(0, 11)
    torch.testing.assert_close(time_to_step(step_to_time(k, 10), 10), k)
    assert (
        int(time_to_step(torch.tensor(0.26), 10, "floor")) == 2
        and int(time_to_step(torch.tensor(0.21), 10, "ceil")) == 3
    )
    torch.testing.assert_close(flip_time(flip_time(torch.tensor([0.2, 0.9]))), torch.tensor([0.2, 0.9]))
    # Lipman convention: x_s = s*data + (1 - s)*noise, u = data - noise; ours: velocity = noise - data
    data, noise = torch.randn(5, 2), torch.randn(5, 2)
    t = torch.rand(5)

    def u_lipman(x, s):
        return data - noise

    ours = LinearPath().target(data, noise, t, "velocity")
    torch.testing.assert_close(reverse_velocity(u_lipman)(torch.zeros(5, 2), t), ours)


def test_bad_inputs():
    with pytest.raises(ValueError, match="betas"):
        DiscreteSchedule(torch.tensor([0.1, 1.5]))
    with pytest.raises(ValueError, match="T"):
        DiscreteSchedule.linear(0)
    with pytest.raises(ValueError, match="k must lie"):
        DiscreteSchedule.linear(10).alpha_bar(torch.tensor(11))
    with pytest.raises(TypeError, match="integer"):
        DiscreteSchedule.linear(10).alpha_bar(torch.tensor(0.5))
    with pytest.raises(ValueError, match="positive"):
        sum_of_products(torch.ones(3), torch.tensor([1.0, 0.0, 1.0]))
    with pytest.raises(ValueError, match="rounding"):
        time_to_step(torch.tensor(0.5), 10, "nearest")
