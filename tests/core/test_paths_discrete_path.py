"""``DiscreteSchedule.as_path()``: a discrete DDPM schedule as a continuous VP path, and every solver
of ``sample(...)`` on it, against closed forms.

Gaussian data ``x0 ~ N(m, diag(sd²))`` has the exact denoiser
``E[x0 | x_t] = m + alpha·sd²/(alpha²·sd² + sigma²)·(x_t − alpha·m)`` and an exact probability-flow
map: ``(x_t − alpha_t m)/sqrt(alpha_t² sd² + sigma_t²)`` is constant along the ODE, for any
interpolation of the schedule between its grid points. Deterministic solvers are checked sample by
sample against that map; stochastic ones by the mean and standard deviation of their output.
"""

import math

import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.core.paths import DiscreteSchedule, DiscreteSchedulePath, VPLinear
from scigen.core.samplers import DENOISER_METHODS, sample, time_grid

KINDS = {
    "linear": lambda T: DiscreteSchedule.linear(T),
    "cosine": lambda T: DiscreteSchedule.cosine(T),
    "polynomial": lambda T: DiscreteSchedule.polynomial(T, power=2.0, precision=1e-5),
}
F64 = torch.float64
M = torch.tensor([1.5, -0.5], dtype=F64)
SD = torch.tensor([0.5, 2.0], dtype=F64)


# ---------------------------------------------------------------------------------------- the path
@pytest.mark.parametrize("kind", KINDS)
def test_path_hits_the_schedule_at_every_step_and_is_variance_preserving(kind):
    sched = KINDS[kind](1000)
    path = sched.as_path()
    k = torch.arange(1001)
    t = k.to(F64) / 1000
    torch.testing.assert_close(path.alpha(t), sched.signal(k), rtol=1e-13, atol=0)
    torch.testing.assert_close(path.sigma(t), sched.noise(k), rtol=1e-12, atol=0)
    torch.testing.assert_close(path.log_alpha_bar(t), torch.log(sched.alpha_bar(k)), rtol=1e-12, atol=0)
    if kind == "polynomial":  # ᾱ_0 = 1 − precision: the path must not claim clean data at t = 0
        assert float(path.sigma(torch.tensor(0.0, dtype=F64))) == pytest.approx(math.sqrt(1e-5), rel=1e-9)
        assert math.isfinite(float(path.log_snr(torch.tensor(0.0, dtype=F64))))
    else:
        assert float(path.sigma(torch.tensor(0.0, dtype=F64))) == 0.0
    tt = torch.rand(10_000, generator=torch.Generator().manual_seed(0), dtype=F64)
    torch.testing.assert_close(path.alpha(tt) ** 2 + path.sigma(tt) ** 2, torch.ones_like(tt), rtol=0, atol=1e-15)
    assert path.alpha(t.float()).dtype == torch.float32  # the dtype of t


@pytest.mark.parametrize("kind", KINDS)
def test_interpolation_is_strictly_decreasing_and_c1(kind):
    path = KINDS[kind](1000).as_path()
    tt = torch.linspace(0, 1, 400_001, dtype=F64)
    ell = path.log_alpha_bar(tt)
    assert bool((ell[1:] < ell[:-1]).all())
    knots = torch.arange(1, 1000, dtype=F64) / 1000  # derivative continuous across every grid point
    eps = 1e-11
    torch.testing.assert_close(path.d_alpha(knots - eps), path.d_alpha(knots + eps), rtol=1e-5, atol=0)


@pytest.mark.parametrize("kind", KINDS)
def test_derivatives_match_finite_differences(kind):
    T = 1000
    path = KINDS[kind](T).as_path()
    g = torch.Generator().manual_seed(1)
    j = torch.randint(1, T, (400,), generator=g)  # segments away from a sigma = 0 end
    t = (j + 0.05 + 0.9 * torch.rand(400, generator=g, dtype=F64)) / T
    h = 1e-3 / T

    def fd(f):  # five-point stencil, O(h^4)
        return (-f(t + 2 * h) + 8 * f(t + h) - 8 * f(t - h) + f(t - 2 * h)) / (12 * h)

    torch.testing.assert_close(path.d_alpha(t), fd(path.alpha), rtol=1e-6, atol=1e-9)
    torch.testing.assert_close(path.d_sigma(t), fd(path.sigma), rtol=1e-6, atol=1e-9)
    # the forward SDE of the path: g² = d(sigma²)/dt − 2 f sigma² = −dℓ/dt > 0 for a VP path
    f, g2 = path.sde_coefficients(t)
    torch.testing.assert_close(g2, -fd(path.log_alpha_bar), rtol=1e-6, atol=0)


