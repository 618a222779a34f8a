"""Denoising / flow-matching / score-matching losses against Gaussian closed forms; weights; reductions."""

import math

import pytest
import torch
from scipy import stats

from scigen.core.losses import (
    denoising_loss,
    edm_lognormal_times,
    flow_matching_loss,
    loss_weight,
    masked_mean,
    sample_times,
    score_matching_loss,
    sf2m_loss,
)
from scigen.core.paths import BrownianBridge, LinearPath, VEPath, VPCosine, VPLinear

pytestmark = pytest.mark.usefixtures("float64_default")


M, S0 = 0.8, 0.6  # data x0 ~ N(M, S0^2), i.i.d. per coordinate


def _posterior(path, x_t, t):
    """Exact E[x0 | x_t] and Var[x0 | x_t] for Gaussian data (Bayes, closed form)."""
    a, s = path.alpha(t)[:, None], path.sigma(t)[:, None]
    v = a**2 * S0**2 + s**2
    return M + a * S0**2 * (x_t - a * M) / v, S0**2 * s**2 / v


def _c2(path, t, kind):
    """(d kind / d x0 at fixed x_t)^2, written out per definition."""
    a, s = path.alpha(t)[:, None], path.sigma(t)[:, None]
    da, ds = path.d_alpha(t)[:, None], path.d_sigma(t)[:, None]
    return {"x0": 1.0, "eps": (a / s) ** 2, "v": (a**2 / s + s) ** 2, "velocity": (da - ds * a / s) ** 2}[
        kind
    ]


