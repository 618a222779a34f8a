"""Samplers against closed forms.

Gaussian data ``x0 ~ N(m, diag(s²))`` under any Gaussian path has the exact denoiser
``D(x, t) = m + alpha s²/(alpha² s² + sigma²)·(x − alpha m)`` and an affine probability-flow map
``x_t = alpha_t m + std_t·(x_u − alpha_u m)/std_u`` with ``std_t² = alpha_t² s² + sigma_t²``
(each coordinate keeps its standardised value). Every sampler driven by ``D`` must reproduce
these (deterministic ones per sample, stochastic ones in distribution).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from scigen.core.paths.linear import LinearPath
from scigen.core.paths.ve import VEPath
from scigen.core.paths.vp import VPCosine, VPLinear
from scigen.core.samplers import METHODS, likelihood, sample, time_grid

M = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
S = torch.tensor([0.5, 1.5, 0.3], dtype=torch.float64)


def _std(path, t):
    t = torch.as_tensor(t, dtype=torch.float64)
    return torch.sqrt(path.alpha(t) ** 2 * S**2 + path.sigma(t) ** 2)


def exact_x0(path):
    def model(x, t):
        assert t.shape == (x.shape[0],)
        tb = t.reshape(-1, 1)
        a, sg = path.alpha(tb), path.sigma(tb)
        return M + a * S**2 / (a**2 * S**2 + sg**2) * (x - a * M)

    return model


def exact_flow(path, x_u, u, t):
    """The probability-flow ODE solution at ``t`` started from ``x_u`` at ``u`` (closed form)."""
    au = path.alpha(torch.as_tensor(u, dtype=torch.float64))
    at = path.alpha(torch.as_tensor(t, dtype=torch.float64))
    return at * M + _std(path, t) * (x_u - au * M) / _std(path, u)


def prior_draw(path, t, n, seed):
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(n, 3, generator=g, dtype=torch.float64)
    a = path.alpha(torch.tensor(t, dtype=torch.float64))
    return a * M + _std(path, t) * z


def slope(ns, errs):
    return -np.polyfit(np.log(ns), np.log(errs), 1)[0]


# ------------------------------------------------------------------ convergence orders
@pytest.mark.parametrize("path", [VPCosine(), VPLinear()], ids=["cosine", "vp_linear"])
@pytest.mark.parametrize("method,order", [("euler", 1), ("heun", 2), ("rk4", 4), ("rk4_38", 4)])
def test_runge_kutta_orders(path, method, order):
    t_max, t_min = 0.999, 0.05
    x = prior_draw(path, t_max, 32, seed=0)
    ref = exact_flow(path, x, t_max, t_min)
    ns = [8, 16, 32, 64] if order < 4 else [6, 12, 24, 48]
    errs = []
    for n in ns:
        out = sample(exact_x0(path), x, time_grid(n, t_max=t_max, t_min=t_min, dtype=torch.float64),
                     path=path, prediction="x0", method=method)
        errs.append(float((out - ref).abs().max()))
    assert abs(slope(ns, errs) - order) < 0.35 * order, errs


@pytest.mark.parametrize("method,order", [("dpmpp_2m", 2), ("unipc", 3), ("ddim", 1)])
def test_exponential_integrator_orders(method, order):
    path, t_max, t_min = VPCosine(), 0.999, 0.05
    x = prior_draw(path, t_max, 32, seed=1)
    ref = exact_flow(path, x, t_max, t_min)
    ns = [16, 32, 64, 128]
    errs = []
    for n in ns:
        grid = time_grid(n, "logsnr", path=path, t_max=t_max, t_min=t_min, dtype=torch.float64)
        out = sample(exact_x0(path), x, grid, path=path, prediction="x0", method=method)
        errs.append(float((out - ref).abs().max()))
    assert abs(slope(ns[1:], errs[1:]) - order) < 0.3 * order, errs


@pytest.mark.parametrize("path", [VPCosine(), LinearPath()], ids=["cosine", "linear"])
def test_multistep_beats_euler_at_equal_nfe(path):
    x = prior_draw(path, 1.0, 64, seed=2)
    ref = exact_flow(path, x, 1.0, 0.0)
    grid = time_grid(10, "logsnr", path=path, dtype=torch.float64)
    err = {}
    for method in ("euler", "dpmpp_2m", "unipc"):
        out = sample(exact_x0(path), x, grid, path=path, prediction="x0", method=method)
        err[method] = float((out - ref).pow(2).mean().sqrt())
    assert err["dpmpp_2m"] < 0.5 * err["euler"], err
    assert err["unipc"] < 0.5 * err["euler"], err


def test_unipc_without_corrector_is_dpmpp_2m():
    """UniP-2 with rho = 1/2 and B(h) = e^h − 1 is algebraically DPM-Solver++(2M) (Zhao et al. 2023, §3.3)."""
    path = LinearPath()
    x = prior_draw(path, 0.95, 16, seed=3)
    grid = time_grid(20, "logsnr", path=path, t_max=0.95, t_min=0.02, dtype=torch.float64)
    a = sample(exact_x0(path), x, grid, path=path, prediction="x0", method="unipc", corrector=False)
    b = sample(exact_x0(path), x, grid, path=path, prediction="x0", method="dpmpp_2m")
    torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)


def test_ddim_eta0_is_deterministic_and_the_ode_limit():
    path = VPLinear()
    x = prior_draw(path, 1.0, 64, seed=4)
    ref = exact_flow(path, x, 1.0, 0.0)
    errs = []
    for n in (100, 400):
        grid = time_grid(n, "logsnr", path=path, dtype=torch.float64)
        outs = [sample(exact_x0(path), x, grid, path=path, prediction="x0", method="ddim", eta=0.0,
                       generator=torch.Generator().manual_seed(k)) for k in (0, 1)]
        torch.testing.assert_close(outs[0], outs[1], rtol=0, atol=0)
        errs.append(float((outs[0] - ref).abs().max()))
    assert errs[1] < 0.05 and 3.0 < errs[0] / errs[1] < 5.0, errs  # first order -> the ODE solution


@pytest.mark.parametrize("prediction", ["eps", "v", "velocity", "score"])
def test_prediction_kinds_are_converted_exactly(prediction):
    path = VPLinear()
    d = exact_x0(path)

    def model(x, t):
        return path.convert(d(x, t), x, t, src="x0", dst=prediction)

    x = prior_draw(path, 1.0, 32, seed=5)
    grid = time_grid(40, "logsnr", path=path, dtype=torch.float64)
    out = sample(model, x, grid, path=path, prediction=prediction, method="unipc")
    ref = exact_flow(path, x, 1.0, 0.0)
    assert float((out - ref).abs().max()) < 1e-2
    same = sample(d, x, grid, path=path, prediction="x0", method="unipc")
    torch.testing.assert_close(out, same, rtol=1e-8, atol=1e-8)


def test_per_sample_times():
    path = VPCosine()
    b = 8
    t_max = torch.where(torch.arange(b) % 2 == 0, 0.9, 0.6).to(torch.float64)
    u = torch.linspace(0, 1, 41, dtype=torch.float64)[:, None]
    times = t_max[None, :] * (1 - u) + 0.05 * u  # [41, B], each column its own grid
    g = torch.Generator().manual_seed(6)
    x = path.alpha(t_max)[:, None] * M + _std(path, t_max[:, None]) * torch.randn(b, 3, generator=g, dtype=torch.float64)
    out = sample(exact_x0(path), x, times, path=path, prediction="x0", method="rk4")
    ref = exact_flow(path, x, t_max[:, None], 0.05)
    assert float((out - ref).abs().max()) < 1e-5


# ------------------------------------------------------------------ distributions
DIST_CASES = [  # (id, method, options, path, steps)
    ("euler", "euler", {}, VPCosine(), 200),
    ("heun_edm", "heun", {"parameterization": "edm"}, VEPath(sigma_min=0.0), 40),
    ("rk4", "rk4", {}, LinearPath(), 20),
    ("ddim", "ddim", {}, VPLinear(), 100),
    ("dpmpp_2m", "dpmpp_2m", {}, VPCosine(), 25),
    ("unipc", "unipc", {}, LinearPath(), 25),
    ("ddpm", "ddpm", {}, VPCosine(), 200),
    ("ddim_eta1", "ddim", {"eta": 1.0}, VEPath(sigma_min=0.0), 200),
    ("euler_maruyama", "euler_maruyama", {}, VPLinear(), 400),
]


@pytest.mark.parametrize("method,opts,path,n", [c[1:] for c in DIST_CASES], ids=[c[0] for c in DIST_CASES])
def test_samplers_reproduce_the_gaussian_data_distribution(method, opts, path, n):
    b = 4000
    x = prior_draw(path, 1.0, b, seed=7)
    grid = time_grid(n, "logsnr", path=path, dtype=torch.float64)
    out = sample(exact_x0(path), x, grid, path=path, prediction="x0", method=method,
                 generator=torch.Generator().manual_seed(8), **opts)
    se = S / math.sqrt(b)
    assert torch.all((out.mean(0) - M).abs() < 4 * se + 0.02 * S), out.mean(0)
    ratio = out.std(0) / S
    assert torch.all((ratio - 1).abs() < 0.06), ratio
    corr = torch.corrcoef(out.T)
    assert float((corr - torch.eye(3, dtype=torch.float64)).abs().max()) < 0.07


def test_euler_in_edm_variables_is_ddim():
    """Euler on dy/dς = (y − D)/ς with y = x/alpha, ς = sigma/alpha is DDIM (Karras et al. 2022, §3)."""
    path = VPCosine()
    x = prior_draw(path, 0.99, 16, seed=18)
    grid = time_grid(12, "edm", path=path, t_max=0.99, dtype=torch.float64)
    a = sample(exact_x0(path), x, grid, path=path, prediction="x0", method="euler", parameterization="edm")
    b = sample(exact_x0(path), x, grid, path=path, prediction="x0", method="ddim")
    torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("times", [[1.0], [1.0, 0.0], [1.0, 0.6, 0.3, 0.0]])
def test_consistency_sampling_with_exact_consistency_function(times):
    path = VPCosine()

    def f(x, t):  # the exact consistency function: the PF-ODE map from (x, t) to t = 0
        return exact_flow(path, x, t.reshape(-1, 1), 0.0)

    b = 4000
    x = prior_draw(path, 1.0, b, seed=9)
    out = sample(f, x, torch.tensor(times, dtype=torch.float64), path=path, prediction="x0",
                 method="consistency", generator=torch.Generator().manual_seed(10))
    assert torch.all((out.mean(0) - M).abs() < 4 * S / math.sqrt(b))
    assert torch.all((out.std(0) / S - 1).abs() < 0.05)
    if len(times) > 2:  # the re-noising uses the generator
        other = sample(f, x, torch.tensor(times, dtype=torch.float64), path=path, prediction="x0",
                       method="consistency", generator=torch.Generator().manual_seed(11))
        assert not torch.allclose(out, other)


def test_final_step_into_sigma_zero_returns_alpha_x0_hat():
    """Ending exactly at t = 0 every method's last step is alpha(0)·D(x, t_prev) (no NaN from eps = 0/0)."""
    path = VPCosine()
    x = prior_draw(path, 0.999, 16, seed=12)
    grid = torch.tensor([0.999, 0.5, 0.0], dtype=torch.float64)
    for method in sorted(set(METHODS) - {"consistency"}):
        seen = {}

        def cb(i, t, xs, x0, seen=seen):
            seen[i] = (xs.clone(), t.clone())

        out = sample(exact_x0(path), x, grid, path=path, prediction="x0", method=method, callback=cb,
                     generator=torch.Generator().manual_seed(0))
        x_prev, t_prev = seen[1]
        torch.testing.assert_close(out, exact_x0(path)(x_prev, t_prev.expand(16)), msg=method)


