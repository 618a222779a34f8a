"""Channels and observations as xarray, validated at the boundary, and their NetCDF / HDF5 files.

* channels: complex ``h`` with dims ``(sample, antenna, subcarrier, symbol)`` (a SIMO channel has
  ``subcarrier = symbol = 1``, an OFDM grid ``antenna = 1``);
* observations: complex ``y (sample, pilot)``, ``noise_var (sample)`` (> 0) and the pilot matrix
  ``A (pilot, element)`` with ``element`` the flattened ``(antenna, subcarrier, symbol)`` index; a
  Dataset may hold both (what :func:`scigen.wireless.pilots.observe` returns).

Files: ``.nc`` (NetCDF through xarray's scipy engine) or ``.h5``/``.hdf5`` (h5py). Neither NetCDF-3
nor portable HDF5 readers agree on complex numbers, so each complex variable is stored as two real
ones, ``<name>__re`` and ``<name>__im``, and joined again on reading. Writing is atomic.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from scigen.core.errors import InvalidInputError

__all__ = ["CHANNEL_DIMS", "as_channels", "as_observations", "channel_matrix", "read_dataset", "write_dataset"]

CHANNEL_DIMS = ("sample", "antenna", "subcarrier", "symbol")
_RE, _IM = "__re", "__im"


def _describe(x: Any) -> str:
    return f"shape {tuple(np.shape(x))}, dtype {getattr(x, 'dtype', type(x).__name__)}"


def _check_complex_finite(values: np.ndarray, name: str, dims: tuple[str, ...]) -> np.ndarray:
    if not np.iscomplexobj(values):
        raise InvalidInputError(f"{name} must be complex ({' x '.join(dims)}), got real {_describe(values)}; "
                                "pass the complex baseband values (e.g. re + 1j*im)")
    if values.size == 0:
        raise InvalidInputError(f"{name} is empty ({_describe(values)}); expected dims {dims}")
    bad = ~np.isfinite(values)
    if bad.any():
        raise InvalidInputError(f"{name} ({_describe(values)}) contains {int(bad.sum())} NaN/inf value(s)")
    return values


def as_channels(data: Any, name: str = "channels") -> xr.DataArray:
    """A validated channel DataArray ``(sample, antenna, subcarrier, symbol)``, complex128.

    Takes such a DataArray, a Dataset with a variable ``h``, or a complex numpy/torch array of 4 dims
    in that order (2 dims ``[sample, antenna]`` are read as SIMO channels)."""
    if isinstance(data, xr.Dataset):
        if "h" not in data:
            raise InvalidInputError(f"{name} has no channel variable 'h' (variables: {sorted(data.data_vars)})")
        data = data["h"]
    if isinstance(data, xr.DataArray):
        if tuple(data.dims) != CHANNEL_DIMS:
            raise InvalidInputError(f"{name} has dims {tuple(data.dims)}; expected {CHANNEL_DIMS} in this order "
                                    f"(use .transpose{CHANNEL_DIMS})")
        _check_complex_finite(data.values, name, CHANNEL_DIMS)
        return data.astype(np.complex128)
    if hasattr(data, "detach"):
        data = data.detach().cpu().numpy()
    arr = np.asarray(data)
    if arr.ndim == 2:
        arr = arr[:, :, None, None]
    if arr.ndim != 4:
        raise InvalidInputError(f"{name} must have dims {CHANNEL_DIMS} (or [sample, antenna]), got {_describe(arr)}")
    _check_complex_finite(arr, name, CHANNEL_DIMS)
    return xr.DataArray(arr.astype(np.complex128), dims=CHANNEL_DIMS, name="h")


def channel_matrix(h: xr.DataArray) -> np.ndarray:
    """``[sample, element]`` flattening of channels in ``(antenna, subcarrier, symbol)`` C order."""
    return h.values.reshape(h.shape[0], -1)


def as_observations(data: Any, name: str = "observations") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(y [B, M], noise_var [B], A [M, N])`` from a Dataset with ``y``, ``noise_var`` and ``A``, each
    checked (complex where needed, matching shapes, finite, noise variances > 0)."""
    if not isinstance(data, xr.Dataset):
        raise InvalidInputError(f"{name} must be an xarray.Dataset with y (sample, pilot), noise_var (sample) and "
                                f"A (pilot, element); got {type(data).__name__}")
    missing = [v for v in ("y", "noise_var", "A") if v not in data]
    if missing:
        raise InvalidInputError(f"{name} lacks {missing} (variables: {sorted(data.data_vars)}); expected y (sample, "
                                "pilot), noise_var (sample) and A (pilot, element)")
    for var, dims in (("y", ("sample", "pilot")), ("noise_var", ("sample",)), ("A", ("pilot", "element"))):
        if tuple(data[var].dims) != dims:
            raise InvalidInputError(f"{name}.{var} has dims {tuple(data[var].dims)}; expected {dims}")
    y = _check_complex_finite(data["y"].values, f"{name}.y", ("sample", "pilot")).astype(np.complex128)
    A = _check_complex_finite(data["A"].values, f"{name}.A", ("pilot", "element")).astype(np.complex128)
    zeta = np.asarray(data["noise_var"].values)
    if not (np.issubdtype(zeta.dtype, np.number) or zeta.dtype == bool):
        raise InvalidInputError(f"{name}.noise_var must hold numbers (noise variance per sample, linear scale), "
                                f"got dtype {zeta.dtype} (first value {zeta.ravel()[:1].tolist()})")
    if np.iscomplexobj(zeta) or not np.all(np.isfinite(zeta)) or not np.all(zeta > 0):
        bad = zeta[~(np.isfinite(zeta) & (np.real(zeta) > 0))] if not np.iscomplexobj(zeta) else zeta[:1]
        raise InvalidInputError(f"{name}.noise_var must be real, finite and > 0 per sample; got {bad[:3].tolist()} "
                                f"({_describe(zeta)})")
    return y, zeta.astype(np.float64), A


