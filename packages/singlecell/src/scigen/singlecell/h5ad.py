"""Reading and writing ``.h5ad`` (HDF5 AnnData) files: every unreadable file (missing, a directory,
empty, truncated, foreign, HDF5 but not AnnData, no cells) is one :class:`InvalidInputError` naming it,
and writes go through a temporary file renamed into place (:func:`scigen.core.files.atomic_path`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scigen.core.errors import InvalidInputError

__all__ = ["H5adFiles", "open_h5ad", "read_h5ad_file", "write_h5ad"]

_MAGIC = {b"\x89PNG": "a PNG image", b"\xff\xd8\xff": "a JPEG image", b"PK\x03\x04": "a zip archive",
          b"\x80": "a Python pickle", b"\x1f\x8b": "a gzip file", b"%PDF": "a PDF"}


def _looks_like(head: bytes) -> str:
    """What the first bytes of a file that h5py cannot open suggest it is."""
    for magic, what in _MAGIC.items():
        if head.startswith(magic):
            return f"; it looks like {what}"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    return f"; it looks like a text file ({'CSV' if ',' in text else 'plain text'})" if text.strip() else ""


def open_h5ad(path, *, backed: str | None = None) -> Any:
    """``anndata.read_h5ad(path, backed=)`` of an existing file, every failure an :class:`InvalidInputError`
    naming the file: a directory, an empty, truncated or foreign (PNG, CSV, pickle, ...) file, an HDF5
    file that is not an AnnData."""
    import anndata
    import h5py

    p = Path(path)
    if p.is_dir():
        raise InvalidInputError(f"{p}: is a directory, not an .h5ad AnnData file")
    if not p.is_file():
        raise InvalidInputError(f"{p}: no such file (expected an .h5ad AnnData file)")
    if p.stat().st_size == 0:
        raise InvalidInputError(f"{p}: the file is empty (0 bytes), not an .h5ad AnnData file")
    try:
        with h5py.File(p, "r") as f:
            keys = sorted(f.keys())
    except OSError as exc:
        with open(p, "rb") as fh:
            head = fh.read(64)
        why = "truncated (shorter than its HDF5 header says)" if "truncated" in str(exc) else \
            "not an HDF5 file" + _looks_like(head)
        raise InvalidInputError(f"{p}: cannot read as an AnnData .h5ad file: {why}") from None
    if "obs" not in keys:
        raise InvalidInputError(f"{p}: an HDF5 file but not an AnnData (no 'obs' group; top-level keys: {keys[:10]})")
    try:
        return anndata.read_h5ad(p, backed=backed)
    except Exception as exc:  # anndata/h5py raise KeyError, TypeError, OSError, ... on damaged files
        raise InvalidInputError(f"{p}: cannot read as an AnnData .h5ad file ({type(exc).__name__}: {exc})") from None


def read_h5ad_file(path) -> Any:
    """:func:`open_h5ad` of a file named ``*.h5ad`` that holds at least one cell (into memory)."""
    p = Path(path)
    if p.suffix != ".h5ad" and not p.is_dir():
        raise InvalidInputError(f"{p}: expected an .h5ad file, got suffix {p.suffix!r}")
    adata = open_h5ad(p)
    if adata.n_obs == 0:
        raise InvalidInputError(f"{p}: holds no cells (n_obs == 0)")
    return adata


def write_h5ad(adata: Any, path) -> None:
    """``adata.write_h5ad(path)`` through a temporary file and a rename; pandas' string arrays allowed."""
    import anndata

    from scigen.core.files import atomic_path

    opts = {"allow_write_nullable_strings": True} if hasattr(anndata.settings, "allow_write_nullable_strings") else {}
    with anndata.settings.override(**opts) if opts else _null(), atomic_path(path) as tmp:
        adata.write_h5ad(tmp)


class H5adFiles:
    """The CLI file hooks of a System whose data and samples are AnnData: ``read_data`` reads a ``.h5ad``
    (:func:`read_h5ad_file`), ``write_samples`` writes one atomically, adding the suffix when missing."""

    @classmethod
    def read_data(cls, path) -> Any:
        return read_h5ad_file(path)

    def write_samples(self, samples: Any, path) -> Path:
        path = Path(path)
        path = path if path.suffix == ".h5ad" else path.with_suffix(".h5ad")
        write_h5ad(samples, path)
        return path


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