# ------------------------------------------------------------------ callback, trajectory, progress
def test_callback_and_trajectory():
    path = LinearPath()
    x = prior_draw(path, 1.0, 5, seed=13)
    calls = []
    out, traj = sample(exact_x0(path), x, time_grid(7, dtype=torch.float64), path=path, prediction="x0",
                       method="heun", callback=lambda i, t, xs, x0: calls.append((i, t.shape, xs.shape, x0.shape)),
                       return_trajectory=True, progress=False)
    assert [c[0] for c in calls] == list(range(7))
    assert all(c[1] == (5,) and c[2] == (5, 3) and c[3] == (5, 3) for c in calls)
    assert traj.shape == (8, 5, 3)
    torch.testing.assert_close(traj[0], x)
    torch.testing.assert_close(traj[-1], out)


def test_progress_bar_runs():
    path = LinearPath()
    x = prior_draw(path, 1.0, 4, seed=14)
    out = sample(exact_x0(path), x, time_grid(3, dtype=torch.float64), path=path, prediction="x0",
                 method="euler", progress=True)
    assert torch.isfinite(out).all()


# ------------------------------------------------------------------ time grids
def test_time_grid_uniform_and_bounds():
    g = time_grid(4, t_max=0.9, t_min=0.1, dtype=torch.float64)
    torch.testing.assert_close(g, torch.tensor([0.9, 0.7, 0.5, 0.3, 0.1], dtype=torch.float64))


