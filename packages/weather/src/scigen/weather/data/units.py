"""Units of radar fields and the conversions between them.

* rain rate ``"mm/h"`` <-> reflectivity ``"dBZ"`` by the Z-R relation ``Z = a R^b`` (Marshall & Palmer
  1948: ``a = 200``, ``b = 1.6``), ``dBZ = 10 log10 Z`` (pysteps ``utils.conversion``). A rate of 0
  maps to ``zerovalue`` dBZ, and any reflectivity at or below ``zerovalue`` back to 0 mm/h.
* SEVIR's VIL byte (``"VIL digital"``, 0..255) <-> vertically integrated liquid ``"kg/m2"`` by the
  piecewise decoding of the SEVIR documentation (Veillette et al. 2020): ``0`` for ``p <= 5``,
  ``(p − 2) / 90.66`` for ``5 < p <= 18``, ``exp((p − 83.9) / 38.9)`` above.
* VIL ``"kg/m2"`` <-> ``"dBZ"`` by Greene & Clark (1972, eq. 1) ``VIL = 3.44e-6 ∫ Z^{4/7} dh`` for a
  column of uniform reflectivity ``depth_m`` deep (an assumption: real columns are not uniform).
"""

from __future__ import annotations

import re

import numpy as np

from scigen.core.errors import InvalidInputError

__all__ = ["UNITS", "check_units", "convert", "dbz_to_rainrate", "dbz_to_vil", "rainrate_to_dbz",
           "vil_digital_to_kgm2", "vil_kgm2_to_digital", "vil_to_dbz"]

#: accepted units (aliases are mapped onto these names)
UNITS = ("mm/h", "dBZ", "kg/m2", "VIL digital")
_ALIASES = {"mm/h": "mm/h", "mm h-1": "mm/h", "mm/hr": "mm/h", "dbz": "dBZ", "kg/m2": "kg/m2", "kg m-2": "kg/m2",
            "kg/m^2": "kg/m2", "vil digital": "VIL digital", "vil": "VIL digital"}


_RATE = re.compile(r"^(mm|millimet(er|re)s?)\s*(/|per|\s|\.|·)\s*(h|hr|hour)s?(\s*(\*\*|\^)?\s*-1)?$")
_AREA = re.compile(r"^(kg)\s*(/|per|\s|\.|·)\s*m\s*((\*\*|\^)?\s*-?2|²)$")
_HINTS = {"mm": "it reads as an accumulation: divide by the time step in hours and set units='mm/h'",
          "kg m-2 s-1": "it reads as a flux: multiply by 3600 for mm/h (1 kg/m² of water is 1 mm) and set units='mm/h'",
          "kg/m2/s": "it reads as a flux: multiply by 3600 for mm/h and set units='mm/h'",
          "mm/s": "multiply by 3600 for mm/h", "mm s-1": "multiply by 3600 for mm/h",
          "m/s": "multiply by 3.6e6 for mm/h", "mm/day": "divide by 24 for mm/h", "mm/d": "divide by 24 for mm/h", "z": "it reads as linear reflectivity: take 10·log10 and set units='dBZ'",
          "mm6/m3": "it reads as linear reflectivity: take 10·log10 and set units='dBZ'"}


def check_units(units: object, name: str = "units") -> str:
    """The canonical name of ``units`` (one of :data:`UNITS` or an alias); ``InvalidInputError`` otherwise.

    Rain-rate spellings (``mm/h``, ``mm h-1``, ``mm hr-1``, ``mm h**-1``, ``mm.h^-1``, ``mm/hour``,
    ``millimeters per hour``, any case) and VIL's (``kg/m2``, ``kg m-2``, ``kg m**-2``, ``kg/m²``) are
    aliases; other units (an accumulation in mm, a flux, linear Z) are refused with the conversion to apply."""
    key = " ".join(str(units).strip().lower().split()) if isinstance(units, str) else None
    if key is not None and key not in _ALIASES:
        if _RATE.match(key):
            key = "mm/h"
        elif _AREA.match(key):
            key = "kg/m2"
    if key not in _ALIASES:
        hint = _HINTS.get(key or "")
        raise InvalidInputError(f"{name}: unknown units {units!r}; valid: {', '.join(UNITS)}"
                                + (f"; {units!r} is not a rain rate: {hint}" if hint else ""))
    return _ALIASES[key]


def rainrate_to_dbz(r, a: float = 200.0, b: float = 1.6, zerovalue: float = -15.0) -> np.ndarray:
    """mm/h -> dBZ: ``10 log10(a R^b)``; ``R <= 0`` (and anything below ``zerovalue``) -> ``zerovalue``."""
    r = np.asarray(r, dtype=np.float64)
    with np.errstate(divide="ignore"):
        z = 10 * np.log10(a * np.where(r > 0, r, np.nan) ** b)
    return np.where(np.isnan(r), np.nan, np.where((r > 0) & (z > zerovalue), z, zerovalue))


