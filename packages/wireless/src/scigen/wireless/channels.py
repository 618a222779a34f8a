"""Channels and observations as xarray, validated at the boundary, and their NetCDF / HDF5 files.

* channels: complex ``h`` with dims ``(sample, antenna, subcarrier, symbol)`` (a SIMO channel has
  ``subcarrier = symbol = 1``, an OFDM grid ``antenna = 1``);
* observations: complex ``y (sample, pilot)``, ``noise_var (sample)`` (> 0) and the pilot matrix
  ``A (pilot, element)`` with ``element`` the flattened ``(antenna, subcarrier, symbol)`` index; a
  Dataset may hold both (what :func:`scigen.wireless.pilots.observe` returns). A scalar ``noise_var``
  stands for every sample; a real ``A`` (a selection matrix) is cast to complex. Arrays of your own
  become such a Dataset through :func:`observations_from_arrays`, which also records the layout of
  the channel elements (antennas / subcarriers / symbols / planar ``array``) as attributes — nothing
  downstream guesses it from the width of ``A``.

Angles are radians everywhere (``path_angle``, ``path_elevation``); a path table may be NaN-padded
(samples with fewer paths): NaN entries are absent paths.

Files: ``.nc`` (NetCDF through xarray's scipy engine) or ``.h5``/``.hdf5`` (h5py). Neither NetCDF-3
nor portable HDF5 readers agree on complex numbers, so each complex variable is stored as two real
ones, ``<name>__re`` and ``<name>__im``, and joined again on reading. Writing is atomic.
:func:`read_dataset` also reads a plain HDF5 file of one complex array (native complex, or a compound
of ``r``/``i`` or ``real``/``imag`` fields), and with ``lazy=True`` returns variables that are read
only when (and as far as) they are indexed, so that ``SBGM.fit`` with ``em_chunk_size`` streams a file
larger than memory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from scigen.core.errors import InvalidInputError

__all__ = ["CHANNEL_DIMS", "GEOMETRY_KEYS", "as_channels", "as_observations", "channel_matrix", "geometry_attrs",
           "observations_from_arrays", "read_dataset", "write_dataset"]

CHANNEL_DIMS = ("sample", "antenna", "subcarrier", "symbol")
#: the attributes that state how the flattened channel elements are laid out
GEOMETRY_KEYS = ("n_antennas", "n_subcarriers", "n_symbols")
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

    Takes such a DataArray (or one whose dims are ``sample`` and some of the others, in this order:
    ``(sample, antenna)`` is a SIMO channel, ``(sample, subcarrier, symbol)`` an OFDM grid; the missing
    dims get size 1), a Dataset with a variable ``h``, or a complex numpy/torch array of 4 dims in that
    order (2 dims ``[sample, antenna]`` are read as SIMO channels)."""
    if isinstance(data, xr.Dataset):
        if "h" not in data:
            raise InvalidInputError(f"{name} has no channel variable 'h' (variables: {sorted(data.data_vars)})")
        data = data["h"]
    if isinstance(data, xr.DataArray):
        dims = tuple(data.dims)
        if dims != CHANNEL_DIMS and dims[:1] == ("sample",) and set(dims) <= set(CHANNEL_DIMS) and \
                list(dims) == [d for d in CHANNEL_DIMS if d in dims]:
            data = data.expand_dims([d for d in CHANNEL_DIMS if d not in dims]).transpose(*CHANNEL_DIMS)
        if tuple(data.dims) != CHANNEL_DIMS:
            raise InvalidInputError(f"{name} has dims {dims}; expected {CHANNEL_DIMS} in this order, or 'sample' "
                                    "followed by some of them in this order (e.g. ('sample', 'antenna') for SIMO); "
                                    f"rename / transpose (.rename({{...}}), .transpose{CHANNEL_DIMS})")
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