def test_edm_grid_follows_karras_noise_levels():
    """Karras et al. 2022, Eq. 5: sigma_i = (smax^(1/rho) + i/N (smin^(1/rho) − smax^(1/rho)))^rho."""
    path = VPLinear()
    n, t_min = 10, 1e-3
    g = time_grid(n, "edm", path=path, t_min=t_min, dtype=torch.float64)
    sig = path.sigma(g) / path.alpha(g)
    smax, smin = float(sig[0]), float(sig[-1])
    i = torch.arange(n + 1, dtype=torch.float64)
    want = (smax ** (1 / 7) + i / n * (smin ** (1 / 7) - smax ** (1 / 7))) ** 7
    torch.testing.assert_close(sig, want, rtol=1e-6, atol=0)
    # a VE path with the same rho: the EDM grid is uniform in t
    ve = VEPath(sigma_min=0.002, sigma_max=80.0, rho=7.0)
    torch.testing.assert_close(time_grid(8, "edm", path=ve, dtype=torch.float64),
                               torch.linspace(1, 0, 9, dtype=torch.float64), rtol=0, atol=1e-9)


def test_logsnr_grid_is_uniform_in_log_snr_and_reaches_zero():
    path = VPCosine()
    g = time_grid(12, "logsnr", path=path, dtype=torch.float64)
    assert g[0] == 1.0 and g[-1] == 0.0 and bool((g[1:] < g[:-1]).all())
    lam = path.log_snr(g[1:-1])  # both ends have infinite log-SNR and get a step of their own
    d = lam[1:] - lam[:-1]
    torch.testing.assert_close(d, d.mean().expand_as(d), rtol=1e-6, atol=1e-9)
    torch.testing.assert_close(path.sigma(g[-2]) / path.alpha(g[-2]), torch.tensor(0.002, dtype=torch.float64))


