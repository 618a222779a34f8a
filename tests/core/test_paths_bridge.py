"""Brownian bridge and location-scale path against closed forms and finite differences."""

import itertools
import math

import pytest
import torch

from scigen.core.paths import PREDICTION_KINDS, BrownianBridge, LocationScalePath, VPCosine, VPLinear

pytestmark = pytest.mark.usefixtures("float64_default")


def test_bridge_variance_closed_form_and_monte_carlo():
    br = BrownianBridge(sigma=0.7, t_a=1.0, t_b=3.0)
    t = torch.tensor([1.0, 1.5, 2.0, 2.9, 3.0])
    tau = (t - 1.0) / 2.0
    torch.testing.assert_close(br.std(t), 0.7 * torch.sqrt(tau * (1 - tau)))
    n = 100_000
    x_a, x_b = torch.full((n, 1), -1.0), torch.full((n, 1), 2.0)
    tt = torch.full((n,), 1.5)
    xs = br.sample(tt, x_a, x_b, generator=torch.Generator().manual_seed(0))
    var = 0.49 * 0.25 * 0.75
    assert abs(float(xs.mean()) - (-1.0 + 0.25 * 3.0)) < 5 * math.sqrt(var / n)
    assert abs(float(xs.var()) - var) < 5 * var * math.sqrt(2 / n)
    # pinned ends
    torch.testing.assert_close(br.sample(torch.tensor([1.0]), x_a[:1], x_b[:1]), x_a[:1])
    torch.testing.assert_close(br.sample(torch.tensor([3.0]), x_a[:1], x_b[:1]), x_b[:1])