def as_observations(data: Any, name: str = "observations", *, load_y: bool = True,
                    ) -> tuple[Any, np.ndarray, np.ndarray]:
    """``(y [B, M], noise_var [B], A [M, N])`` from a Dataset with ``y``, ``noise_var`` and ``A``, each
    checked (``y`` complex, matching shapes, finite, noise variances > 0). A scalar ``noise_var`` (no
    dims) applies to every sample; a real ``A`` is cast to complex. ``load_y=False`` returns ``y`` as
    the (possibly lazily read) DataArray, its dims and dtype checked, its values not read: check each
    chunk read from it with :func:`check_y_chunk`."""
    if not isinstance(data, xr.Dataset):
        raise InvalidInputError(f"{name} must be an xarray.Dataset with y (sample, pilot), noise_var (sample) and "
                                f"A (pilot, element); got {type(data).__name__} (arrays of your own: "
                                "scigen.wireless.observations_from_arrays(y, noise_var, A, ...))")
    missing = [v for v in ("y", "noise_var", "A") if v not in data]
    if missing:
        raise InvalidInputError(f"{name} lacks {missing} (variables: {sorted(data.data_vars)}); expected y (sample, "
                                "pilot), noise_var (sample) and A (pilot, element)")
    for var, dims in (("y", ("sample", "pilot")), ("noise_var", ("sample",)), ("A", ("pilot", "element"))):
        if tuple(data[var].dims) != dims and not (var == "noise_var" and data[var].ndim == 0):
            raise InvalidInputError(f"{name}.{var} has dims {tuple(data[var].dims)}; expected {dims}"
                                    + (" or a scalar" if var == "noise_var" else ""))
    if load_y:
        y = _check_complex_finite(data["y"].values, f"{name}.y", ("sample", "pilot")).astype(np.complex128)
    else:
        y = data["y"]
        if not np.issubdtype(y.dtype, np.complexfloating):
            raise InvalidInputError(f"{name}.y must be complex (sample x pilot), got dtype {y.dtype}; pass the "
                                    "complex baseband values (e.g. re + 1j*im)")
    A = np.asarray(data["A"].values)
    if (np.issubdtype(A.dtype, np.number) or A.dtype == bool) and not np.iscomplexobj(A):
        A = A.astype(np.complex128)  # a real selection / combining matrix
    A = _check_complex_finite(A, f"{name}.A", ("pilot", "element")).astype(np.complex128)
    zeta = np.asarray(data["noise_var"].values)
    if zeta.ndim == 0:
        zeta = np.full(data["y"].shape[0], zeta.item() if np.issubdtype(zeta.dtype, np.number) else zeta,
                       dtype=zeta.dtype)
    if not (np.issubdtype(zeta.dtype, np.number) or zeta.dtype == bool):
        raise InvalidInputError(f"{name}.noise_var must hold numbers (noise variance per sample, linear scale), "
                                f"got dtype {zeta.dtype} (first value {zeta.ravel()[:1].tolist()})")
    if np.iscomplexobj(zeta) or not np.all(np.isfinite(zeta)) or not np.all(zeta > 0):
        bad = zeta[~(np.isfinite(zeta) & (np.real(zeta) > 0))] if not np.iscomplexobj(zeta) else zeta[:1]
        raise InvalidInputError(f"{name}.noise_var must be real, finite and > 0 per sample; got {bad[:3].tolist()} "
                                f"({_describe(zeta)})")
    return y, zeta.astype(np.float64), A


def check_y_chunk(values: np.ndarray, name: str = "observations") -> np.ndarray:
    """A chunk of ``y`` read from a lazily loaded Dataset, checked as :func:`as_observations` checks all of it."""
    return _check_complex_finite(np.asarray(values), f"{name}.y", ("sample", "pilot")).astype(np.complex128)


def geometry_attrs(n_antennas: int | None = None, n_subcarriers: int | None = None, n_symbols: int | None = None,
                   array: tuple[int, int] | None = None) -> dict[str, Any]:
    """The attributes that state the channel layout: the counts given (a missing count is 1 when any is
    given) and, for a uniform planar array, ``array = (rows, cols)`` (``n_antennas = rows·cols``)."""
    if array is not None:
        if len(array) != 2 or any(int(r) < 1 for r in array):
            raise InvalidInputError(f"array must be (rows, cols) of positive ints, got {array}")
        rows, cols = int(array[0]), int(array[1])
        if n_antennas is not None and int(n_antennas) != rows * cols:
            raise InvalidInputError(f"array={tuple(array)} has rows*cols = {rows * cols} antennas but n_antennas = "
                                    f"{n_antennas}")
        n_antennas = rows * cols
    given = {k: v for k, v in zip(GEOMETRY_KEYS, (n_antennas, n_subcarriers, n_symbols), strict=True) if v is not None}
    if not given:
        return {}
    out: dict[str, Any] = {}
    for k in GEOMETRY_KEYS:
        v = given.get(k, 1)
        if isinstance(v, bool) or int(v) != v or int(v) < 1:
            raise InvalidInputError(f"{k} must be a positive int, got {v!r}")
        out[k] = int(v)
    if array is not None:
        out["array"] = np.asarray([rows, cols])
    return out