def test_time_grid_bad_input():
    with pytest.raises(ValueError, match="n_steps"):
        time_grid(0)
    with pytest.raises(ValueError, match="kind"):
        time_grid(4, "cosine")
    with pytest.raises(ValueError, match="path"):
        time_grid(4, "edm")
    with pytest.raises(ValueError, match="t_min"):
        time_grid(4, t_max=0.2, t_min=0.5)


# ------------------------------------------------------------------ likelihood
@pytest.mark.parametrize("divergence", ["exact", "hutchinson"])
def test_likelihood_of_gaussian_data_matches_closed_form(divergence):
    path = LinearPath()  # alpha(1) = 0, sigma(1) = 1: the prior at t = 1 is N(0, I)

    def velocity(x, t):  # exact: alpha' m + (alpha' alpha s² + sigma' sigma)/std² (x − alpha m)
        tb = t.reshape(-1, 1)
        a, sg, da, ds = path.alpha(tb), path.sigma(tb), path.d_alpha(tb), path.d_sigma(tb)
        return da * M + (da * a * S**2 + ds * sg) / (a**2 * S**2 + sg**2) * (x - a * M)

    g = torch.Generator().manual_seed(15)
    x = M + S * torch.randn(6, 3, generator=g, dtype=torch.float64)
    want = torch.distributions.Normal(M, S).log_prob(x).sum(1)
    if divergence == "exact":
        got = likelihood(velocity, x, rtol=1e-8, atol=1e-8)
        torch.testing.assert_close(got, want, rtol=0, atol=1e-5)
    else:  # unbiased estimate: average over independent probe draws
        got = torch.stack([likelihood(velocity, x, divergence="hutchinson", n_probes=8, rtol=1e-6, atol=1e-6,
                                      generator=torch.Generator().manual_seed(k)) for k in range(6)]).mean(0)
        torch.testing.assert_close(got, want, rtol=0, atol=0.15)


