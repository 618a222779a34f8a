"""Field I/O: NetCDF (through xarray's netCDF4 or h5netcdf engine) and Zarr (the ``[zarr]`` extra), atomic."""

from __future__ import annotations

import os
from pathlib import Path

from scigen.core.errors import InvalidInputError
from scigen.core.files import atomic_dir, atomic_path

__all__ = ["open_field", "read_field", "write_field", "write_field_blocks"]


def _engine() -> str | None:
    import importlib.util

    for name, engine in (("netCDF4", "netcdf4"), ("h5netcdf", "h5netcdf")):
        if importlib.util.find_spec(name) is not None:
            return engine
    raise InvalidInputError("writing NetCDF needs netCDF4 or h5netcdf: pip install h5netcdf")


def _is_zarr(p: Path) -> bool:
    return p.suffix == ".zarr" or (p.is_dir() and ((p / ".zgroup").exists() or (p / "zarr.json").exists()))


def write_field(field, path: str | os.PathLike[str], *, overwrite: bool = False, time_chunk: int | None = None) -> Path:
    """Write a field (or forecast) DataArray to ``.nc`` (NetCDF4) or ``.zarr``, atomically; an existing
    ``path`` is refused unless ``overwrite``. Array-valued attributes survive; ``event`` and other
    coordinates are kept. ``time_chunk``: Zarr chunks of that many frames (whole frames; what a lazy reader
    of windows wants, see :func:`open_field`); default: Zarr's own chunking."""
    p = Path(path)
    if p.exists() and not overwrite:
        raise InvalidInputError(f"{p} already exists; pass overwrite=True to replace it")
    name = field.name or "precipitation"
    ds = field.to_dataset(name=name)
    if _is_zarr(p):
        import importlib.util

        if importlib.util.find_spec("zarr") is None:
            raise InvalidInputError("writing Zarr needs the zarr package: pip install 'scigen-weather[zarr]'")
        # a fresh, exclusively created scratch folder beside the target, renamed into place; overwrite only
        # replaces a folder whose every entry this store also writes (never a user's folder)
        enc = {} if time_chunk is None else {name: {"chunks": _chunks(field, time_chunk)}}
        with atomic_dir(p, overwrite=overwrite) as tmp:
            ds.to_zarr(tmp, mode="w", encoding=enc)
        return p
    if p.suffix not in (".nc", ".nc4", ".netcdf"):
        raise InvalidInputError(f"{p}: unknown field format {p.suffix!r}; use .nc or .zarr")
    with atomic_path(p) as tmp:
        ds.to_netcdf(tmp, engine=_engine())
    return p


def _chunks(field, time_chunk: int) -> tuple[int, ...]:
    from scigen.core.validation import check_count

    check_count(time_chunk, "time_chunk")
    return tuple(int(time_chunk) if d == "time" else int(field.sizes[d]) for d in field.dims)


def write_field_blocks(blocks, path: str | os.PathLike[str], *, time_chunk: int = 8, overwrite: bool = False) -> Path:
    """Write a field larger than memory to ``.zarr`` from an iterable of consecutive pieces (DataArrays on one
    grid, times increasing), appending each along ``time``: memory holds one piece. Chunks of ``time_chunk``
    whole frames; the folder is renamed into place when the last piece is written. Returns ``path``."""
    import importlib.util

    p = Path(path)
    if not _is_zarr(p) or p.suffix != ".zarr":
        raise InvalidInputError(f"{p}: write_field_blocks writes a .zarr folder")
    if p.exists() and not overwrite:
        raise InvalidInputError(f"{p} already exists; pass overwrite=True to replace it")
    if importlib.util.find_spec("zarr") is None:
        raise InvalidInputError("writing Zarr needs the zarr package: pip install 'scigen-weather[zarr]'")
    n = 0
    with atomic_dir(p, overwrite=overwrite) as tmp:
        for k, field in enumerate(blocks):
            name = field.name or "precipitation"
            ds = field.to_dataset(name=name)
            if k == 0:
                ds.to_zarr(tmp, mode="w", encoding={name: {"chunks": _chunks(field, time_chunk)}})
            else:
                ds.to_zarr(tmp, append_dim="time")
            n += 1
        if n == 0:
            raise InvalidInputError("write_field_blocks: no pieces to write")
    return p


def open_field(path: str | os.PathLike[str], *, variable: str | None = None):
    """A NetCDF / Zarr field opened lazily (nothing but coordinates read; no dask needed) and validated block
    by block: a field larger than memory, for ``Nowcast.fit``, which then reads one window per item. For
    speed, store whole frames per chunk (:func:`write_field` ``time_chunk=``, :func:`write_field_blocks`)."""
    import xarray as xr

    from scigen.weather.data.fields import as_field

    p = Path(path)
    if not p.exists():
        raise InvalidInputError(f"{p}: no such file")
    try:
        ds = (xr.open_dataset(p, engine="zarr", chunks=None, cache=False) if _is_zarr(p)
              else xr.open_dataset(p, engine=_engine(), chunks=None, cache=False))
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"{p}: cannot be read as NetCDF/Zarr ({exc})") from None
    return as_field(ds, name=str(p), variable=variable)


def read_field(path: str | os.PathLike[str], *, variable: str | None = None):
    """Read and validate a field written by :func:`write_field` (or any NetCDF / Zarr file with one
    ``(time, y, x)`` variable and a ``units`` attribute; ``variable=`` picks one of several)."""
    import xarray as xr

    from scigen.weather.data.fields import as_field

    p = Path(path)
    if not p.exists():
        raise InvalidInputError(f"{p}: no such file")
    try:
        ds = xr.open_zarr(p) if _is_zarr(p) else xr.open_dataset(p, engine=_engine())
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"{p}: cannot be read as NetCDF/Zarr ({exc})") from None
    with ds:
        ds = ds.load()
    return as_field(ds, name=str(p), variable=variable)
