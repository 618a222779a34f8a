"""Forecast scores against properscoring / scoringrules, closed forms and brute force."""

from __future__ import annotations

import numpy as np
import properscoring as ps
import pytest
from scipy import stats

from scigen.core.errors import InvalidInputError
from scigen.timeseries.metrics import (
    crps_ensemble,
    crps_sum,
    energy_score,
    forecast_metrics,
    mae,
    mse,
    picp,
    qice,
    reference_scores,
    variogram_score,
)

rng = np.random.default_rng(0)


def test_crps_matches_properscoring():
    samples = rng.normal(size=(50, 4, 6, 3))
    obs = rng.normal(size=(4, 6, 3))
    ours = crps_ensemble(samples, obs)
    ref = ps.crps_ensemble(obs, np.moveaxis(samples, 0, -1)).mean()
    assert ours == pytest.approx(ref, rel=1e-10)


def test_crps_and_crps_sum_equal_scoringrules_crps_ensemble():
    sr = pytest.importorskip("scoringrules")
    samples = rng.normal(size=(40, 4, 6, 3))
    obs = rng.normal(size=(4, 6, 3))
    assert crps_ensemble(samples, obs) == pytest.approx(sr.crps_ensemble(obs, samples, m_axis=0).mean(), rel=1e-10)
    ref_sum = sr.crps_ensemble(obs.sum(-1), samples.sum(-1), m_axis=0, estimator="nrg").mean()
    assert crps_sum(samples, obs) == pytest.approx(ref_sum, rel=1e-10)


def test_energy_and_variogram_scores_of_windows_equal_scoringrules():
    """Each window's horizon × variables forecast is one vector: ES / VS per window, then the mean."""
    sr = pytest.importorskip("scoringrules")
    samples = rng.normal(size=(30, 5, 4, 3)) * np.linspace(0.5, 2, 3)  # [S, W, H, N]
    obs = rng.normal(size=(5, 4, 3))
    fct = np.moveaxis(samples.reshape(30, 5, 12), 0, 1)  # [W, S, H·N]
    assert energy_score(samples, obs) == pytest.approx(sr.es_ensemble(obs.reshape(5, 12), fct).mean(), rel=1e-10)
    assert variogram_score(samples, obs) == pytest.approx(sr.vs_ensemble(obs.reshape(5, 12), fct, p=0.5).mean(),
                                                          rel=1e-10)
    assert variogram_score(samples, obs, p=1.0) == pytest.approx(sr.vs_ensemble(obs.reshape(5, 12), fct, p=1.0).mean(),
                                                                 rel=1e-10)
    ref = reference_scores(samples, obs)
    ours = forecast_metrics(samples, obs)
    for name in ("CRPS", "CRPS_sum", "ES", "VS"):
        assert ref[f"{name}[scoringrules]"] == pytest.approx(ours[name], rel=1e-10)


def test_energy_and_variogram_closed_forms():
    # one member: ES = Euclidean distance of the window's vector, VS = sum over ordered pairs of the squared gap
    x = np.array([[[1.0, 2.0], [0.0, 4.0]]])  # [S=1, W=2, N=2]: two windows of two components
    y = np.zeros((2, 2))
    # windows: x[0,0] = (1, 2) vs (0, 0): ||.|| = sqrt(5); x[0,1] = (0, 4): 4
    assert energy_score(x, y) == pytest.approx((np.sqrt(5) + 4) / 2)
    # p = 1: window 1: pairs (1,2),(2,1): (|1-2| - 0)² · 2 = 2; window 2: (|0-4|)² · 2 = 32
    assert variogram_score(x, y, p=1.0) == pytest.approx((2 + 32) / 2)
    # a perfect deterministic forecast scores 0 on both
    assert energy_score(y[None], y) == 0.0 and variogram_score(y[None], y) == 0.0


def test_crps_of_a_large_gaussian_ensemble_matches_the_closed_form():
    # CRPS(N(0, s²), y) = s [ z(2Φ(z) − 1) + 2φ(z) − 1/√π ],  z = y / s
    s, y = 1.7, np.array([0.3, -2.0, 4.0])
    ens = s * stats.norm.ppf((np.arange(20000) + 0.5) / 20000)[:, None] * np.ones((1, 3))
    z = y / s
    exact = s * (z * (2 * stats.norm.cdf(z) - 1) + 2 * stats.norm.pdf(z) - 1 / np.sqrt(np.pi))
    assert crps_ensemble(ens, y) == pytest.approx(exact.mean(), rel=1e-3)


def test_crps_sum_sums_variables_first():
    samples = rng.normal(size=(30, 5, 4))
    obs = rng.normal(size=(5, 4))
    ref = ps.crps_ensemble(obs.sum(-1), samples.sum(-1).T).mean()
    assert crps_sum(samples, obs) == pytest.approx(ref, rel=1e-10)


def test_qice_brute_force_and_extremes():
    # two bins, samples 0..4 per point: the median (2) separates the bins
    samples = np.tile(np.arange(5.0)[:, None], (1, 4))
    obs = np.array([-1.0, 1.0, 3.0, 10.0])  # bins: 0, 0, 1, 1 -> fractions 1/2, 1/2 -> QICE 0
    assert qice(samples, obs, n_bins=2) == 0.0
    obs = np.array([-1.0, 1.0, 1.5, 10.0])  # 3/4, 1/4 -> mean(|3/4-1/2|, |1/4-1/2|) = 1/4
    assert qice(samples, obs, n_bins=2) == pytest.approx(0.25)
    # all observations far above the samples: one bin holds everything -> 2(M-1)/M² = 0.18 for M = 10
    assert qice(rng.normal(size=(100, 500)), np.full(500, 50.0)) == pytest.approx(0.18)
    # calibrated ensemble: observations from the same law -> near 0 (fraction scale, not x100)
    assert qice(rng.normal(size=(100, 5000)), rng.normal(size=5000)) < 0.01


def test_picp_is_a_fraction_with_the_right_coverage():
    n = 5000
    ens = stats.norm.ppf((np.arange(400) + 0.5) / 400)[:, None] * np.ones((1, n))
    obs = rng.normal(size=n)
    assert picp(ens, obs) == pytest.approx(0.90, abs=0.015)
    assert picp(ens, obs, 25, 75) == pytest.approx(0.50, abs=0.025)
    assert picp(ens, np.full(n, 9.0)) == 0.0


def test_mse_mae_of_the_sample_mean_and_bundle():
    samples = np.stack([np.zeros((2, 2)), 2 * np.ones((2, 2))])  # mean 1
    obs = np.array([[1.0, 3.0], [0.0, 1.0]])
    assert mse(samples, obs) == pytest.approx((0 + 4 + 1 + 0) / 4)
    assert mae(samples, obs) == pytest.approx((0 + 2 + 1 + 0) / 4)
    assert set(forecast_metrics(samples, obs)) == {"CRPS", "CRPS_sum", "QICE", "PICP", "MSE", "MAE", "ES",
                                                   "VS"}


def test_shape_errors_are_clear():
    with pytest.raises(InvalidInputError, match=r"\[S, 3, 2\]"):
        crps_ensemble(np.zeros((5, 3, 3)), np.zeros((3, 2)))
    with pytest.raises(InvalidInputError, match="finite"):
        mse(np.full((2, 3), np.nan), np.zeros(3))