@pytest.mark.parametrize("kind", KINDS)
def test_log_snr_inverse_and_logsnr_grid(kind):
    path = KINDS[kind](1000).as_path()
    t = torch.rand(5000, generator=torch.Generator().manual_seed(2), dtype=F64).clamp_min(1e-6)
    torch.testing.assert_close(path.t_from_log_snr(path.log_snr(t)), t, rtol=0, atol=1e-12)
    grid = time_grid(20, "logsnr", path=path, dtype=F64)
    lam = path.log_snr(grid[1:-1])
    assert bool((grid[1:] < grid[:-1]).all())
    d = lam[1:] - lam[:-1]  # equal steps in log-SNR between the ends
    torch.testing.assert_close(d, d.mean().expand_as(d), rtol=1e-9, atol=0)


def test_path_agrees_with_the_continuous_vp_linear_limit():
    """DDPM's betas 1e-4..0.02 over T steps tend to VPLinear(0.1, 20) as T grows (Song et al. 2021, App. B)."""
    vp, t = VPLinear(0.1, 20.0), torch.linspace(0, 1, 101, dtype=F64)
    err = [float((DiscreteSchedule.linear(T, 0.1 / T, 20.0 / T).as_path().alpha(t) - vp.alpha(t)).abs().max())
           for T in (250, 1000, 4000)]
    assert err[0] > err[1] > err[2] and err[2] < 1e-3


def test_bad_inputs():
    with pytest.raises(TypeError, match="DiscreteSchedule"):
        DiscreteSchedulePath(VPLinear())
    with pytest.raises(InvalidInputError, match="n_steps"):
        DiscreteSchedule.linear(10).steps(0)
    with pytest.raises(ValueError, match="kind='discrete' needs path"):
        time_grid(10, "discrete", path=VPLinear())
    with pytest.raises(ValueError, match="t_max"):
        time_grid(10, "discrete", path=DiscreteSchedule.linear(10).as_path(), t_min=0.5)


