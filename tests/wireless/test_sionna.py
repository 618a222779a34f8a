"""Sionna's 3GPP TR 38.901 channels as a data source: shape and normalisation, seeding, the ULA's spatial
stationarity (Toeplitz covariance), LoS concentration, narrowband = the centre subcarrier, bad inputs."""

from __future__ import annotations

import numpy as np
import pytest

from scigen.core.errors import InvalidInputError

pytest.importorskip("sionna.phy")
from scigen.wireless.data.sionna import sionna_channels  # noqa: E402


def _toeplitz_gap(h: np.ndarray) -> float:
    """Relative Frobenius distance of the sample covariance from its diagonal-averaged (Toeplitz) version."""
    c = h.T @ h.conj() / len(h)
    n = c.shape[0]
    t = np.zeros_like(c)
    for k in range(-n + 1, n):
        i = np.arange(max(0, -k), min(n, n - k))
        t[i, i + k] = np.diagonal(c, k).mean()
    return float(np.linalg.norm(c - t) / np.linalg.norm(c))


@pytest.mark.parametrize("model", ["CDL-C", "UMa", "UMi"])
def test_shape_normalisation_and_seeding(model):
    h = sionna_channels(20, model=model, n_antennas=8, seed=1)
    assert h.dims == ("sample", "antenna", "subcarrier", "symbol") and h.shape == (20, 8, 1, 1)
    assert h.dtype == np.complex128
    np.testing.assert_allclose(np.sum(np.abs(h.values) ** 2, axis=(1, 2, 3)), 8.0, rtol=1e-10)
    np.testing.assert_array_equal(sionna_channels(20, model=model, n_antennas=8, seed=1).values, h.values)
    assert not np.allclose(sionna_channels(20, model=model, n_antennas=8, seed=2).values, h.values)


def test_ula_covariance_is_toeplitz_and_los_concentrates_power():
    """A half-wavelength ULA of identical elements in a model whose clusters do not depend on the element
    sees a wide-sense stationary channel along the array: E[h_i h_j*] depends on i - j only (up to sampling
    noise, ~0.03 with 3000 draws). CDL-D is line of sight (K = 13.3 dB): a few eigenvectors hold the power."""
    c = sionna_channels(3000, model="CDL-C", n_antennas=16, seed=3).values[:, :, 0, 0]
    d = sionna_channels(3000, model="CDL-D", n_antennas=16, seed=3).values[:, :, 0, 0]
    assert _toeplitz_gap(c) < 0.08
    scrambled = c[:, np.random.default_rng(0).permutation(16)]
    assert _toeplitz_gap(scrambled) > 2 * _toeplitz_gap(c)  # the check can fail: element order matters
    ev = np.sort(np.linalg.eigvalsh(d.T @ d.conj() / len(d)))[::-1]
    assert ev[:4].sum() / ev.sum() > 0.9


def test_narrowband_channel_is_the_centre_subcarrier_of_the_ofdm_response():
    """For an odd number of subcarriers the centre one sits at the carrier (0 Hz in baseband), where the
    frequency response is Σ_l a_l: the narrowband draw of the same seed, up to the power normalisation."""
    a = sionna_channels(4, model="CDL-B", n_antennas=8, seed=5).values[:, :, 0, 0]
    b = sionna_channels(4, model="CDL-B", n_antennas=8, n_subcarriers=5, seed=5).values[:, :, 2, 0]
    for x, y in zip(a, b, strict=True):
        assert abs(np.vdot(x, y)) / (np.linalg.norm(x) * np.linalg.norm(y)) == pytest.approx(1.0, abs=1e-9)


def test_bad_inputs_are_named():
    with pytest.raises(InvalidInputError, match="model must be one of"):
        sionna_channels(2, model="RMa")
    with pytest.raises(InvalidInputError, match="delay_spread_s"):
        sionna_channels(2, delay_spread_s=-1.0)
    with pytest.raises(InvalidInputError, match="antenna_pattern"):
        sionna_channels(2, antenna_pattern="dipole")