def _as_array(x: Any, name: str) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    if isinstance(x, xr.DataArray):
        x = x.values
    arr = np.asarray(x)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise InvalidInputError(f"{name} must be numeric, got {_describe(arr)}")
    return arr


def observations_from_arrays(y: Any, noise_var: Any, A: Any = None, *, h: Any = None, n_antennas: int | None = None,
                             n_subcarriers: int | None = None, n_symbols: int | None = None,
                             array: tuple[int, int] | None = None) -> xr.Dataset:
    """The observation Dataset from plain (numpy / torch) arrays.

    Args:
        y: ``[B, M]`` complex pilots (``y = A h + n``).
        noise_var: the noise variance per sample ``[B]``, or one number for all (linear scale, > 0).
        A: ``[M, N]`` pilot / selection matrix, complex or real (cast); ``None``: the identity (every
            channel element observed, ``M = N``).
        h: optional true channels for scoring: ``[B, N]`` (flattened in ``(antenna, subcarrier, symbol)``
            order, reshaped by the counts below), or ``[B, antenna, subcarrier, symbol]``.
        n_antennas, n_subcarriers, n_symbols, array: how the ``N`` channel elements are laid out (a count
            not given is 1 once any is given; ``array=(rows, cols)``: a uniform planar array). Stored as
            attributes; required unless ``h`` is 4-D, because ``A`` alone does not say whether its
            ``N`` columns are antennas, subcarriers or symbols.

    Example: 48 OFDM pilots of a 24 x 14 grid, one antenna::

        obs = observations_from_arrays(y, 0.1, A, n_subcarriers=24, n_symbols=14)
    """
    Y = _as_array(y, "y")
    if Y.ndim != 2:
        raise InvalidInputError(f"y must be [sample, pilot], got {_describe(Y)}" +
                                ("; one observation is y[None, :]" if Y.ndim == 1 else ""))
    Y = _check_complex_finite(Y, "y", ("sample", "pilot")).astype(np.complex128)
    B, M = Y.shape
    geo = geometry_attrs(n_antennas, n_subcarriers, n_symbols, array)
    H = None
    if h is not None:
        H = _as_array(h, "h")
        if H.ndim == 4:
            hgeo = dict(zip(GEOMETRY_KEYS, (int(n) for n in H.shape[1:]), strict=True))
            clash = {k: (geo[k], hgeo[k]) for k in GEOMETRY_KEYS if k in geo and geo[k] != hgeo[k]}
            if clash:
                raise InvalidInputError(f"h has shape {H.shape} but the counts given say {clash} (given, h)")
            geo = {**hgeo, **{k: v for k, v in geo.items() if k == "array"}}
        elif H.ndim == 2:
            if not geo:
                raise InvalidInputError(f"h of shape {H.shape} is [sample, element]: pass n_antennas= / "
                                        "n_subcarriers= / n_symbols= (or array=) to say how its elements are laid out, "
                                        "or h as [sample, antenna, subcarrier, symbol]")
            n = geo["n_antennas"] * geo["n_subcarriers"] * geo["n_symbols"]
            if H.shape[1] != n:
                raise InvalidInputError(f"h has {H.shape[1]} elements per sample but the counts given make {n}")
            H = H.reshape(H.shape[0], geo["n_antennas"], geo["n_subcarriers"], geo["n_symbols"])
        else:
            raise InvalidInputError(f"h must be [sample, element] or [sample, antenna, subcarrier, symbol], got "
                                    f"{_describe(H)}")
        if H.shape[0] != B:
            raise InvalidInputError(f"h has {H.shape[0]} samples but y has {B}")
        H = _check_complex_finite(H, "h", CHANNEL_DIMS).astype(np.complex128)
    if A is None:
        N = int(np.prod(H.shape[1:])) if H is not None else M
        if N != M:
            raise InvalidInputError(f"A=None observes every element, but y has {M} pilots and h {N} elements")
        Am = np.eye(M, dtype=np.complex128)
    else:
        Am = _as_array(A, "A")
        if Am.ndim != 2 or Am.shape[0] != M:
            raise InvalidInputError(f"A must be [pilot, element] with {M} rows (the pilots of y), got {_describe(Am)}")
        Am = _check_complex_finite(Am.astype(np.complex128), "A", ("pilot", "element"))
    N = Am.shape[1]
    if geo and geo["n_antennas"] * geo["n_subcarriers"] * geo["n_symbols"] != N:
        raise InvalidInputError(f"A has {N} columns (channel elements) but the layout {geo} has "
                                f"{geo['n_antennas'] * geo['n_subcarriers'] * geo['n_symbols']}")
    z = _as_array(noise_var, "noise_var").astype(np.float64)
    if z.ndim == 0:
        z = np.full(B, float(z))
    if z.shape != (B,):
        raise InvalidInputError(f"noise_var must be one number or one per sample ({B}), got shape {z.shape}")
    if not np.all(np.isfinite(z) & (z > 0)):
        raise InvalidInputError(f"noise_var must be finite and > 0, got {z[~(np.isfinite(z) & (z > 0))][:3].tolist()}")
    ds = xr.Dataset({"y": (("sample", "pilot"), Y), "noise_var": (("sample",), z), "A": (("pilot", "element"), Am)},
                    attrs=geo)
    if H is not None:
        ds["h"] = (CHANNEL_DIMS, H)
    return ds


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