# ---------------------------------------------------------------------------------------- the grid
def test_integer_grid():
    sched = DiscreteSchedule.polynomial(1000)
    assert sched.steps().tolist() == list(range(1000, -1, -1)) == sched.steps(1000).tolist() == sched.steps(5000).tolist()
    for n in (1, 4, 10, 50, 250):  # n divides T: the arithmetic grid
        assert sched.steps(n).tolist() == list(range(1000, -1, -1000 // n))
    uneven = sched.steps(37)
    gaps = uneven[:-1] - uneven[1:]
    assert uneven[0] == 1000 and uneven[-1] == 0 and uneven.numel() == 38 and set(gaps.tolist()) <= {27, 28}
    assert DiscreteSchedule.linear(10).steps(7).tolist() == [10, 9, 7, 6, 4, 3, 1, 0]  # round-half-even of 10 − 10i/7
    times = time_grid(37, "discrete", path=sched.as_path())
    assert times.dtype == F64 and torch.equal(times, uneven.to(F64) / 1000) and torch.equal(times, sched.time_grid(37))


# ---------------------------------------------------------------------------------------- sampling
def _exact_eps(path):
    def eps_fn(x, t):
        tb = t.double()[:, None]
        a, s = path.alpha(tb), path.sigma(tb)
        x0 = M + a * SD**2 / (a**2 * SD**2 + s**2) * (x.double() - a * M)
        return ((x.double() - a * x0) / s).to(x.dtype)

    return eps_fn


def _prior(sched, n, seed):
    """``x_T`` from the exact marginal of the data at ``t = 1`` (alpha(1) > 0 for all three kinds)."""
    g = torch.Generator().manual_seed(seed)
    x0 = M + SD * torch.randn(n, 2, generator=g, dtype=F64)
    k = torch.tensor(sched.T)
    return (sched.signal(k) * x0 + sched.noise(k) * torch.randn(n, 2, generator=g, dtype=F64)).float()


def _flow_map(sched, x_T):
    """Where the exact probability-flow ODE takes ``x_T``: ``m + sd·(x_T − a_1 m)/sqrt(a_1² sd² + s_1²)``."""
    k = torch.tensor(sched.T)
    a, s = sched.signal(k), sched.noise(k)
    return M + SD * (x_T.double() - a * M) / torch.sqrt(a**2 * SD**2 + s**2)


DETERMINISTIC = {"euler": 0.06, "heun": 0.03, "rk4": 0.03, "rk4_38": 0.03, "ddim": 0.2, "dpmpp_2m": 0.03,
                 "unipc": 0.03}
STOCHASTIC = ("ddpm", "euler_maruyama")


def test_every_method_is_covered():
    assert set(DETERMINISTIC) | set(STOCHASTIC) == set(DENOISER_METHODS)  # the fixed-grid ones (not dopri5)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", DETERMINISTIC)
def test_deterministic_methods_follow_the_exact_flow(kind, method):
    sched = KINDS[kind](1000)
    path = sched.as_path()
    x_T = _prior(sched, 2000, seed=0)
    out = sample(_exact_eps(path), x_T, sched.time_grid(100), path=path, method=method, progress=False,
                 final_denoise=True).double()
    err = float(((out - _flow_map(sched, x_T)).abs() / SD).max())
    assert err < DETERMINISTIC[method], err
    # and hence the data distribution (MC error of 2000 samples: mean ~0.07 sd, std ~1.6 %)
    assert float(((out.mean(0) - M) / SD).abs().max()) < 0.1
    assert float((out.std(0) / SD - 1).abs().max()) < 0.07


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", STOCHASTIC)
def test_stochastic_methods_reproduce_the_data_distribution(kind, method):
    sched = KINDS[kind](250)
    path = sched.as_path()
    n = 20_000
    out = sample(_exact_eps(path), _prior(sched, n, seed=1), sched.time_grid(), path=path, method=method,
                 generator=torch.Generator().manual_seed(2), progress=False, final_denoise=True).double()
    mc_mean, mc_std = 4 / math.sqrt(n), 4 / math.sqrt(2 * n)  # four MC standard errors (relative to sd)
    assert float(((out.mean(0) - M) / SD).abs().max()) < mc_mean
    assert float((out.std(0) / SD - 1).abs().max()) < mc_std + 0.015  # + discretisation of 250 steps


def test_ddpm_on_all_steps_is_exact_up_to_mc_error():
    """Ancestral DDPM with the exact denoiser over all T = 1000 steps of UniGEM's schedule. Its output law
    is Gaussian with moments from the linear recursion of the chain: mean exact, std low by 0.36 % (sd = 0.5)
    and 0.22 % (sd = 2), below the MC error of 20 000 samples (0.5 %)."""
    sched = KINDS["polynomial"](1000)
    path = sched.as_path()
    n = 20_000
    out = sample(_exact_eps(path), _prior(sched, n, seed=3), sched.time_grid(), path=path, method="ddpm",
                 generator=torch.Generator().manual_seed(4), progress=False, final_denoise=True).double()
    assert float(((out.mean(0) - M) / SD).abs().max()) < 4 / math.sqrt(n)
    assert float((out.std(0) / SD - 1).abs().max()) < 4 / math.sqrt(2 * n) + 0.004


def test_heun_gains_from_the_c1_interpolation():
    """Heun over all T steps: with a kinked (piecewise-linear log ᾱ) path its end-of-step slope belongs to the
    next segment and the error stalls near 1e-2; on the C¹ path it is second order again."""
    sched = KINDS["polynomial"](1000)
    path = sched.as_path()
    x_T = _prior(sched, 500, seed=5)
    out = sample(_exact_eps(path), x_T, sched.time_grid(), path=path, method="heun", progress=False,
                 final_denoise=True).double()
    assert float(((out - _flow_map(sched, x_T)).abs() / SD).max()) < 1e-3
