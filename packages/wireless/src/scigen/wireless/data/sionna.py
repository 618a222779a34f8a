"""3GPP TR 38.901 channels from Sionna (NVIDIA, Apache-2.0; the ``sionna`` extra: ``pip install sionna-no-rt``).

Sionna 2.x (PyTorch; Hoydis et al. 2022, *Sionna: an open-source library for next-generation physical
layer research*, arXiv:2203.11854) implements the stochastic channel models of 3GPP TR 38.901
(*Study on channel model for frequencies from 0.5 to 100 GHz*, v19): the clustered-delay-line models
``CDL-A`` … ``CDL-E`` (link-level, fixed cluster tables scaled by a delay spread) and the system-level
``UMa`` / ``UMi`` scenarios (urban macro / micro: large-scale parameters, LoS/NLoS and path clusters drawn
per user from a random single-sector topology). :func:`sionna_channels` draws uplink SIMO channels
between a single-antenna user and a base station with an ``n_antennas``-element half-wavelength ULA
(Sionna's ``PanelArray``, one row, vertical polarisation, omnidirectional elements by default or 38.901
sector elements), and returns their frequency response at ``n_subcarriers`` subcarriers around the carrier
(one: the narrowband channel ``h = Σ_l a_l``; several: ``cir_to_ofdm_channel`` at ``subcarrier_spacing``).

As for the synthetic site and quadriga-lib, each channel is normalised to ``‖h‖² = N`` (number of
entries; path loss and shadowing removed), so :func:`scigen.wireless.pilots.observe` sets the SNR per
entry. No planted path parameters are returned (Sionna's rays are not the generator's clusters).
Sionna's random generators are seeded with ``sionna.phy.config.seed = seed`` (a global of Sionna).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from scigen.core.errors import InvalidInputError
from scigen.core.validation import check_count
from scigen.wireless.channels import CHANNEL_DIMS

__all__ = ["MODELS", "sionna_available", "sionna_channels"]

#: channel models: the five CDL profiles and the two system-level urban scenarios
MODELS = ("CDL-A", "CDL-B", "CDL-C", "CDL-D", "CDL-E", "UMa", "UMi")
_CHUNK = 2000  # users per Sionna call (memory: paths x antennas x users)


def sionna_available() -> bool:
    """Whether Sionna's PHY module (``sionna.phy``, PyTorch) imports."""
    try:
        import sionna.phy  # noqa: F401
    except Exception:  # noqa: BLE001 - any import failure means "not available"
        return False
    return True


def _sionna():
    try:
        import sionna.phy
        from sionna.phy.channel import cir_to_ofdm_channel, gen_single_sector_topology, subcarrier_frequencies
        from sionna.phy.channel.tr38901 import CDL, PanelArray, UMa, UMi
    except Exception as exc:  # noqa: BLE001
        raise InvalidInputError(f"Sionna channels need the optional package sionna-no-rt (pip install "
                                f"'scigen-wireless[sionna]'): {type(exc).__name__}: {exc}") from None
    return sionna.phy, CDL, UMa, UMi, PanelArray, gen_single_sector_topology, cir_to_ofdm_channel, subcarrier_frequencies


def sionna_channels(n_channels: int, *, model: str = "CDL-C", n_antennas: int = 32, carrier_hz: float = 3.5e9,
                    delay_spread_s: float = 100e-9, n_subcarriers: int = 1, subcarrier_spacing_hz: float = 30e3,
                    antenna_pattern: str = "omni", seed: int = 0) -> xr.DataArray:
    """``h (sample, antenna, subcarrier, symbol=1)`` complex128 of ``n_channels`` uplink SIMO channels of the
    38.901 ``model`` (one of :data:`MODELS`; module docstring). ``delay_spread_s`` scales the CDL profiles
    (UMa / UMi draw their own); ``antenna_pattern``: ``"omni"`` or ``"38.901"`` (the base station's elements)."""
    n = check_count(n_channels, "n_channels")
    n_antennas = check_count(n_antennas, "n_antennas")
    n_sc = check_count(n_subcarriers, "n_subcarriers")
    if model not in MODELS:
        raise InvalidInputError(f"model must be one of {MODELS}, got {model!r}")
    if antenna_pattern not in ("omni", "38.901"):
        raise InvalidInputError(f"antenna_pattern must be 'omni' or '38.901', got {antenna_pattern!r}")
    for name, v in (("carrier_hz", carrier_hz), ("delay_spread_s", delay_spread_s),
                    ("subcarrier_spacing_hz", subcarrier_spacing_hz)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v) or v <= 0:
            raise InvalidInputError(f"{name} must be a positive number, got {v!r}")
    phy, CDL, UMa, UMi, PanelArray, topology, to_ofdm, frequencies = _sionna()
    phy.config.seed = int(seed)
    kw = dict(polarization="single", polarization_type="V", carrier_frequency=float(carrier_hz), device="cpu")
    bs = PanelArray(num_rows_per_panel=1, num_cols_per_panel=n_antennas, antenna_pattern=antenna_pattern, **kw)
    ut = PanelArray(num_rows_per_panel=1, num_cols_per_panel=1, antenna_pattern="omni", **kw)
    if model.startswith("CDL"):
        channel = CDL(model[-1], float(delay_spread_s), float(carrier_hz), ut_array=ut, bs_array=bs, direction="uplink",
                      device="cpu")
    else:
        cls = UMa if model == "UMa" else UMi
        channel = cls(carrier_frequency=float(carrier_hz), o2i_model="low", ut_array=ut, bs_array=bs, direction="uplink",
                      enable_pathloss=False, enable_shadow_fading=False, device="cpu")
    freqs = frequencies(n_sc, float(subcarrier_spacing_hz), device="cpu") if n_sc > 1 else None
    parts = []
    for start in range(0, n, _CHUNK):
        b = min(_CHUNK, n - start)
        if model.startswith("CDL"):
            a, tau = channel(b, 1, 1.0)
        else:
            channel.set_topology(*topology(batch_size=b, num_ut=1, scenario=model.lower(), device="cpu"))
            a, tau = channel(1, 1.0)
        # a [b, rx=1, rx_ant=N, tx=1, tx_ant=1, paths, time=1]
        if freqs is None:
            h = a.sum(dim=-2)[:, 0, :, 0, 0, 0][:, :, None]  # [b, N, 1]
        else:
            h = to_ofdm(freqs, a, tau)[:, 0, :, 0, 0, 0, :]  # [b, N, n_sc]
        parts.append(h.detach().cpu().numpy().astype(np.complex128))
    h = np.concatenate(parts)
    power = np.sum(np.abs(h) ** 2, axis=(1, 2), keepdims=True)
    if not np.all(power > 0):
        raise InvalidInputError(f"Sionna returned {int(np.sum(power == 0))} all-zero channel(s) for {model}")
    h = h * np.sqrt(h.shape[1] * h.shape[2] / power)
    return xr.DataArray(h[..., None], dims=CHANNEL_DIMS, name="h",
                        attrs={"source": f"Sionna 3GPP TR 38.901 {model} (uplink, {n_antennas}-antenna ULA)",
                               "carrier_hz": float(carrier_hz), "model": model})