def test_likelihood_converts_other_predictions():
    path = VPLinear()
    x = M + S * torch.randn(4, 3, generator=torch.Generator().manual_seed(16), dtype=torch.float64)
    d = exact_x0(path)

    def eps_model(xt, t):
        return path.convert(d(xt, t), xt, t, src="x0", dst="eps")

    # VP linear at t = 1 has alpha = e^-5: prior N(alpha m, alpha² s² + sigma²) per coordinate
    one = torch.tensor(1.0, dtype=torch.float64)
    prior = torch.distributions.Normal(path.alpha(one) * M, _std(path, 1.0))
    got = likelihood(eps_model, x, path=path, prediction="eps", t0=1e-4, rtol=1e-8, atol=1e-8,
                     prior_log_prob=lambda z: prior.log_prob(z).sum(1))
    want = torch.distributions.Normal(path.alpha(torch.tensor(1e-4, dtype=torch.float64)) * M,
                                      _std(path, 1e-4)).log_prob(x).sum(1)
    torch.testing.assert_close(got, want, rtol=0, atol=1e-4)


# ------------------------------------------------------------------ bad input
def test_bad_input_is_reported_at_the_boundary():
    path = LinearPath()
    x = prior_draw(path, 1.0, 4, seed=17)
    grid = time_grid(4, dtype=torch.float64)
    model = exact_x0(path)
    with pytest.raises(ValueError, match="method"):
        sample(model, x, grid, path=path, method="leapfrog")
    with pytest.raises(ValueError, match="unknown option"):
        sample(model, x, grid, path=path, prediction="x0", method="euler", eta=0.5)
    with pytest.raises(ValueError, match="strictly decreasing"):
        sample(model, x, grid.flip(0), path=path, prediction="x0", method="euler")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        sample(model, x, grid * 2, path=path, prediction="x0", method="euler")
    with pytest.raises(ValueError, match="shape"):
        sample(lambda x, t: x[:, :2], x, grid, path=path, prediction="x0", method="euler")
    with pytest.raises(ValueError, match="prediction='x0'"):
        sample(model, x, grid, path=path, method="consistency")
    with pytest.raises(TypeError, match="x_init"):
        sample(model, x.numpy(), grid, path=path, prediction="x0")
    with pytest.raises(ValueError, match="eta"):
        sample(model, x, grid, path=path, prediction="x0", method="ddim", eta=2.0)
    with pytest.raises(ValueError, match=r"\[n\+1, B\]"):
        sample(model, x, grid[:, None].expand(-1, 3), path=path, prediction="x0")
    with pytest.raises(ValueError, match="t_max < 1"):
        sample(model, x, grid, path=path, prediction="x0", method="euler_maruyama")
    with pytest.raises(ValueError, match="prediction"):
        sample(model, x, grid, path=path, prediction="noise")
    with pytest.raises(ValueError, match="t_max < 1"):  # eps -> x0 divides by alpha(1) = 0
        sample(lambda x, t: x, x, grid, path=path, prediction="eps", method="ddim")