@pytest.mark.parametrize("spline", [False, True])
def test_drift_target_is_time_derivative_along_fixed_noise(spline):
    br = BrownianBridge(sigma=0.5, t_a=0.2, t_b=1.4)
    g = torch.Generator().manual_seed(1)
    x_a, x_b, eps = (torch.randn(7, 3, generator=g) for _ in range(3))
    t = 0.25 + 1.1 * torch.rand(7, generator=g)
    mu = dmu = None
    if spline:  # a curved mean through both endpoints, as MMSFM's spline would be

        def mu(tb):
            tau = (tb - 0.2) / 1.2
            return (1 - tau) * x_a + tau * x_b + torch.sin(math.pi * tau) * 0.3

        def dmu(tb):
            tau = (tb - 0.2) / 1.2
            return (x_b - x_a + 0.3 * math.pi * torch.cos(math.pi * tau)) / 1.2

    h = 1e-6
    fd = (br.sample(t + h, x_a, x_b, eps, mu) - br.sample(t - h, x_a, x_b, eps, mu)) / (2 * h)
    x_t = br.sample(t, x_a, x_b, eps, mu)
    torch.testing.assert_close(br.drift_target(t, x_t, x_a, x_b, mu, dmu), fd, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(br.velocity(t, eps, x_a, x_b, dmu), fd, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(
        br.d_mean(t, x_a, x_b, dmu),
        (br.mean(t + h, x_a, x_b, mu) - br.mean(t - h, x_a, x_b, mu)) / (2 * h),
        rtol=1e-6,
        atol=1e-6,
    )


def test_fixed_sigma_and_sf2m_weight():
    fixed = BrownianBridge(sigma=0.1, fixed_sigma=True)
    x_a, x_b = torch.zeros(2, 2), torch.ones(2, 2)
    t = torch.tensor([0.3, 0.6])
    torch.testing.assert_close(fixed.std(t), torch.full((2,), 0.1))
    torch.testing.assert_close(fixed.drift_target(t, torch.randn(2, 2), x_a, x_b), x_b - x_a)
    br = BrownianBridge(sigma=0.8)
    eps = torch.randn(2, 2)
    true_score = -eps / br.std(t)[:, None]  # grad log N(x; mu, std^2)
    lam = br.score_weight(t)[:, None]
    torch.testing.assert_close(lam * (0.8**2 / 2) * true_score, -eps)


def test_bridge_bad_inputs():
    br = BrownianBridge(t_a=0.0, t_b=1.0)
    x = torch.zeros(2, 3)
    with pytest.raises(ValueError, match="window"):
        br.sample(torch.tensor([0.5, 1.2]), x, x)
    with pytest.raises(ValueError, match="t_b > t_a"):
        BrownianBridge(t_a=1.0, t_b=1.0)
    with pytest.raises(ValueError, match="mu must be"):
        br.mean(torch.tensor([0.5, 0.5]), x, x, mu=torch.zeros(3))
    with pytest.raises(ValueError, match="x_b"):
        br.mean(torch.tensor([0.5, 0.5]), x, torch.zeros(2, 2))


def test_per_sample_windows_follow_the_closed_forms_row_by_row():
    """Each row of a per-sample-window bridge: std = sigma·sqrt(tau(1−tau)) with its own tau, the drift is
    the time derivative along fixed noise (finite differences), and the linear mean slope is (x_b − x_a)/L."""
    g = torch.Generator().manual_seed(3)
    ta = torch.tensor([0.0, 0.2, 0.5, 1.0])
    tb = torch.tensor([0.3, 1.0, 0.7, 4.0])
    br = BrownianBridge(sigma=0.6, t_a=ta, t_b=tb)
    x_a, x_b, eps = (torch.randn(4, 2, 3, generator=g) for _ in range(3))
    u = torch.tensor([0.1, 0.5, 0.8, 0.33])
    t = ta + u * (tb - ta)
    torch.testing.assert_close(br.std(t), 0.6 * torch.sqrt(u * (1 - u)))
    h = 1e-6
    fd = (br.sample(t + h, x_a, x_b, eps) - br.sample(t - h, x_a, x_b, eps)) / (2 * h)
    x_t = br.sample(t, x_a, x_b, eps)
    torch.testing.assert_close(br.drift_target(t, x_t, x_a, x_b), fd, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(br.velocity(t, eps, x_a, x_b), fd, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(br.d_mean(t, x_a, x_b), (x_b - x_a) / (tb - ta)[:, None, None])
    expected_mean = (1 - u)[:, None, None] * x_a + u[:, None, None] * x_b
    torch.testing.assert_close(br.mean(t, x_a, x_b), expected_mean)
    torch.testing.assert_close(br.score_weight(t), 2 * 0.6 * torch.sqrt(u * (1 - u)) / 0.36)


def test_sf2m_loss_with_per_sample_windows_draws_inside_each_window():
    from scigen.core.losses import sf2m_loss

    ta, tb = torch.tensor([0.0, 2.0, 5.0]), torch.tensor([1.0, 3.0, 9.0])
    br = BrownianBridge(sigma=0.5, t_a=ta, t_b=tb)
    x_a, x_b = torch.zeros(3, 2), torch.ones(3, 2)
    seen = []

    def drift(x, t):
        seen.append(t)
        return torch.zeros_like(x)

    out = sf2m_loss(drift, None, x_a, x_b, br, generator=torch.Generator().manual_seed(0))
    assert bool(((seen[0] > ta) & (seen[0] < tb)).all())
    assert float(out["score"]) == 0.0
    # with a zero network the flow loss is the mean squared target u_t = std'·eps + (x_b − x_a)/L
    u = torch.tensor([0.25, 0.5, 0.9])
    t = ta + u * (tb - ta)
    eps = torch.randn(3, 2, generator=torch.Generator().manual_seed(1))
    length = (tb - ta)[:, None]
    d_std = 0.5 * (1 - 2 * u)[:, None] / (2 * torch.sqrt(u * (1 - u))[:, None] * length)
    expected = ((d_std * eps + 1.0 / length) ** 2).mean()
    got = sf2m_loss(drift, None, x_a, x_b, br, t=t, noise=eps)["flow"]
    torch.testing.assert_close(got, expected)
    with pytest.raises(ValueError, match="per-sample windows"):
        sf2m_loss(drift, None, torch.zeros(4, 2), torch.ones(4, 2), br)


def test_per_sample_window_bad_inputs():
    with pytest.raises(ValueError, match="row 1"):
        BrownianBridge(t_a=torch.tensor([0.0, 1.0]), t_b=torch.tensor([1.0, 0.5]))
    with pytest.raises(ValueError, match=r"shape \[B\]"):
        BrownianBridge(t_a=torch.zeros(2, 2), t_b=torch.ones(2, 2))
    br = BrownianBridge(t_a=torch.tensor([0.0, 1.0]), t_b=torch.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match="row 1"):
        br.std(torch.tensor([0.5, 0.5]))
    with pytest.raises(ValueError, match="leading dimension 2"):
        br.std(torch.tensor([0.5, 1.5, 0.5]))


def _ls_expected(path, x0, eps, t, mu, var, kind):
    tb = t[:, None]
    a, s, sd = path.base.alpha(tb), path.base.sigma(tb), var.sqrt()
    return {
        "eps": eps,
        "x0": x0,
        "v": a * eps - s * (x0 - mu) / sd,
        "velocity": path.base.d_alpha(tb) * (x0 - mu) + path.base.d_sigma(tb) * sd * eps,
        "score": -eps / (s * sd),
    }[kind]


def test_location_scale_conversions_and_gaussian_score():
    path = LocationScalePath(VPLinear())
    g = torch.Generator().manual_seed(3)
    x0, eps, mu = (torch.randn(5, 4, generator=g) for _ in range(3))
    var = 0.2 + torch.rand(5, 4, generator=g)
    t = torch.linspace(0.1, 0.9, 5)
    x_t = path.marginal(x0, t, mu, var, eps)
    a, s = path.base.alpha(t)[:, None], path.base.sigma(t)[:, None]
    torch.testing.assert_close(x_t, a * x0 + (1 - a) * mu + s * var.sqrt() * eps)
    for src, dst in itertools.product(PREDICTION_KINDS, PREDICTION_KINDS):
        pred = _ls_expected(path, x0, eps, t, mu, var, src)
        out = path.convert(pred, x_t, t, src, dst, mu, var)
        torch.testing.assert_close(out, _ls_expected(path, x0, eps, t, mu, var, dst))
        torch.testing.assert_close(
            path.target(x0, eps, t, dst, mu, var), _ls_expected(path, x0, eps, t, mu, var, dst)
        )
    # Gaussian data x0 ~ N(m, s0^2): exact E[eps|x_t] converts to the closed-form score
    m, s0 = 0.5, 1.2
    mean_t = a * m + (1 - a) * mu
    var_t = a**2 * s0**2 + s**2 * var
    eps_hat = s * var.sqrt() * (x_t - mean_t) / var_t
    torch.testing.assert_close(
        path.convert(eps_hat, x_t, t, "eps", "score", mu, var), -(x_t - mean_t) / var_t
    )


def test_location_scale_endpoint_is_n_mu_sigma():
    path = LocationScalePath(VPCosine())  # alpha(1) = 0: the endpoint is exactly N(mu, var)
    n = 100_000
    mu, var = torch.full((n, 1), 2.0), torch.full((n, 1), 0.25)
    g = torch.Generator().manual_seed(4)
    x1 = path.marginal(torch.randn(n, 1, generator=g), torch.tensor(1.0), mu, var, generator=g)
    assert abs(float(x1.mean()) - 2.0) < 5 * math.sqrt(0.25 / n)
    assert abs(float(x1.var()) - 0.25) < 5 * 0.25 * math.sqrt(2 / n)
    with pytest.raises(ValueError, match="var must be"):
        path.marginal(torch.zeros(2, 1), torch.tensor(0.5), torch.zeros(2, 1), torch.zeros(2, 1))
