"""Radar fields on xarray: the ``(time, y, x)`` DataArray every part of scigen-weather reads and writes.

A field is an ``xarray.DataArray`` with dims ``(time, y, x)``, a ``datetime64`` ``time`` coordinate,
numeric ``y`` / ``x`` coordinates, and ``attrs["units"]`` one of :data:`~scigen.weather.data.units.UNITS`.
A ``Dataset`` is accepted when it holds one data variable (or ``variable=`` names it). Time may have
gaps (separate events); the time step is the most common spacing, and windows never cross a gap.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scigen.core.errors import InvalidInputError
from scigen.core.validation import check_real
from scigen.weather.data.units import check_units, convert

__all__ = ["DIMS", "as_field", "check_same_grid", "field_blocks", "is_lazy", "make_field", "time_step", "to_units"]

DIMS = ("time", "y", "x")


def make_field(values, times, *, units: str = "mm/h", y=None, x=None, name: str = "precipitation", attrs=None):
    """Build a field DataArray from ``values [time, y, x]`` and ``times`` (anything ``pd.DatetimeIndex`` takes)."""
    import xarray as xr

    v = np.asarray(values, dtype=np.float32)
    if v.ndim != 3:
        raise InvalidInputError(f"{name}: values must be [time, y, x], got shape {v.shape}")
    t = pd.DatetimeIndex(times)
    if len(t) != v.shape[0]:
        raise InvalidInputError(f"{name}: {len(t)} times for {v.shape[0]} frames")
    y = np.arange(v.shape[1], dtype=np.float64) if y is None else np.asarray(y, dtype=np.float64)
    x = np.arange(v.shape[2], dtype=np.float64) if x is None else np.asarray(x, dtype=np.float64)
    return xr.DataArray(v, dims=DIMS, coords={"time": t, "y": y, "x": x}, name=name,
                        attrs={"units": check_units(units), **(attrs or {})})


def as_field(data, name: str = "data", *, variable: str | None = None, min_frames: int = 1):
    """Validate ``data`` as a field (see module doc) and return it as a float32 DataArray ``(time, y, x)``.

    Errors name the variable, the dimension and the value: wrong or missing dims, unknown units,
    NaN / inf, negative rain, non-increasing times, fewer than ``min_frames`` frames."""
    import xarray as xr

    if isinstance(data, xr.Dataset):
        names = list(data.data_vars)
        if variable is None and len(names) != 1:
            raise InvalidInputError(f"{name}: the Dataset holds {len(names)} variables {names}; pass variable=")
        var = variable or names[0]
        if var not in data.data_vars:
            raise InvalidInputError(f"{name}: no variable {var!r} (has {names})")
        data = data[var]
    if not isinstance(data, xr.DataArray):
        raise InvalidInputError(f"{name} must be an xarray DataArray or Dataset with dims {DIMS}, "
                                f"got {type(data).__name__}; wrap an array with "
                                "scigen.weather.data.make_field(values, times, units=...)")
    label = f"{name} ({data.name})" if data.name is not None else name
    if set(data.dims) != set(DIMS):
        raise InvalidInputError(f"{label}: dims must be {DIMS}, got {tuple(data.dims)}{_rename_hint(data.dims)}")
    da = data.transpose(*DIMS)
    if "units" not in da.attrs:
        raise InvalidInputError(f"{label}: attrs['units'] is missing; set one of mm/h, dBZ, kg/m2, VIL digital")
    units = check_units(da.attrs["units"], f"{label} units")
    if "time" not in da.coords or not np.issubdtype(da["time"].dtype, np.datetime64):
        raise InvalidInputError(f"{label}: dimension 'time' needs a datetime64 coordinate")
    t = pd.DatetimeIndex(da["time"].values)
    if len(t) < min_frames:
        raise InvalidInputError(f"{label}: dimension 'time' has {len(t)} frames; at least {min_frames} are needed")
    if len(t) > 1 and not np.all(np.diff(t.asi8) > 0):
        i = int(np.argmin(np.diff(t.asi8) > 0))
        raise InvalidInputError(f"{label}: dimension 'time' must increase; {t[i]} is followed by {t[i + 1]}")
    check_real(da, label, hint="precipitation is a real field in mm/h, dBZ, kg/m2 or VIL digital")
    if is_lazy(da):  # on disk (xr.open_zarr / open_dataset): checked block by block, returned still lazy
        for t0, v in field_blocks(da):
            _check_values(v, label, units, t, t0)
        out = da.copy()
        out.attrs["units"] = units
        return out
    v = np.asarray(da.values, dtype=np.float32)
    _check_values(v, label, units, t, 0)
    out = da.copy(data=v)
    out.attrs["units"] = units
    return out


def is_lazy(field) -> bool:
    """True when ``field``'s values are not in memory: a DataArray opened lazily from a file (``xr.open_zarr``,
    ``xr.open_dataset``, with or without dask chunks). Such a field is read a block / window at a time."""
    return not field.variable._in_memory


#: the values one block of a streaming pass reads, 4 MiB of float32 (:func:`field_blocks`)
BLOCK_VALUES = 1 << 20


def field_blocks(field, values_per_block: int | None = None):
    """``(first frame, float32 values [frames, y, x])`` blocks of about ``values_per_block`` values
    (:data:`BLOCK_VALUES` by default),
    frames in order: one streaming pass over a field too large for memory (only one block is read at a time)."""
    frame = int(field.sizes["y"]) * int(field.sizes["x"])
    step = max(1, (values_per_block or BLOCK_VALUES) // max(frame, 1))
    for t0 in range(0, int(field.sizes["time"]), step):
        yield t0, np.asarray(field.isel(time=slice(t0, t0 + step)).values, dtype=np.float32)


def _check_values(v: np.ndarray, label: str, units: str, t, t0: int) -> None:
    """NaN / inf and negative rain in the frames ``t0 ..`` of ``v`` (messages give the time and pixel)."""
    bad = ~np.isfinite(v)
    if bad.any():
        ti, yi, xi = (int(a[0]) for a in np.nonzero(bad))
        ti += t0
        fill = "the no-echo value (e.g. -15 dBZ)" if units == "dBZ" else f"0 {units}"
        raise InvalidInputError(f"{label}: {int(bad.sum())} NaN/inf values, the first at time={t[ti]}, y={yi}, "
                                f"x={xi}; the model has no no-data mask: crop to the radar's coverage, or fill "
                                f"no-data with {fill} (field.fillna(...)) if no echo is what it means")
    if units != "dBZ" and (v < 0).any():
        ti, yi, xi = (int(a[0]) for a in np.nonzero(v < 0))
        raise InvalidInputError(f"{label}: negative {units} value {float(v[ti, yi, xi]):.4g} at time={t[ti + t0]}, "
                                f"y={yi}, x={xi}; rain cannot be negative")


_DIM_NAMES = {"time": ("t", "times", "valid_time", "datetime", "date", "frame"),
              "y": ("lat", "latitude", "row", "rows", "north", "northing", "south_north", "j", "yc", "projection_y_coordinate"),
              "x": ("lon", "longitude", "col", "cols", "column", "east", "easting", "west_east", "i", "xc",
                    "projection_x_coordinate")}


def _rename_hint(dims) -> str:
    """``; rename them: field.rename(...)`` when every dim has a recognisable name, else a generic hint."""
    mapping = {}
    for d in dims:
        for canon, names in _DIM_NAMES.items():
            if d == canon or str(d).lower() in names:
                if d != canon:
                    mapping[d] = canon
                break
    if len(dims) == 3 and len(mapping) + sum(d in DIMS for d in dims) == 3 and mapping:
        return f"; rename them: field.rename({mapping!r})"
    extra = "; select or drop the extra dimension(s) (field.isel(...) / field.squeeze())" if len(dims) > 3 else ""
    return f"{extra}; name the dimensions time (datetime64), y (rows) and x (columns) with field.rename({{...}})"


def time_step(field) -> pd.Timedelta:
    """The most common spacing of ``field``'s times (the data's time step)."""
    t = pd.DatetimeIndex(field["time"].values)
    if len(t) < 2:
        raise InvalidInputError("a single frame has no time step")
    d = pd.Series(np.diff(t.asi8)).mode()
    return pd.Timedelta(int(d.iloc[0]), "ns")


def check_same_grid(a, b, name_a: str = "context", name_b: str = "target") -> None:
    """``InvalidInputError`` unless ``a`` and ``b`` share shape, ``y`` / ``x`` coordinates and units."""
    for dim in ("y", "x"):
        if a.sizes[dim] != b.sizes[dim] or not np.allclose(a[dim].values, b[dim].values):
            raise InvalidInputError(f"{name_a} and {name_b} lie on different grids: dimension {dim!r} has "
                                    f"{a.sizes[dim]} vs {b.sizes[dim]} points or other coordinates")
    if a.attrs["units"] != b.attrs["units"]:
        raise InvalidInputError(f"{name_a} is in {a.attrs['units']} and {name_b} in {b.attrs['units']}")


def to_units(field, units: str, **options):
    """The field converted to ``units`` (see :func:`scigen.weather.data.units.convert`)."""
    dst = check_units(units)
    out = field.copy(data=convert(field.values, field.attrs["units"], dst, **options).astype(np.float32))
    out.attrs["units"] = dst
    return out
