"""Optional realistic channels from ``quadriga-lib`` (Fraunhofer HHI, Apache-2.0; ``pip install quadriga-lib``).

:func:`ieee_indoor_channels` draws SIMO uplink-style channels of an IEEE TGn/TGac indoor model
(``quadriga_lib.channel.get_ieee_indoor``, channel types ``"A"`` … ``"F"``) between a half-wavelength
ULA access point of ``n_antennas`` elements and a single-antenna station, and takes the narrowband
response of each user at the carrier (``quadriga_lib.channel.baseband_freq_response`` with one
carrier). Each channel is normalised to ``‖h‖² = N`` (path loss removed, as for the synthetic site and
the paper's datasets), so :func:`scigen.wireless.pilots.observe` sets the per-entry SNR.

This is quadriga-*lib*'s clustered IEEE model, not the full MATLAB QuaDRiGa 3GPP-38.901 scenarios the
paper used; there are no planted path parameters (no spread distances against ground truth).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from scigen.core.errors import InvalidInputError
from scigen.core.validation import check_count
from scigen.wireless.channels import CHANNEL_DIMS

__all__ = ["ieee_indoor_channels", "quadriga_available"]

_TYPES = ("A", "B", "C", "D", "E", "F")


def quadriga_available() -> bool:
    """Whether ``quadriga_lib`` imports."""
    try:
        import quadriga_lib  # noqa: F401
    except Exception:  # noqa: BLE001 - any import failure means "not available"
        return False
    return True


def ieee_indoor_channels(n_users: int, *, n_antennas: int = 32, channel_type: str = "D", carrier_hz: float = 5.25e9,
                         seed: int = 0) -> xr.DataArray:
    """``h (sample, antenna, subcarrier=1, symbol=1)`` complex128 of ``n_users`` users (module docstring)."""
    n = check_count(n_users, "n_users")
    n_antennas = check_count(n_antennas, "n_antennas")
    if channel_type not in _TYPES:
        raise InvalidInputError(f"channel_type must be one of {_TYPES}, got {channel_type!r}")
    try:
        import quadriga_lib as q
    except Exception as exc:  # noqa: BLE001
        raise InvalidInputError(f"quadriga-lib channels need the optional package quadriga-lib "
                                f"(pip install quadriga-lib): {type(exc).__name__}: {exc}") from None
    ap = q.arrayant.generate("ula", freq=carrier_hz, N=n_antennas)  # half-wavelength spacing at the carrier
    sta = q.arrayant.generate("omni", freq=carrier_hz)
    users = q.channel.get_ieee_indoor(ap, sta, channel_type, CarrierFreq_Hz=carrier_hz, n_users=n, seed=int(seed) + 1)
    h = np.stack([np.asarray(q.channel.baseband_freq_response(u["coeff"], u["delay"], 20e6, 1)).reshape(-1)
                  for u in users])
    if h.shape != (n, n_antennas):
        raise InvalidInputError(f"quadriga-lib returned channels of shape {h.shape}; expected ({n}, {n_antennas})")
    h = h * np.sqrt(n_antennas / np.sum(np.abs(h) ** 2, axis=1, keepdims=True))
    return xr.DataArray(h[:, :, None, None].astype(np.complex128), dims=CHANNEL_DIMS, name="h",
                        attrs={"source": f"quadriga-lib IEEE indoor {channel_type}", "carrier_hz": carrier_hz})
