"""Files of the ``scigen singlecell inverseflow`` verbs: ``.h5ad`` (cells), ``.npy`` (an image stack
``[N, H, W]`` / ``[N, C, H, W]`` or a cells × features matrix) and ``.nc`` (an xarray DataArray), written
atomically."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from scigen.core.errors import InvalidInputError
from scigen.core.files import atomic_path

__all__ = ["SUFFIXES", "check_output_suffix", "read_input", "write_output"]

SUFFIXES = (".h5ad", ".npy", ".nc")


def read_input(path: str | os.PathLike[str]) -> Any:
    """An AnnData (``.h5ad``), a numpy array (``.npy``, never unpickled) or an xarray DataArray (``.nc``)."""
    path = Path(path)
    if not path.is_file():
        raise InvalidInputError(f"data file {path} does not exist (or is not a file)")
    suffix = path.suffix.lower()
    if suffix == ".h5ad":
        from scigen.singlecell.io import read_h5ad_file

        return read_h5ad_file(path)
    if suffix == ".npy":
        try:
            return np.load(path, allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:
            raise InvalidInputError(f"{path} is not a readable .npy array ({exc})") from None
    if suffix == ".nc":
        import xarray as xr

        try:
            ds = xr.open_dataarray(path).load()
        except Exception as exc:  # noqa: BLE001 - any reader failure becomes one named error
            raise InvalidInputError(f"{path} is not a readable NetCDF DataArray ({type(exc).__name__}: {exc})") from None
        return ds
    raise InvalidInputError(f"{path}: unknown data format {suffix!r}; use one of {', '.join(SUFFIXES)}")


def check_output_suffix(data: str | os.PathLike[str], out: str | os.PathLike[str]) -> None:
    """Refuse, before any work, an ``--out`` whose suffix differs from ``--data``'s: the output has the
    input's format, and writing it under another name would silently replace a different file."""
    data, out = Path(data), Path(out)
    if data.suffix in SUFFIXES and out.suffix != data.suffix:  # an unknown --data format is named by read_input
        raise InvalidInputError(f"--out {out}: the denoised output has the format of --data ({data.suffix}), so "
                                f"--out must end in {data.suffix!r}, got {out.suffix or 'no suffix'!r}")


def _format_of(obj: Any) -> str:
    import anndata

    if isinstance(obj, anndata.AnnData):
        return ".h5ad"
    return ".nc" if type(obj).__module__.startswith("xarray") else ".npy"


def write_output(obj: Any, path: str | os.PathLike[str]) -> Path:
    """Write what ``denoise``/``sample`` returned to ``path``, whose suffix must name the object's format
    (``.h5ad`` for AnnData, ``.nc`` for xarray, ``.npy`` for arrays); another suffix is refused, never
    swapped (a swapped name could be an existing file of the user's)."""
    path = Path(path)
    suffix = _format_of(obj)
    if path.suffix != suffix:
        raise InvalidInputError(f"{path}: this output is written as {suffix}; give a path ending in {suffix!r}")
    if suffix == ".h5ad":
        from scigen.singlecell.io import write_h5ad

        write_h5ad(obj, path)
        return path
    if suffix == ".nc":
        with atomic_path(path) as tmp:
            obj.to_netcdf(tmp)
        return path
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, np.asarray(obj), allow_pickle=False)
    return path
