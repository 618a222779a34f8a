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

__all__ = ["SUFFIXES", "read_input", "write_output"]

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


def write_output(obj: Any, path: str | os.PathLike[str]) -> Path:
    """Write what ``denoise``/``sample`` returned; the suffix follows the object (``.h5ad`` / ``.npy`` / ``.nc``)."""
    import anndata

    path = Path(path)
    if isinstance(obj, anndata.AnnData):
        from scigen.singlecell.io import write_h5ad

        path = path if path.suffix == ".h5ad" else path.with_suffix(".h5ad")
        write_h5ad(obj, path)
        return path
    if type(obj).__module__.startswith("xarray"):
        path = path if path.suffix == ".nc" else path.with_suffix(".nc")
        with atomic_path(path) as tmp:
            obj.to_netcdf(tmp)
        return path
    path = path if path.suffix == ".npy" else path.with_suffix(".npy")
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, np.asarray(obj), allow_pickle=False)
    return path