# ---------------------------------------------------------------------------------------------- files
def _encode(ds: xr.Dataset) -> xr.Dataset:
    out = xr.Dataset(attrs=dict(ds.attrs))
    for k, v in ds.variables.items():
        if k in ds.coords:
            continue
        if np.iscomplexobj(v.values):
            out[k + _RE] = (v.dims, np.real(v.values))
            out[k + _IM] = (v.dims, np.imag(v.values))
        else:
            out[k] = (v.dims, v.values)
    for k, v in ds.coords.items():
        out = out.assign_coords({k: (v.dims, v.values)})
    return out


def _decode(ds: xr.Dataset) -> xr.Dataset:
    out = xr.Dataset(attrs=dict(ds.attrs), coords=ds.coords)
    for k in ds.data_vars:
        if k.endswith(_IM):
            continue
        if k.endswith(_RE):
            base = k[: -len(_RE)]
            if base + _IM not in ds:
                raise InvalidInputError(f"variable {k} has no imaginary part {base + _IM}")
            out[base] = (ds[k].dims, ds[k].values + 1j * ds[base + _IM].values)
        else:
            out[k] = ds[k]
    return out


def write_dataset(ds: xr.Dataset | xr.DataArray, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Write channels / observations to ``.nc`` or ``.h5``/``.hdf5``, atomically; an existing file is
    kept unless ``overwrite=True``."""
    from scigen.core.files import atomic_path

    p = Path(path)
    if p.exists() and not overwrite:
        raise InvalidInputError(f"{p} exists; pass overwrite=True to replace it")
    if isinstance(ds, xr.DataArray):
        ds = ds.to_dataset(name=ds.name or "h")
    enc = _encode(ds)
    with atomic_path(p) as tmp:
        if p.suffix in (".h5", ".hdf5"):
            import h5py

            with h5py.File(tmp, "w") as f:
                for k, v in {**enc.coords, **enc.data_vars}.items():
                    d = f.create_dataset(k, data=v.values)
                    d.attrs["dims"] = ",".join(v.dims)
                    d.attrs["is_coord"] = k in enc.coords
                for k, v in enc.attrs.items():
                    f.attrs[k] = v
        elif p.suffix in (".nc", ".netcdf"):
            enc.to_netcdf(tmp, engine="scipy")
        else:
            raise InvalidInputError(f"{p}: unknown channel file type {p.suffix!r}; use .nc or .h5")
    return p


def read_dataset(path: str | os.PathLike[str]) -> xr.Dataset:
    """Read a file written by :func:`write_dataset` (or any NetCDF/HDF5 file laid out the same way)."""
    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"channel file {p} does not exist")
    try:
        if p.suffix in (".h5", ".hdf5"):
            import h5py

            with h5py.File(p, "r") as f:
                coords, data = {}, {}
                for k, d in f.items():
                    dims = tuple(str(d.attrs.get("dims", "")).split(",")) if d.attrs.get("dims") else None
                    if dims is None:
                        raise InvalidInputError(f"{p}: dataset {k!r} has no 'dims' attribute")
                    (coords if d.attrs.get("is_coord") else data)[k] = (dims, d[()])
                ds = xr.Dataset(data, coords=coords, attrs={k: v for k, v in f.attrs.items()})
        elif p.suffix in (".nc", ".netcdf"):
            with xr.open_dataset(p, engine="scipy") as f:
                ds = f.load()
        else:
            raise InvalidInputError(f"{p}: unknown channel file type {p.suffix!r}; use .nc or .h5")
    except InvalidInputError:
        raise
    except Exception as exc:  # a truncated or foreign file: name it, never a deep traceback
        raise InvalidInputError(f"{p} is not a readable {p.suffix} channel file ({type(exc).__name__}: {exc})") from None
    return _decode(ds)
