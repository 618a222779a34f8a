"""Channel metrics (Böck et al., ICML 2025, Sec. 5; research note §4.4). Each states its formula and unit.

* :func:`nmse` — ``Σ_i ‖ĥ_i − h_i‖² / Σ_i ‖h_i‖²`` (a ratio; ``10 log10`` of it is "NMSE in dB");
* :func:`power_profile` — mean path power per grid value along one axis, normalised to sum 1
  (power–angle profile, power–delay profile);
* :func:`rms_spread` — power-weighted RMS spread ``sqrt(Σ p (x − x̄)² / Σ p)``, ``x̄ = Σ p x / Σ p``, per
  channel (3GPP TR 38.901 §7.5's RMS angle / delay spread without angle wrapping); NaN entries (a
  NaN-padded path table) are absent paths, a channel with no path has a NaN spread;
* :func:`spread_distances` — 1-Wasserstein distance between the per-channel spread distributions of two
  channel sets (the engine's exact :func:`scigen.core.metrics.w1`), in degrees / nanoseconds. Angles
  are radians; a ``path_angle`` whose ``units`` attribute says degrees is converted, and angles beyond
  ±π without it are refused (degrees passed as radians would give spreads 57× too large);
* :func:`empirical_cdf` — sorted values and their CDF ``i/n``;
* :func:`spectral_efficiency` — ``log2(1 + ‖h‖²/σ²)`` bits/s/Hz per channel (matched-filter receive SNR).
"""

from __future__ import annotations

import math

import numpy as np
import xarray as xr

__all__ = ["empirical_cdf", "nmse", "nmse_db", "power_profile", "rms_spread", "spectral_efficiency",
           "spread_distances"]


def nmse(h_hat, h) -> float:
    """``Σ‖ĥ − h‖² / Σ‖h‖²`` over all channels and entries."""
    h_hat, h = np.asarray(h_hat), np.asarray(h)
    if h_hat.shape != h.shape:
        from scigen.core.errors import InvalidInputError

        raise InvalidInputError(f"estimate has shape {h_hat.shape}, channels {h.shape}; expected equal shapes")
    return float(np.sum(np.abs(h_hat - h) ** 2) / np.sum(np.abs(h) ** 2))


def nmse_db(h_hat, h) -> float:
    """``10 log10 NMSE``."""
    return 10.0 * math.log10(nmse(h_hat, h))


def power_profile(values, powers, grid) -> np.ndarray:
    """Mean power per grid point: paths ``values [B, P]`` (snapped to the nearest of ``grid [G]``) with
    ``powers [B, P]``; returns ``[G]`` summing to 1."""
    values, powers, grid = np.asarray(values, float), np.asarray(powers, float), np.asarray(grid, float)
    idx = np.abs(values.reshape(-1, 1) - grid[None, :]).argmin(1)
    prof = np.bincount(idx, weights=powers.reshape(-1), minlength=len(grid))
    return prof / max(prof.sum(), 1e-300)


def rms_spread(values, powers) -> np.ndarray:
    """Power-weighted RMS spread per row of ``values [B, P]`` with ``powers [B, P]`` (module docstring).
    A path whose value or power is NaN is absent (NaN padding); a row without a path gives NaN."""
    x, p = np.asarray(values, float), np.asarray(powers, float)
    if x.shape != p.shape:
        from scigen.core.errors import InvalidInputError

        raise InvalidInputError(f"path values {x.shape} and powers {p.shape} must have the same shape (sample, path)")
    present = ~(np.isnan(x) | np.isnan(p))
    x, p = np.where(present, x, 0.0), np.where(present, p, 0.0)
    total = p.sum(1, keepdims=True)
    w = p / np.clip(total, 1e-300, None)
    mean = (w * x).sum(1, keepdims=True)
    out = np.sqrt((w * (x - mean) ** 2).sum(1))
    return np.where(present.any(1), out, np.nan)


