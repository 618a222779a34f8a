"""Gaussian paths against closed forms: conversions, Gaussian-data scores, derivatives, endpoints."""

import itertools
import math

import pytest
import torch

from scigen.core.paths import (
    PREDICTION_KINDS,
    GaussianPath,
    LinearPath,
    OTCFMPath,
    VEPath,
    VPCosine,
    VPLinear,
    VPPolynomial,
)

pytestmark = pytest.mark.usefixtures("float64_default")


PATHS = {
    "vp_linear": VPLinear(),
    "vp_cosine": VPCosine(),
    "vp_poly": VPPolynomial(power=2.0, precision=1e-5),
    "ve_geometric": VEPath(0.002, 80.0, "geometric"),
    "ve_karras": VEPath(0.002, 80.0, "karras", rho=7.0),
    "linear": LinearPath(),
    "otcfm": OTCFMPath(sigma_min=0.01),
}


def _expected(path, x0, eps, t, kind):
    """Targets straight from the definitions in docs/engine-api.md."""
    tb = t[:, None]
    a, s = path.alpha(tb), path.sigma(tb)
    return {
        "eps": eps,
        "x0": x0,
        "v": a * eps - s * x0,
        "velocity": path.d_alpha(tb) * x0 + path.d_sigma(tb) * eps,
        "score": -eps / s,
    }[kind]


@pytest.mark.parametrize("name", PATHS)
def test_conversions_every_pair(name):
    path = PATHS[name]
    g = torch.Generator().manual_seed(0)
    x0, eps = torch.randn(6, 3, generator=g), torch.randn(6, 3, generator=g)
    t = torch.linspace(0.05, 0.95, 6)
    x_t = path.marginal(x0, t, eps)
    for src, dst in itertools.product(PREDICTION_KINDS, PREDICTION_KINDS):
        pred = _expected(path, x0, eps, t, src)
        out = path.convert(pred, x_t, t, src=src, dst=dst)
        torch.testing.assert_close(out, _expected(path, x0, eps, t, dst), rtol=1e-9, atol=1e-9)
        back = path.convert(out, x_t, t, src=dst, dst=src)
        torch.testing.assert_close(back, pred, rtol=1e-9, atol=1e-9)
        torch.testing.assert_close(path.target(x0, eps, t, dst), _expected(path, x0, eps, t, dst))


@pytest.mark.parametrize("name", PATHS)
def test_exact_eps_of_gaussian_data_gives_closed_form_score(name):
    path = PATHS[name]
    m, s0 = 0.7, 1.3
    t = torch.tensor([0.1, 0.4, 0.8])
    x_t = torch.randn(3, 5, generator=torch.Generator().manual_seed(1)) * 3
    a, s = path.alpha(t)[:, None], path.sigma(t)[:, None]
    var_t = a**2 * s0**2 + s**2
    eps_hat = s * (x_t - a * m) / var_t  # E[eps | x_t] for x0 ~ N(m, s0^2)
    score = path.convert(eps_hat, x_t, t, src="eps", dst="score")
    torch.testing.assert_close(score, -(x_t - a * m) / var_t)
    x0_hat = path.convert(eps_hat, x_t, t, src="eps", dst="x0")
    torch.testing.assert_close(x0_hat, m + a * s0**2 * (x_t - a * m) / var_t)


@pytest.mark.parametrize("name", PATHS)
def test_derivatives_match_autograd_and_finite_differences(name):
    path = PATHS[name]
    t = torch.linspace(0.02, 0.98, 25, requires_grad=True)
    for f, df in ((path.alpha, path.d_alpha), (path.sigma, path.d_sigma)):
        out = f(t)
        grad = torch.autograd.grad(out.sum(), t)[0] if out.requires_grad else torch.zeros_like(t)  # constant
        torch.testing.assert_close(df(t.detach()), grad, rtol=1e-8, atol=1e-10)
        h = 1e-6
        fd = (f(t.detach() + h) - f(t.detach() - h)) / (2 * h)
        torch.testing.assert_close(df(t.detach()), fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["vp_linear", "vp_cosine", "vp_poly"])
def test_vp_paths_preserve_variance(name):
    t = torch.linspace(0, 1, 101)
    path = PATHS[name]
    torch.testing.assert_close(path.alpha(t) ** 2 + path.sigma(t) ** 2, torch.ones(101), rtol=0, atol=1e-12)