def _decode(ds: xr.Dataset, lazy: bool = False) -> xr.Dataset:
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
    if lazy:
        out.set_close(ds.close)
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


class _LazyArray:
    """An xarray backend array over an h5py dataset (or an ``re``/``im`` pair of them, joined to complex, or
    a compound of real/imaginary fields): reads only what is indexed."""

    def __init__(self, parts: tuple[Any, ...], fields: tuple[str, str] | None = None) -> None:
        self.parts, self.fields = parts, fields
        self.shape = tuple(parts[0].shape)
        complex_ = len(parts) == 2 or fields is not None or np.iscomplexobj(np.empty(0, parts[0].dtype))
        self.dtype = np.dtype(np.complex128) if complex_ else np.dtype(parts[0].dtype)

    def __getitem__(self, key):
        from xarray.core import indexing

        return indexing.explicit_indexing_adapter(key, self.shape, indexing.IndexingSupport.BASIC, self._get)

    def _get(self, key):
        if self.fields is not None:
            raw = self.parts[0][key]
            return raw[self.fields[0]] + 1j * raw[self.fields[1]]
        if len(self.parts) == 2:
            return self.parts[0][key] + 1j * self.parts[1][key]
        return self.parts[0][key]


def _lazy_variable(dims: tuple[str, ...], parts: tuple[Any, ...], fields: tuple[str, str] | None = None):
    from xarray.backends import BackendArray
    from xarray.core import indexing

    class _Backend(_LazyArray, BackendArray):  # BackendArray gives xarray the array protocol it expects
        pass

    return xr.Variable(dims, indexing.LazilyIndexedArray(_Backend(parts, fields)))


_COMPLEX_FIELDS = (("r", "i"), ("real", "imag"), ("re", "im"))

#: dims of plain (dims-less) datasets with these names
_KNOWN_DIMS = {"y": ("sample", "pilot"), "A": ("pilot", "element"), "noise_var": ("sample",)}


def _complex_fields(dtype) -> tuple[str, str] | None:
    names = tuple(dtype.names or ())
    for pair in _COMPLEX_FIELDS:
        if all(n in names for n in pair):
            return pair
    return None


def _plain_dims(key: str, shape: tuple[int, ...], dims: tuple[str, ...] | None, p: Path) -> tuple[str, ...]:
    if key in _KNOWN_DIMS and dims is None:
        want = _KNOWN_DIMS[key]
        return want if len(shape) == len(want) else ()
    if dims is not None:
        if len(dims) != len(shape):
            raise InvalidInputError(f"{p}: dims={tuple(dims)} has {len(dims)} names but dataset {key!r} has shape {shape}")
        return tuple(dims)
    if len(shape) == 4:
        return CHANNEL_DIMS
    if len(shape) == 2:
        return ("sample", "antenna")
    raise InvalidInputError(f"{p}: dataset {key!r} has shape {shape}; pass dims= naming its axes, e.g. "
                            "dims=('sample', 'subcarrier', 'symbol') for an OFDM grid (dims from "
                            f"{CHANNEL_DIMS})")