@pytest.mark.parametrize(
    "path", [VPLinear(), VPCosine(), LinearPath(), VEPath(0.01, 5.0, "geometric")], ids=repr
)
@pytest.mark.parametrize("kind", ["eps", "x0", "v", "velocity"])
def test_optimal_denoiser_attains_the_closed_form_minimum(path, kind):
    g = torch.Generator().manual_seed(0)
    n, d = 8_000, 4
    x0 = M + S0 * torch.randn(n, d, generator=g)
    t = torch.tensor([0.1, 0.3, 0.6, 0.9]).repeat(n // 4)

    def optimal(x_t, tt):
        x0_hat, _ = _posterior(path, x_t, tt)
        return path.convert(x0_hat, x_t, tt, src="x0", dst=kind)

    def perturbed(x_t, tt):
        return optimal(x_t, tt) + 0.05

    noise = torch.randn(n, d, generator=g)
    loss = denoising_loss(optimal, x0, path, target=kind, t=t, noise=noise)
    worse = denoising_loss(perturbed, x0, path, target=kind, t=t, noise=noise)
    assert float(worse) > float(loss)
    x_t = path.marginal(x0, t, noise)
    pv = _posterior(path, x_t, t)[1] * _c2(path, t, kind)  # posterior variance of the target
    expected = float(pv.mean())
    se = math.sqrt(2.0 * float((pv**2).mean()) / (n * d))  # residuals are Gaussian: Var(r^2) = 2 pv^2
    assert abs(float(loss) - expected) < 5 * se


def test_min_snr_weights_closed_form_vp_and_general():
    path, t = VPCosine(), torch.linspace(0.0, 1.0, 41)
    snr = path.alpha(t) ** 2 / path.sigma(t) ** 2
    with torch.no_grad():
        torch.testing.assert_close(loss_weight(path, t, "x0", "min_snr"), torch.clamp(snr, max=5.0))
        mid = slice(1, -1)  # Hang et al. 2023: eps -> min(snr, 5)/snr, v -> min(snr, 5)/(snr + 1)
        torch.testing.assert_close(
            loss_weight(path, t, "eps", "min_snr")[mid], (torch.clamp(snr, max=5.0) / snr)[mid]
        )
        torch.testing.assert_close(
            loss_weight(path, t, "v", "min_snr")[mid], (torch.clamp(snr, max=5.0) / (snr + 1))[mid]
        )
        w_eps = loss_weight(path, t, "eps", "min_snr")
        assert w_eps[0] == 0.0 and w_eps[-1] == 1.0  # limits at snr = inf and snr = 0, no NaN
    lin, tt = LinearPath(), torch.linspace(0.05, 0.95, 19)
    snr = ((1 - tt) / tt) ** 2
    for kind in ("eps", "v", "velocity"):  # w_kind * c_kind^2 = min(snr, gamma) on the x0 error
        w = loss_weight(lin, tt, kind, "min_snr", gamma=2.0)
        torch.testing.assert_close(w * _c2(lin, tt, kind)[:, 0], torch.clamp(snr, max=2.0))


def test_edm_weight_closed_form():
    path, t = VEPath(0.002, 80.0), torch.linspace(0.1, 0.9, 9)
    sig = path.sigma(t)
    torch.testing.assert_close(
        loss_weight(path, t, "x0", "edm", sigma_data=0.5), (sig**2 + 0.25) / (sig * 0.5) ** 2
    )
    torch.testing.assert_close(loss_weight(path, t, "eps", "edm", sigma_data=0.5), (sig**2 + 0.25) / 0.25)


def test_flow_matching_gaussian_minimum_and_coupled_sample():
    g = torch.Generator().manual_seed(1)
    n = 40_000
    x0 = M + S0 * torch.randn(n, 1, generator=g)
    x1 = torch.randn(n, 1, generator=g)
    t = torch.tensor([0.2, 0.5, 0.8]).repeat_interleave(n // 3 + 1)[:n]
    v = ((1 - t) ** 2 * S0**2 + t**2)[:, None]
    cov = (t - (1 - t) * S0**2)[:, None]  # Cov(x1 - x0, x_t)

    def optimal(x_t, tt):  # E[x1 - x0 | x_t]
        return -M + cov / v * (x_t - (1 - t[:, None]) * M)

    loss = flow_matching_loss(optimal, x0, x1, t=t)
    pv = 1 + S0**2 - cov**2 / v
    assert abs(float(loss) - float(pv.mean())) < 5 * math.sqrt(2 * float((pv**2).mean()) / n)
    assert float(flow_matching_loss(lambda x, tt: optimal(x, tt) * 1.1, x0, x1, t=t)) > float(loss)
    coupled = x0 + 2.0  # a deterministic coupling: the target velocity is x1 - x0 = 2
    assert float(flow_matching_loss(lambda x, tt: torch.full_like(x, 2.0), x0, coupled, t=t)) < 1e-28


def test_score_matching_exact_score_minimum():
    path, g = VPLinear(), torch.Generator().manual_seed(2)
    n = 40_000
    x0 = M + S0 * torch.randn(n, 2, generator=g)
    t = torch.tensor([0.05, 0.4]).repeat(n // 2)
    a, s = path.alpha(t)[:, None], path.sigma(t)[:, None]
    v = a**2 * S0**2 + s**2
    loss = score_matching_loss(lambda x, tt: -(x - a * M) / v, x0, path, t=t, generator=g)
    pv = a**2 * S0**2 / v  # Var[eps | x_t]
    assert abs(float(loss) - float(pv.mean())) < 5 * math.sqrt(2 * float((pv**2).mean()) / (2 * n))


def test_sf2m_loss_is_zero_at_the_true_bridge_fields():
    br = BrownianBridge(sigma=0.5, t_a=0.0, t_b=2.0)
    n = 64
    x_a, x_b = torch.zeros(n, 2), torch.ones(n, 2)  # one coupled pair: conditional = marginal

    def drift(x, t):
        tb = t[:, None]
        return br.log_std_derivative(tb) * (x - br.mean(t, x_a, x_b)) + (x_b - x_a) / 2.0

    def score(x, t):  # network convention: (sigma^2/2) grad log p
        return -(0.5**2 / 2) * (x - br.mean(t, x_a, x_b)) / br.std(t)[:, None] ** 2

    out = sf2m_loss(drift, score, x_a, x_b, br, generator=torch.Generator().manual_seed(3))
    assert float(out["flow"]) < 1e-16 and float(out["score"]) < 1e-16
    bad = sf2m_loss(
        lambda x, t: drift(x, t) + 0.1, None, x_a, x_b, br, generator=torch.Generator().manual_seed(3)
    )
    assert math.isclose(float(bad["loss"]), 0.01, rel_tol=1e-9) and float(bad["score"]) == 0.0


def test_masked_mean():
    x = torch.arange(12.0).reshape(3, 4)
    mask = torch.tensor([[1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 1, 1]], dtype=torch.bool)
    assert float(masked_mean(x, mask)) == float(x[mask].mean())
    torch.testing.assert_close(masked_mean(x, mask, dim=1), torch.tensor([0.5, 4.0, 9.5]))
    x_nan = x.clone()
    x_nan[~mask] = float("nan")  # padding never leaks in
    assert float(masked_mean(x_nan, mask)) == float(x[mask].mean())
    col = torch.tensor([True, False, True])[:, None]  # broadcast over the set dimension
    assert float(masked_mean(x, col)) == float(torch.cat([x[0], x[2]]).mean())
    with pytest.raises(ValueError, match="selects no entries"):
        masked_mean(x, torch.zeros(3, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="1 of the 3 groups"):
        masked_mean(x, mask & torch.tensor([True, False, True])[:, None], dim=1)
    with pytest.raises(TypeError, match="boolean"):
        masked_mean(x, mask.float())
    with pytest.raises(ValueError, match="broadcast"):
        masked_mean(x, torch.ones(3, 5, dtype=torch.bool))


def test_denoising_loss_mask_matches_mean_over_valid_entries():
    path, g = VPLinear(), torch.Generator().manual_seed(4)
    x0, noise = torch.randn(3, 5, generator=g), torch.randn(3, 5, generator=g)
    t = torch.tensor([0.2, 0.5, 0.7])
    mask = torch.rand(3, 5, generator=g) > 0.4

    def model(x, tt):
        return x * 0.3

    x_t = path.marginal(x0, t, noise)
    ref = ((model(x_t, t) - noise)[mask] ** 2).mean()
    torch.testing.assert_close(denoising_loss(model, x0, path, mask=mask, t=t, noise=noise), ref)


def test_time_samplers():
    g = torch.Generator().manual_seed(5)
    u = sample_times("uniform", 5000, generator=g)
    assert stats.kstest(u.numpy(), "uniform").pvalue > 1e-3
    st = sample_times("stratified", 100, generator=g)
    assert sorted(torch.floor(st * 100).long().tolist()) == list(range(100))
    an = sample_times("antithetic", 10, generator=g)
    torch.testing.assert_close(an[:5] + an[5:], torch.ones(5))
    ln = sample_times("logit_normal", 5000, generator=g)
    assert stats.kstest(torch.logit(ln).numpy(), "norm").pvalue > 1e-3
    r = sample_times("uniform", 1000, t_min=0.2, t_max=0.4, generator=g)
    assert float(r.min()) >= 0.2 and float(r.max()) <= 0.4


def test_bad_inputs_raise_clear_errors():
    path, x0 = VPLinear(), torch.randn(4, 3)
    with pytest.raises(ValueError, match="target"):
        denoising_loss(lambda x, t: x, x0, path, target="noise")
    with pytest.raises(ValueError, match="weighting"):
        denoising_loss(lambda x, t: x, x0, path, weighting="snr2")
    with pytest.raises(ValueError, match=r"shape \[B\] = \[4\]"):
        denoising_loss(lambda x, t: x, x0, path, t=torch.rand(3))
    with pytest.raises(ValueError, match=r"t must lie in \[0.0, 1.0\]"):
        denoising_loss(lambda x, t: x, x0, path, t=torch.full((4,), 1.5))
    with pytest.raises(ValueError, match="model_fn must return"):
        denoising_loss(lambda x, t: x[:, :2], x0, path)
    with pytest.raises(TypeError, match="GaussianPath"):
        denoising_loss(lambda x, t: x, x0, "vp")
    with pytest.raises(ValueError, match="time_sampler"):
        denoising_loss(lambda x, t: x, x0, path, time_sampler="sobol")
    with pytest.raises(ValueError, match="x0 must be"):
        denoising_loss(lambda x, t: x, torch.zeros(4, 3, dtype=torch.long), path)


@pytest.mark.parametrize("path", [VPLinear(), VPCosine(), LinearPath(), VEPath()], ids=repr)
def test_float32_inputs_stay_float32_and_finite(path):
    torch.set_default_dtype(torch.float32)
    x0 = torch.randn(8, 3)
    for kind in ("eps", "x0", "v", "velocity"):
        for weighting in ("uniform", "min_snr", "edm"):
            loss = denoising_loss(
                lambda x, t: torch.zeros_like(x),
                x0,
                path,
                kind,
                weighting,
                generator=torch.Generator().manual_seed(0),
            )
            assert loss.dtype == torch.float32 and bool(torch.isfinite(loss))


def test_edm_lognormal_times_give_lognormal_noise_levels():
    for path in (VEPath(1e-4, 1e4), VPLinear(0.01, 30.0)):
        t = edm_lognormal_times(4000, path, generator=torch.Generator().manual_seed(6))
        z = (torch.log(path.edm_sigma(t)) + 1.2) / 1.2
        assert stats.kstest(z.numpy(), "norm").pvalue > 1e-3


def test_per_sample_reduction_weighs_every_sample_equally():
    """reduction="per_sample": mean over each sample's valid entries, then over samples, written out by hand
    (two molecules of 1 and 3 valid atoms: the plain mean weighs the big one 3x, per_sample does not)."""
    path = VPLinear()
    g = torch.Generator().manual_seed(0)
    x0 = torch.randn(2, 3, 2, generator=g)
    noise = torch.randn(2, 3, 2, generator=g)
    t = torch.tensor([0.3, 0.7])
    mask = torch.tensor([[True, False, False], [True, True, True]])[..., None]
    pred = torch.randn(2, 3, 2, generator=g)
    loss = denoising_loss(lambda x, tt: pred, x0, path, "eps", mask=mask, t=t, noise=noise, reduction="per_sample")
    sq = (pred - noise) ** 2
    want = 0.5 * (sq[0, :1].sum() / 2 + sq[1].sum() / 6)
    assert float(loss) == pytest.approx(float(want), rel=1e-12)
    plain = denoising_loss(lambda x, tt: pred, x0, path, "eps", mask=mask, t=t, noise=noise)
    assert float(plain) == pytest.approx(float((sq[0, :1].sum() + sq[1].sum()) / 8), rel=1e-12)
    assert abs(float(plain) - float(want)) > 1e-3  # the two reductions really differ here
    # without a mask: per-sample means of equal-size samples average to the plain mean
    full = denoising_loss(lambda x, tt: pred, x0, path, "eps", t=t, noise=noise, reduction="per_sample")
    assert float(full) == pytest.approx(float(sq.mean()), rel=1e-12)
    with pytest.raises(ValueError, match="reduction must be one of"):
        denoising_loss(lambda x, tt: pred, x0, path, "eps", t=t, noise=noise, reduction="sum")