def test_endpoints():
    zero, one = torch.tensor(0.0), torch.tensor(1.0)
    lin = VPLinear()
    assert lin.alpha(zero) == 1 and lin.sigma(zero) == 0
    for p in PATHS.values():  # samplers rely on log_snr = +inf where sigma = 0 (never NaN)
        assert not bool(torch.isnan(p.log_snr(torch.tensor([0.0, 1.0]))).any())
    assert VPLinear().log_snr(zero) == math.inf and LinearPath().log_snr(zero) == math.inf
    assert math.isclose(float(lin.alpha(one)), math.exp(-19.9 / 4 - 0.05), rel_tol=1e-12)
    cos = VPCosine()
    assert cos.alpha(zero) == 1 and cos.alpha(one) == 0 and math.isclose(float(cos.sigma(one)), 1.0)
    poly = PATHS["vp_poly"]
    assert math.isclose(float(poly.alpha(zero)) ** 2, 1 - 1e-5) and math.isclose(
        float(poly.alpha(one)) ** 2, 1e-5
    )
    for ve in (PATHS["ve_geometric"], PATHS["ve_karras"]):
        assert math.isclose(float(ve.sigma(zero)), 0.002) and math.isclose(float(ve.sigma(one)), 80.0)
        assert ve.alpha(one) == 1
    rf = LinearPath()
    assert (rf.alpha(zero), rf.sigma(zero), rf.alpha(one), rf.sigma(one)) == (1, 0, 0, 1)
    assert math.isclose(float(PATHS["otcfm"].sigma(zero)), 0.01) and PATHS["otcfm"].sigma(one) == 1


@pytest.mark.parametrize("name", PATHS)
def test_marginal_mean_and_variance_by_monte_carlo(name):
    path = PATHS[name]
    g = torch.Generator().manual_seed(2)
    n, m, s0, t = 200_000, 1.5, 0.5, torch.tensor(0.3)
    x0 = m + s0 * torch.randn(n, 1, generator=g)
    x_t = path.marginal(x0, t, generator=g)
    a, s = float(path.alpha(t)), float(path.sigma(t))
    var = a**2 * s0**2 + s**2
    assert abs(float(x_t.mean()) - a * m) < 5 * math.sqrt(var / n)
    assert abs(float(x_t.var()) - var) < 5 * var * math.sqrt(2 / n)


@pytest.mark.parametrize("name", PATHS)
def test_log_snr_closed_form_and_inverse(name):
    path = PATHS[name]
    t = torch.linspace(0.03, 0.97, 30)
    lam = path.log_snr(t)
    torch.testing.assert_close(lam, 2 * torch.log(path.alpha(t) / path.sigma(t)))
    torch.testing.assert_close(path.t_from_log_snr(lam), t, rtol=1e-7, atol=1e-8)
    torch.testing.assert_close(path.edm_sigma(t), path.sigma(t) / path.alpha(t))
    torch.testing.assert_close(path.t_from_edm_sigma(path.edm_sigma(t)), t, rtol=1e-7, atol=1e-8)
    # generic bisection fallback of the base class agrees
    torch.testing.assert_close(GaussianPath.t_from_log_snr(path, lam), t, rtol=1e-7, atol=1e-8)


def test_ve_sigma_time_helpers_and_karras_grid():
    ve = VEPath(0.002, 80.0, "karras", rho=7.0)
    n = 18
    t = torch.linspace(1, 0, n)
    i = torch.arange(n)
    karras = (
        80 ** (1 / 7) + i / (n - 1) * (0.002 ** (1 / 7) - 80 ** (1 / 7))
    ) ** 7  # Karras et al. 2022, Eq. 5
    torch.testing.assert_close(ve.sigma(t), karras)
    torch.testing.assert_close(ve.t_from_sigma(karras), t)
    geo = VEPath(0.01, 50.0, "geometric")
    torch.testing.assert_close(geo.sigma(torch.tensor(0.5)), torch.tensor(math.sqrt(0.01 * 50.0)))


def test_sde_coefficients_closed_forms():
    t = torch.linspace(0.05, 0.95, 9)
    vp = VPLinear(0.1, 20.0)
    f, g2 = vp.sde_coefficients(t)
    beta = 0.1 + t * 19.9
    torch.testing.assert_close(f, -beta / 2)
    torch.testing.assert_close(g2, beta)
    ve = VEPath(0.01, 50.0, "geometric")
    f, g2 = ve.sde_coefficients(t)
    torch.testing.assert_close(f, torch.zeros_like(t))
    torch.testing.assert_close(g2, 2 * ve.sigma(t) ** 2 * math.log(5000.0))


def test_bad_inputs_raise_clear_errors():
    path = VPLinear()
    x = torch.randn(4, 2)
    with pytest.raises(ValueError, match="kind"):
        path.target(x, x, torch.rand(4), kind="noise")
    with pytest.raises(ValueError, match="src"):
        path.convert(x, x, torch.rand(4), src="epsilon", dst="x0")
    with pytest.raises(ValueError, match=r"t must be a scalar or have shape \[B\]"):
        path.marginal(x, torch.rand(3), torch.randn(4, 2))
    with pytest.raises(ValueError, match="noise"):
        path.marginal(x, torch.rand(4), torch.randn(4, 3))
    with pytest.raises(TypeError, match="t must be"):
        path.marginal(x, "0.5", torch.randn(4, 2))
    with pytest.raises(ValueError, match="beta_max"):
        VPLinear(beta_min=5.0, beta_max=1.0)
    with pytest.raises(ValueError, match="schedule"):
        VEPath(schedule="cosine")
    with pytest.raises(ValueError, match="sigma_min"):
        OTCFMPath(sigma_min=1.5)
    with pytest.raises(ValueError, match="precision"):
        VPPolynomial(precision=0.7)
