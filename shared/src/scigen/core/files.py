"""Atomic file writes: write to a temporary file beside the target, then ``os.replace`` it into place.

A reader never sees a half-written file, and a write that fails (or is interrupted) leaves the
previous file untouched and no temporary file behind. Every writer of the project (reports, figures,
samples, domain file formats) goes through :func:`atomic_path`; a writer of a whole folder (one file
per sample) builds it with :func:`atomic_dir`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from scigen.core.errors import InvalidInputError

__all__ = ["atomic_dir", "atomic_path", "atomic_write_text"]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` to write to; on success it replaces ``path``.

    The temporary name keeps ``path``'s suffix (``.<stem>.<pid>.tmp<suffix>``), so writers that infer
    the format from the extension (numpy, anndata, matplotlib) behave as for ``path``. The parent
    directory is created. If the block raises, the temporary file is removed and ``path`` is unchanged.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp{path.suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_path`); return ``path``."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return Path(path)


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a fresh temporary directory beside ``path`` to fill; on success it is renamed to ``path``.

    A reader (or a run killed mid-write) never finds a half-filled folder under the final name: until
    the block ends the files live in ``.<name>.<random>.tmpdir`` in the same parent (so the final
    ``os.rename`` stays on one file system). If the block raises, the temporary directory and
    everything in it are removed. An existing ``path`` (file or folder) is refused with
    :class:`~scigen.core.errors.InvalidInputError` before anything is written, and again just
    before the rename, so nothing of the user's is ever replaced.
    """
    path = Path(path)

    def refuse_existing() -> None:
        if path.exists() or path.is_symlink():
            kind = "folder" if path.is_dir() else "file"
            raise InvalidInputError(f"{path}: a {kind} of that name exists; choose a new output folder")

    refuse_existing()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmpdir", dir=path.parent))
    try:
        yield tmp
        refuse_existing()
        os.rename(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
