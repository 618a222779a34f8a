"""Metrics against closed forms and scipy; baselines against the Gaussian MMSE and exact sparse recovery."""

from __future__ import annotations

import math

import numpy as np
import pytest
import xarray as xr
from scipy.stats import wasserstein_distance

from scigen.wireless.baselines import CleanGMM, lmmse_estimate, ls_estimate, omp_estimate, sbl_estimate
from scigen.wireless.dictionaries import Dictionary
from scigen.wireless.metrics import (
    _w1,
    empirical_cdf,
    nmse,
    nmse_db,
    power_profile,
    rms_spread,
    spectral_efficiency,
    spread_distances,
)


def test_nmse_closed_forms():
    rng = np.random.default_rng(0)
    h = rng.standard_normal((10, 8)) + 1j * rng.standard_normal((10, 8))
    assert nmse(np.zeros_like(h), h) == pytest.approx(1.0)
    assert nmse(1.1 * h, h) == pytest.approx(0.01)
    assert nmse_db(1.1 * h, h) == pytest.approx(-20.0)


def test_rms_spread_closed_forms():
    a = 0.3
    np.testing.assert_allclose(rms_spread([[a, -a]], [[1.0, 1.0]]), [a])
    np.testing.assert_allclose(rms_spread([[0.7, 0.1]], [[1.0, 0.0]]), [0.0])
    # powers p, 1 − p at 0 and d: spread d·sqrt(p(1 − p))
    p, d = 0.2, 2.0
    np.testing.assert_allclose(rms_spread([[0.0, d]], [[p, 1 - p]]), [d * math.sqrt(p * (1 - p))])


def test_spread_w1_equals_scipy_and_profile_cdf():
    rng = np.random.default_rng(1)
    a, b = rng.normal(0, 1, 50), rng.normal(0.5, 2, 70)
    assert _w1(a, b) == pytest.approx(wasserstein_distance(a, b), rel=1e-9)
    x, F = empirical_cdf([3.0, 1.0, 2.0])
    np.testing.assert_array_equal(x, [1, 2, 3])
    np.testing.assert_allclose(F, [1 / 3, 2 / 3, 1])
    grid = np.linspace(-1, 1, 5)
    prof = power_profile([[0.49, -1.0]], [[3.0, 1.0]], grid)
    np.testing.assert_allclose(prof, [0.25, 0, 0, 0.75, 0])
    ref = xr.Dataset({"path_angle": (("sample", "path"), [[0.1, -0.1]]), "path_power": (("sample", "path"), [[1.0, 1.0]]),
                      "path_delay": (("sample", "path"), [[0.0, 0.0]])})
    gen = ref.copy()
    gen["path_angle"] = (("sample", "path"), [[0.2, -0.2]])
    out = spread_distances(gen, ref)
    assert out["angle_spread_W1_deg"] == pytest.approx(0.1 * 180 / math.pi)
    assert "delay_spread_W1_ns" not in out  # all-zero delays: that axis is absent


def test_spectral_efficiency_closed_form():
    h = np.array([[1.0 + 1.0j, 0.0], [2.0, 0.0]])
    np.testing.assert_allclose(spectral_efficiency(h, 0.5), [math.log2(1 + 2 / 0.5), math.log2(1 + 4 / 0.5)])


def test_lmmse_with_the_true_covariance_reaches_the_gaussian_mmse():
    rng = np.random.default_rng(2)
    N, M, B, zeta = 6, 4, 20000, 0.1
    G = rng.standard_normal((N, N)) + 1j * rng.standard_normal((N, N))
    C = G @ G.conj().T / N
    L = np.linalg.cholesky(C)
    h = (rng.standard_normal((B, N)) + 1j * rng.standard_normal((B, N))) @ L.T / math.sqrt(2)
    A = np.eye(N)[:M].astype(complex)
    y = h @ A.T + math.sqrt(zeta / 2) * (rng.standard_normal((B, M)) + 1j * rng.standard_normal((B, M)))
    est = lmmse_estimate(y, np.full(B, zeta), A, C)
    mmse = np.trace(C - C @ A.conj().T @ np.linalg.inv(A @ C @ A.conj().T + zeta * np.eye(M)) @ A @ C).real
    assert np.mean(np.sum(np.abs(est - h) ** 2, 1)) == pytest.approx(mmse, rel=0.03)
    # a one-component clean GMM learns that Gaussian and estimates as well
    gmm = CleanGMM(1).fit(h[:5000])
    assert nmse(gmm.estimate(y[:3000], np.full(3000, zeta), A), h[:3000]) == pytest.approx(
        nmse(est[:3000], h[:3000]), rel=0.05)


def test_ls_omp_sbl_on_exact_cases():
    d = Dictionary.build(16, angle_grid=32)
    D = d.matrix.numpy()
    s = np.zeros((1, 32), complex)
    s[0, [5, 20]] = [3.0, -2.0j]
    h = s @ D.T
    A = np.eye(16, dtype=complex)
    np.testing.assert_allclose(ls_estimate(h, A), h, atol=1e-12)
    z = np.array([1e-8])
    np.testing.assert_allclose(omp_estimate(h, z, A, D), h, atol=1e-6)  # noiseless 2-sparse: exact
    assert nmse(sbl_estimate(h, np.array([1e-4]), A, D), h) < 1e-3
