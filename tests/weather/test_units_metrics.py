"""Units against pysteps' conversions and SEVIR's decoding; every metric against pysteps / skimage."""

from __future__ import annotations

import numpy as np
import pytest

from scigen.weather import metrics as M
from scigen.weather.data import units as U

pysteps = pytest.importorskip("pysteps")


def _fields(seed=0, shape=(3, 24, 20)):
    rng = np.random.default_rng(seed)
    obs = np.where(rng.random(shape) < 0.4, rng.gamma(1.0, 3.0, shape), 0.0)
    pred = np.clip(obs + rng.normal(0, 2.0, shape), 0, None) * (rng.random(shape) < 0.8)
    return pred, obs


def test_zr_conversion_equals_pysteps():
    from pysteps.utils import conversion

    r = np.array([0.1, 0.5, 1.0, 7.3, 55.0])
    meta = {"unit": "mm/h", "transform": None, "zr_a": 200.0, "zr_b": 1.6, "threshold": 0.1, "zerovalue": 0.0}
    z, _ = conversion.to_reflectivity(r, meta)
    np.testing.assert_allclose(U.rainrate_to_dbz(r), z, rtol=1e-10)
    np.testing.assert_allclose(U.dbz_to_rainrate(U.rainrate_to_dbz(r)), r, rtol=1e-10)
    assert U.rainrate_to_dbz(np.array([0.0]))[0] == -15.0 and U.dbz_to_rainrate(np.array([-20.0]))[0] == 0.0


def test_sevir_vil_decoding_closed_form_and_round_trip():
    p = np.arange(0, 255)
    v = U.vil_digital_to_kgm2(p)
    assert np.all(v[:6] == 0) and v[10] == pytest.approx(8 / 90.66) and v[100] == pytest.approx(np.exp((100 - 83.9) / 38.9))
    np.testing.assert_array_equal(U.vil_kgm2_to_digital(v)[6:], p[6:])
    d = U.convert([1.0, 10.0], "kg/m2", "dBZ", depth_m=5000.0)  # Greene & Clark: Z = (VIL / (3.44e-6 D))^(7/4)
    np.testing.assert_allclose(d, 10 * np.log10((np.array([1.0, 10.0]) / (3.44e-6 * 5000)) ** 1.75))
    np.testing.assert_allclose(U.convert(U.convert([2.0, 30.0], "mm/h", "kg/m2"), "kg/m2", "mm/h"), [2.0, 30.0])


def test_unknown_units_are_named():
    from scigen.core.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="unknown units 'inch/h'"):
        U.convert([1.0], "inch/h", "mm/h")


@pytest.mark.parametrize("thr", [0.1, 1.0, 5.0])
def test_categorical_scores_equal_pysteps(thr):
    from pysteps.verification.detcatscores import det_cat_fct

    pred, obs = _fields()
    ref = det_cat_fct(pred, obs, thr, scores=["CSI", "POD", "FAR", "HSS"])
    got = M.categorical_scores(pred, obs, thr)
    for k in ("CSI", "POD", "FAR", "HSS"):
        assert got[k] == pytest.approx(ref[k], rel=1e-12), k


def test_pooled_csi_is_csi_of_skimage_max_pooled_fields():
    from pysteps.verification.detcatscores import det_cat_fct
    from skimage.measure import block_reduce

    pred, obs = _fields(shape=(24, 20))
    for k in (4, 16):
        ref = det_cat_fct(block_reduce(pred, (k, k), np.max), block_reduce(obs, (k, k), np.max), 2.0, ["CSI"])["CSI"]
        assert M.pooled_csi(pred, obs, 2.0, k) == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("scale", [1, 4, 9])
def test_fss_equals_pysteps(scale):
    from pysteps.verification.spatialscores import fss_accum, fss_compute, fss_init

    pred, obs = _fields()
    obj = fss_init(1.0, scale)
    for p, o in zip(pred, obs, strict=True):
        fss_accum(obj, p, o)
    assert M.fss(pred, obs, 1.0, scale) == pytest.approx(fss_compute(obj), rel=1e-12)


