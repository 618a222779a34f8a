"""Atomic file writes: write to a temporary file beside the target, then ``os.replace`` it into place.

A reader never sees a half-written file, and a write that fails (or is interrupted) leaves the
previous file untouched and no temporary file behind. Every writer of the project (reports, figures,
samples, domain file formats) goes through :func:`atomic_path`; a writer of a whole folder (a
Bookshelf design with its plot and metrics) through :func:`atomic_dir`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

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
def atomic_dir(path: str | os.PathLike[str], *, overwrite: bool = False) -> Iterator[Path]:
    """Yield a new empty directory beside ``path`` to fill; on success it is renamed to ``path``.

    A reader never sees a half-filled folder, and a block that raises leaves ``path`` as it was and no
    temporary folder behind. An existing ``path`` is refused (:class:`~scigen.core.errors.InvalidInputError`)
    unless ``overwrite=True`` and it is a directory whose every entry the new folder also holds (so
    replacing it loses only older versions of what was just written, never a file of the user's); the
    old folder is then moved aside, the new one renamed into place and the old one removed.
    """
    from scigen.core.errors import InvalidInputError

    path = Path(path)
    exists = path.exists() or path.is_symlink()
    if exists and (path.is_symlink() or not path.is_dir()):
        raise InvalidInputError(f"{path} exists and is not a directory; choose another output folder")
    if exists and not overwrite:
        raise InvalidInputError(f"{path} already exists; choose a new output folder or allow overwriting it")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        yield tmp
        if not exists:
            os.replace(tmp, path)
            return
        foreign = sorted({p.name for p in path.iterdir()} - {p.name for p in tmp.iterdir()})
        if foreign:
            raise InvalidInputError(f"{path} holds entries this write does not ({', '.join(foreign[:5])}); "
                                    "refusing to replace it: move them or choose another output folder")
        old = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent))
        os.replace(path, old / path.name)
        os.replace(tmp, path)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