def dbz_to_rainrate(dbz, a: float = 200.0, b: float = 1.6, zerovalue: float = -15.0) -> np.ndarray:
    """dBZ -> mm/h: ``(10^{dBZ/10} / a)^{1/b}``; ``dBZ <= zerovalue`` -> 0."""
    d = np.asarray(dbz, dtype=np.float64)
    r = (10 ** (d / 10) / a) ** (1 / b)
    return np.where(np.isnan(d), np.nan, np.where(d > zerovalue, r, 0.0))


def vil_digital_to_kgm2(p) -> np.ndarray:
    """SEVIR VIL byte 0..255 -> kg/m² (piecewise decoding of the SEVIR documentation)."""
    p = np.asarray(p, dtype=np.float64)
    return np.where(p <= 5, 0.0, np.where(p <= 18, (p - 2) / 90.66, np.exp((p - 83.9) / 38.9)))


def vil_kgm2_to_digital(v) -> np.ndarray:
    """kg/m² -> SEVIR VIL byte (the inverse of :func:`vil_digital_to_kgm2`, rounded, clipped to 0..254)."""
    v = np.asarray(v, dtype=np.float64)
    lo = 90.66 * v + 2  # (p - 2) / 90.66 branch, 5 < p <= 18
    with np.errstate(divide="ignore"):
        hi = 38.9 * np.log(np.where(v > 0, v, np.nan)) + 83.9
    p = np.where(v <= (5 - 2) / 90.66, 0.0, np.where(lo <= 18, lo, hi))
    return np.clip(np.round(np.nan_to_num(p, nan=0.0)), 0, 254)


def vil_to_dbz(v, depth_m: float = 5000.0, zerovalue: float = -15.0) -> np.ndarray:
    """kg/m² -> dBZ for a uniform column ``depth_m`` deep: ``Z = (VIL / (3.44e-6 · depth))^{7/4}``."""
    v = np.asarray(v, dtype=np.float64)
    with np.errstate(divide="ignore"):
        z = 10 * np.log10((np.where(v > 0, v, np.nan) / (3.44e-6 * depth_m)) ** 1.75)
    return np.where(np.isnan(v), np.nan, np.where((v > 0) & (z > zerovalue), z, zerovalue))


def dbz_to_vil(dbz, depth_m: float = 5000.0, zerovalue: float = -15.0) -> np.ndarray:
    """dBZ -> kg/m² for a uniform column ``depth_m`` deep: ``3.44e-6 · Z^{4/7} · depth``."""
    d = np.asarray(dbz, dtype=np.float64)
    v = 3.44e-6 * (10 ** (d / 10)) ** (4 / 7) * depth_m
    return np.where(np.isnan(d), np.nan, np.where(d > zerovalue, v, 0.0))


_TO_DBZ = {"mm/h": rainrate_to_dbz, "kg/m2": vil_to_dbz, "dBZ": lambda x, **_: np.asarray(x, dtype=np.float64),
           "VIL digital": lambda x, **kw: vil_to_dbz(vil_digital_to_kgm2(x), **kw)}
_FROM_DBZ = {"mm/h": dbz_to_rainrate, "kg/m2": dbz_to_vil, "dBZ": lambda x, **_: np.asarray(x, dtype=np.float64),
             "VIL digital": lambda x, **kw: vil_kgm2_to_digital(dbz_to_vil(x, **kw))}


def convert(values, src: str, dst: str, **options) -> np.ndarray:
    """Convert ``values`` from ``src`` to ``dst`` units (through dBZ when needed; VIL byte <-> kg/m² directly).

    ``options``: ``a``, ``b`` (Z-R), ``depth_m`` (VIL column), ``zerovalue`` (dBZ of no echo)."""
    src, dst = check_units(src, "src"), check_units(dst, "dst")
    if src == dst:
        return np.asarray(values, dtype=np.float64)
    if {src, dst} == {"kg/m2", "VIL digital"}:
        return vil_digital_to_kgm2(values) if src == "VIL digital" else vil_kgm2_to_digital(values)
    zr = {k: v for k, v in options.items() if k in ("a", "b", "zerovalue")}
    vil = {k: v for k, v in options.items() if k in ("depth_m", "zerovalue")}
    d = _TO_DBZ[src](values, **(zr if src == "mm/h" else vil))
    return _FROM_DBZ[dst](d, **(zr if dst == "mm/h" else vil))
