"""Pilot / compression matrices and noisy compressed observations ``y = A h + n`` (Böck et al. 2025, Sec. 3).

``A [M, N]``: ``"selection"`` keeps ``M`` of the ``N`` channel entries (random pilot positions on an
OFDM grid, or a subset of antennas), ``"gaussian"`` is a random complex Gaussian combiner with
``E|A_mn|² = 1/N`` (each row of unit expected norm, so every pilot sees the per-entry SNR), ``"identity"``
observes every entry.
The noise is ``n ~ CN(0, ζ I)`` with ``ζ = 10^{−SNR/10}`` for channels normalised to ``E‖h‖² = N``
(SNR per entry); a range ``(lo, hi)`` draws one SNR in dB per sample uniformly.
"""

from __future__ import annotations

import math

import numpy as np
import xarray as xr

from scigen.core.errors import InvalidInputError
from scigen.wireless.channels import as_channels, channel_matrix

__all__ = ["observe", "pilot_matrix", "snr_to_noise_var"]


def pilot_matrix(n_elements: int, n_pilots: int, kind: str = "selection", *, seed: int = 0) -> np.ndarray:
    """``A [n_pilots, n_elements]`` complex128 of the given ``kind`` (see the module docstring)."""
    if not 1 <= n_pilots <= n_elements:
        raise InvalidInputError(f"n_pilots must lie in [1, n_elements={n_elements}], got {n_pilots}")
    rng = np.random.default_rng(seed)
    if kind == "selection":
        idx = np.sort(rng.choice(n_elements, n_pilots, replace=False))
        A = np.zeros((n_pilots, n_elements), dtype=np.complex128)
        A[np.arange(n_pilots), idx] = 1.0
        return A
    if kind == "gaussian":
        return (rng.standard_normal((n_pilots, n_elements)) + 1j * rng.standard_normal((n_pilots, n_elements))) / \
            math.sqrt(2 * n_elements)
    if kind == "identity":
        if n_pilots != n_elements:
            raise InvalidInputError(f"an identity pilot matrix needs n_pilots == n_elements ({n_elements}), got {n_pilots}")
        return np.eye(n_elements, dtype=np.complex128)
    raise InvalidInputError(f"unknown pilot matrix kind {kind!r}; valid: selection, gaussian, identity")


def snr_to_noise_var(snr_db) -> np.ndarray:
    """``ζ = 10^{−SNR/10}`` (channels with unit average power per entry)."""
    return 10.0 ** (-np.asarray(snr_db, dtype=np.float64) / 10.0)


def observe(channels, A: np.ndarray, snr_db: float | tuple[float, float], *, seed: int = 0) -> xr.Dataset:
    """The Dataset of ``channels`` (kept as ``h`` with its path variables) plus ``y = A h + n``,
    ``noise_var`` and ``A`` (see the module docstring). ``A``'s columns must match the channels'
    flattened size ``antenna·subcarrier·symbol``."""
    ds = channels if isinstance(channels, xr.Dataset) else as_channels(channels).to_dataset(name="h")
    h = as_channels(ds, "channels")
    H = channel_matrix(h)
    A = np.asarray(A)
    if A.ndim != 2 or A.shape[1] != H.shape[1]:
        raise InvalidInputError(f"pilot matrix A has shape {A.shape}; expected (n_pilots, {H.shape[1]}) for channels of "
                                f"shape {tuple(h.shape)} (antenna*subcarrier*symbol = {H.shape[1]})")
    rng = np.random.default_rng(seed)
    B = H.shape[0]
    snr = np.full(B, float(snr_db)) if np.ndim(snr_db) == 0 else rng.uniform(snr_db[0], snr_db[1], B)
    zeta = snr_to_noise_var(snr)
    noise = (rng.standard_normal((B, A.shape[0])) + 1j * rng.standard_normal((B, A.shape[0]))) * np.sqrt(zeta / 2)[:, None]
    y = H @ A.T + noise
    # observing a Dataset that already holds observations replaces them (another pilot count must not clash with
    # the old "pilot" dimension inside xarray)
    out = ds.drop_vars([v for v in ("y", "noise_var", "snr_db", "A") if v in ds])
    out = out.drop_dims([d for d in ("pilot",) if d in out.dims])
    out["y"] = (("sample", "pilot"), y)
    out["noise_var"] = (("sample",), zeta)
    out["snr_db"] = (("sample",), snr)
    out["A"] = (("pilot", "element"), A.astype(np.complex128))
    return out
