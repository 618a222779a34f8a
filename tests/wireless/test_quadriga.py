"""The optional quadriga-lib source: narrowband ULA channels of the IEEE indoor models, normalised to
‖h‖² = N, reproducible by seed; a clear error when the package is missing or the model is unknown."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from scigen.core.errors import InvalidInputError
from scigen.wireless.quadriga import ieee_indoor_channels


def test_missing_package_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "quadriga_lib", None)  # makes `import quadriga_lib` raise ImportError
    with pytest.raises(InvalidInputError, match="pip install quadriga-lib"):
        ieee_indoor_channels(2)


def test_unknown_channel_type_is_refused():
    with pytest.raises(InvalidInputError, match=r"channel_type must be one of .*got 'Z'"):
        ieee_indoor_channels(2, channel_type="Z")


def test_ieee_indoor_channels_are_normalised_and_seeded():
    pytest.importorskip("quadriga_lib")
    h = ieee_indoor_channels(6, n_antennas=16, channel_type="B", seed=3)
    assert h.dims == ("sample", "antenna", "subcarrier", "symbol") and h.shape == (6, 16, 1, 1)
    H = h.values.reshape(6, -1)
    np.testing.assert_allclose((np.abs(H) ** 2).sum(1), 16.0, rtol=1e-10)
    np.testing.assert_array_equal(ieee_indoor_channels(6, n_antennas=16, channel_type="B", seed=3).values, h.values)
    assert not np.allclose(ieee_indoor_channels(6, n_antennas=16, channel_type="B", seed=4).values, h.values)
    # a multipath channel of a half-wavelength ULA: not a single plane wave (rank of the users' channels > 1)
    assert np.linalg.matrix_rank(H, tol=1e-6 * np.linalg.norm(H)) > 1