def _read_h5(p: Path, name: str | None, dims: tuple[str, ...] | None, lazy: bool) -> xr.Dataset:
    import h5py

    f = h5py.File(p, "r")
    try:
        items = {k: d for k, d in f.items() if isinstance(d, h5py.Dataset)}
        described = all(d.attrs.get("dims") is not None for d in items.values()) and items
        coords, data = {}, {}
        if described and name is None:
            for k, d in items.items():
                dd = tuple(str(d.attrs.get("dims", "")).split(",")) if d.attrs.get("dims") else ()
                if lazy and k.endswith(_RE) and k[: -len(_RE)] + _IM in items:  # joined without reading
                    data[k[: -len(_RE)]] = _lazy_variable(dd, (d, items[k[: -len(_RE)] + _IM]))
                elif lazy and k.endswith(_IM) and k[: -len(_IM)] + _RE in items:
                    continue
                else:
                    var = _lazy_variable(dd, (d,)) if lazy and d.ndim else xr.Variable(dd, d[()])
                    (coords if d.attrs.get("is_coord") else data)[k] = var
            attrs = {k: v for k, v in f.attrs.items()}
        else:  # a plain file: one complex array (the channels), or y / A / noise_var by name
            known = {k: d for k, d in items.items() if k in _KNOWN_DIMS}
            if name is not None:
                if name not in items:
                    raise InvalidInputError(f"{p} has no dataset {name!r}; datasets: {sorted(items)}")
                chosen = {name: items[name]}
            elif "y" in known:
                chosen = dict(known)
            elif len(items) == 1:
                chosen = dict(items)
            else:
                raise InvalidInputError(f"{p} holds several datasets {sorted(items)} without 'dims' attributes; pass "
                                        "name= (the channel array to read as h)")
            for k, d in chosen.items():
                fields = _complex_fields(d.dtype)
                if d.dtype.names and fields is None:
                    raise InvalidInputError(f"{p}: dataset {k!r} is a compound of {d.dtype.names}; expected a complex "
                                            f"array or fields {' / '.join('+'.join(fp) for fp in _COMPLEX_FIELDS)}")
                out = k if k in _KNOWN_DIMS else "h"
                dd = _plain_dims(k, tuple(d.shape), None if k in _KNOWN_DIMS else dims, p)
                if lazy and d.ndim:
                    var = _lazy_variable(dd, (d,), fields)
                else:
                    raw = d[()]
                    var = xr.Variable(dd, raw[fields[0]] + 1j * raw[fields[1]] if fields else raw)
                data[out] = var
            attrs = {k: v for k, v in f.attrs.items()}
        ds = xr.Dataset(data, coords=coords, attrs=attrs)
    except Exception:
        f.close()
        raise
    if not lazy:
        f.close()
    else:
        ds.set_close(f.close)
    return ds


def read_dataset(path: str | os.PathLike[str], *, name: str | None = None, dims: tuple[str, ...] | None = None,
                 lazy: bool = False) -> xr.Dataset:
    """Read a file written by :func:`write_dataset` (or any NetCDF/HDF5 file laid out the same way), or a
    plain HDF5 file: its one dataset (or the one named ``name``) of complex values (native, or a compound
    of ``r``/``i`` or ``real``/``imag`` fields) as the channels ``h``, with ``dims`` naming its axes
    (default: 4 axes are ``(sample, antenna, subcarrier, symbol)``, 2 axes ``(sample, antenna)``; 3 axes
    need ``dims``); plain datasets named ``y``, ``A``, ``noise_var`` are read as observations.

    ``lazy=True`` (HDF5): variables are read only when indexed (the file stays open until the Dataset is
    closed), for fitting with ``em_chunk_size`` on data larger than memory."""
    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"channel file {p} does not exist")
    try:
        if p.suffix in (".h5", ".hdf5"):
            ds = _read_h5(p, name, tuple(dims) if dims is not None else None, lazy)
        elif p.suffix in (".nc", ".netcdf"):
            if name is not None or dims is not None or lazy:
                raise InvalidInputError(f"{p}: name= / dims= / lazy= apply to HDF5 files (.h5); a NetCDF file names "
                                        "its variables and dims itself")
            with xr.open_dataset(p, engine="scipy") as f:
                ds = f.load()
        else:
            raise InvalidInputError(f"{p}: unknown channel file type {p.suffix!r}; use .nc or .h5")
    except InvalidInputError:
        raise
    except Exception as exc:  # a truncated or foreign file: name it, never a deep traceback
        raise InvalidInputError(f"{p} is not a readable {p.suffix} channel file ({type(exc).__name__}: {exc})") from None
    return _decode(ds, lazy)