def test_float32_state_and_eps_model():
    path = VPLinear()
    d = exact_x0(path)
    x = prior_draw(path, 1.0, 256, seed=19)

    def eps_model(x32, t32):
        assert x32.dtype == torch.float32 and t32.dtype == torch.float32
        x64, t64 = x32.double(), t32.double()
        return path.convert(d(x64, t64), x64, t64, src="x0", dst="eps").float()

    out = sample(eps_model, x.float(), time_grid(40, "logsnr", path=path), path=path, method="dpmpp_2m")
    assert out.dtype == torch.float32
    assert float((out.double() - exact_flow(path, x, 1.0, 0.0)).abs().max()) < 0.05  # 40 steps, 2nd order


# ------------------------------------------------------------------ sampling in a linear subspace (project=)
def _zero_com(x):  # [B, N, 3]: remove the centre of mass (Hoogeboom et al. 2022, §3.2)
    return x - x.mean(dim=1, keepdim=True)


@pytest.mark.parametrize("method,path,n", [("ddpm", VPCosine(), 200), ("dpmpp_2m", VPCosine(), 25),
                                           ("euler_maruyama", VPLinear(), 300)])
def test_projected_sampling_reproduces_the_zero_com_gaussian(method, path, n):
    """Data x0 = P z, z ~ N(0, I) on N=5 points in 3-D: the covariance is P ⊗ I (diag 1 − 1/N, off −1/N)
    and the exact denoiser inside the subspace is alpha/(alpha² + sigma²)·x."""
    b, atoms = 4000, 5

    def model(x, t):
        tb = t.reshape(-1, 1, 1)
        a, s = path.alpha(tb), path.sigma(tb)
        return a / (a**2 + s**2) * x

    g = torch.Generator().manual_seed(3)
    x = path.sigma(torch.tensor(1.0, dtype=torch.float64)) * torch.randn(b, atoms, 3, generator=g, dtype=torch.float64)
    grid = time_grid(n, "logsnr", path=path, dtype=torch.float64)
    seen = []
    out = sample(model, x, grid, path=path, prediction="x0", method=method, project=_zero_com,
                 generator=torch.Generator().manual_seed(4), callback=lambda i, t, xs, x0: seen.append(xs))
    assert float(out.mean(1).abs().max()) < 1e-12
    assert all(float(s.mean(1).abs().max()) < 1e-12 for s in seen)
    flat = out[..., 0]  # the x coordinates of the 5 atoms: covariance P
    ratio = flat.std(0) / math.sqrt(1 - 1 / atoms)  # same tolerances as the unconstrained Gaussian test
    assert torch.all((ratio - 1).abs() < 0.06), ratio
    corr = torch.corrcoef(flat.T)  # P's correlation: -1/(N-1) off the diagonal
    expected = torch.full((atoms, atoms), -1.0 / (atoms - 1), dtype=torch.float64).fill_diagonal_(1.0)
    assert float((corr - expected).abs().max()) < 0.07, corr
    if method != "dpmpp_2m":  # stochastic: without the projection the noise leaves the subspace
        free = sample(model, _zero_com(x), grid, path=path, prediction="x0", method=method,
                      generator=torch.Generator().manual_seed(4))
        assert float(free.mean(1).abs().max()) > 0.05


def test_project_must_keep_the_shape():
    path = VPCosine()
    x = torch.zeros(4, 3, dtype=torch.float64)
    with pytest.raises(ValueError, match="project"):
        sample(exact_x0(path), x, time_grid(4, "logsnr", path=path, dtype=torch.float64), path=path,
               prediction="x0", method="ddim", project=lambda x: x[:, :2])
    with pytest.raises(TypeError, match="project"):
        sample(exact_x0(path), x, time_grid(4, "logsnr", path=path, dtype=torch.float64), path=path,
               prediction="x0", method="ddim", project=3)