@pytest.mark.parametrize(("thr", "scale"), [(0.5, 1), (2.0, 5), (5.0, 12)])
def test_fss_of_one_field_equals_pysteps_fss(thr, scale):
    from pysteps.verification.spatialscores import fss

    pred, obs = _fields(seed=4, shape=(30, 26))
    pred[3, 4] = np.nan  # pysteps' rule: a non-finite pixel is below the threshold
    assert M.fss(pred, obs, thr, scale) == pytest.approx(fss(pred, obs, thr, scale), rel=1e-12)


def test_crps_equals_pysteps_and_properscoring():
    import properscoring
    from pysteps.verification.probscores import CRPS

    rng = np.random.default_rng(2)
    ens = rng.gamma(1.0, 2.0, (7, 10, 12))
    obs = rng.gamma(1.0, 2.0, (10, 12))
    assert M.crps(ens, obs) == pytest.approx(CRPS(ens, obs), rel=1e-10)
    assert M.crps(ens, obs) == pytest.approx(properscoring.crps_ensemble(obs, np.moveaxis(ens, 0, -1)).mean(), rel=1e-10)


def test_spread_skill_closed_forms():
    """Exact on a hand case; on Gaussian draws ``x_i = mu + c·e_i``, ``y = mu + e``: ``spread → c``,
    ``rmse → sqrt(1 + c²/m)``, so the ratio is 1 for a consistent ensemble (c = 1) and below 1 when it is
    under-dispersive (c = 0.5)."""
    ens = np.array([[0.0, 2.0], [2.0, 4.0]])  # 2 members, 2 pixels: variances 2, 2; means 1, 3
    r = M.spread_skill(ens, np.array([0.0, 5.0]))
    assert r["spread"] == pytest.approx(np.sqrt(2.0)) and r["rmse"] == pytest.approx(np.sqrt((1 + 4) / 2))
    assert r["ratio"] == pytest.approx(np.sqrt(2.0) * np.sqrt(1.5) / np.sqrt(2.5))
    rng = np.random.default_rng(0)
    m, n = 4, 400_000
    mu = rng.normal(0, 3, n)
    for c in (1.0, 0.5):
        r = M.spread_skill(mu + c * rng.normal(size=(m, n)), mu + rng.normal(size=n))
        assert r["spread"] == pytest.approx(c, rel=0.01) and r["rmse"] == pytest.approx(np.sqrt(1 + c**2 / m), rel=0.01)
        assert r["ratio"] == pytest.approx(c * np.sqrt((m + 1) / m) / np.sqrt(1 + c**2 / m), rel=0.01)
    assert M.spread_skill(mu + rng.normal(size=(m, n)), mu + rng.normal(size=n))["ratio"] == pytest.approx(1.0, abs=0.01)
    with pytest.raises(Exception, match="at least 2 members"):
        M.spread_skill(ens[:1], np.zeros(2))


def test_ssim_and_psnr_equal_skimage():
    from skimage.metrics import peak_signal_noise_ratio, structural_similarity

    pred, obs = _fields(shape=(24, 20))
    ref = structural_similarity(pred, obs, data_range=30.0, gaussian_weights=True, sigma=1.5, use_sample_covariance=False)
    assert M.ssim(pred, obs, data_range=30.0) == pytest.approx(ref, rel=1e-6)
    assert M.psnr(pred, obs, data_range=30.0) == pytest.approx(peak_signal_noise_ratio(obs, pred, data_range=30.0), rel=1e-9)


@pytest.mark.parametrize("shape", [(32, 32), (31, 31), (24, 20)])
def test_rapsd_equals_pysteps(shape):
    from pysteps.utils.spectral import rapsd

    f = np.random.default_rng(3).normal(size=shape)
    ref, freq = rapsd(f, fft_method=np.fft, return_freq=True)
    got, gf = M.rapsd(f)
    np.testing.assert_allclose(got, ref, rtol=1e-10)
    np.testing.assert_allclose(gf, freq)


def test_spectral_distance_sees_blur():
    from scipy.ndimage import gaussian_filter

    from scigen.weather.data.synthetic import power_law_noise

    f = power_law_noise(32, 3.0, np.random.default_rng(0))
    assert M.spectral_distance(f, f) == 0.0
    assert M.spectral_distance(gaussian_filter(f, 2.0, mode="wrap"), f) > 0.5