def empirical_cdf(values) -> tuple[np.ndarray, np.ndarray]:
    """``(sorted values, (1..n)/n)``."""
    v = np.sort(np.asarray(values, float).ravel())
    return v, np.arange(1, len(v) + 1) / len(v)


def spectral_efficiency(h, noise_var) -> np.ndarray:
    """``log2(1 + ‖h_i‖² / σ²)`` per channel, ``h [B, ...]`` complex, ``noise_var`` scalar or ``[B]``."""
    h = np.asarray(h)
    g = np.sum(np.abs(h.reshape(h.shape[0], -1)) ** 2, axis=1)
    return np.log2(1.0 + g / np.asarray(noise_var, float))


def _w1(a: np.ndarray, b: np.ndarray) -> float:
    import torch

    from scigen.core.metrics import w1

    return float(w1(torch.as_tensor(a, dtype=torch.float64)[:, None], torch.as_tensor(b, dtype=torch.float64)[:, None]))


_DEGREES = ("deg", "degree", "degrees", "°")


def path_values(ds: xr.Dataset, var: str, name: str = "data") -> np.ndarray:
    """``ds[var]`` as float, angles (``path_angle``, ``path_elevation``) in radians: converted when the
    variable's ``units`` attribute says degrees, refused when beyond ±π without it."""
    from scigen.core.errors import InvalidInputError

    v = np.asarray(ds[var].values, float)
    if var in ("path_angle", "path_elevation"):
        units = str(ds[var].attrs.get("units", "rad")).strip().lower()
        if units in _DEGREES:
            return np.radians(v)
        if units not in ("rad", "radian", "radians"):
            raise InvalidInputError(f"{name}.{var} has units {units!r}; use 'rad' (or 'deg' to have it converted)")
        big = np.abs(v[~np.isnan(v)])
        if big.size and big.max() > math.pi + 1e-9:
            raise InvalidInputError(f"{name}.{var} has |angle| up to {big.max():.4g} > π: angles are radians. Degrees? "
                                    f"convert them (np.radians) or set {name}['{var}'].attrs['units'] = 'deg'")
    return v


def spread_distances(generated: xr.Dataset, reference: xr.Dataset) -> dict[str, float]:
    """W1 between the per-channel RMS angle spreads (degrees) and delay spreads (ns) of two Datasets
    with ``path_angle``/``path_delay`` and ``path_power`` ``(sample, path)``; an axis whose spreads are
    all zero in the reference (absent in the configuration) is left out. NaN-padded paths are absent
    (:func:`rms_spread`); channels without any path are left out of the distance (so is the metric when
    no channel has a path). A planar array's samples (``path_vertical_angle``) are compared on the
    horizontal spatial angle, to which the reference's azimuth and ``path_elevation`` are converted."""
    out = {}
    for var, key, scale in (("path_angle", "angle_spread_W1_deg", 180 / math.pi), ("path_delay", "delay_spread_W1_ns", 1e9)):
        if var not in generated or var not in reference:
            continue
        ref_values = path_values(reference, var, "reference")
        if var == "path_angle" and "path_vertical_angle" in generated and "path_elevation" in reference:
            # a planar array's atoms are spatial angles: the reference's azimuth φ at elevation ε is the horizontal
            # spatial angle asin(cos ε sin φ) (scigen.wireless.dictionaries.upa_atoms)
            el = path_values(reference, "path_elevation", "reference")
            ref_values = np.arcsin(np.clip(np.cos(el) * np.sin(ref_values), -1.0, 1.0))
        ref = rms_spread(ref_values, reference["path_power"].values) * scale
        ref = ref[~np.isnan(ref)]
        if not np.any(ref > 0):
            continue
        gen = rms_spread(path_values(generated, var, "generated"), generated["path_power"].values) * scale
        gen = gen[~np.isnan(gen)]
        if gen.size:
            out[key] = _w1(gen, ref)
    return out
