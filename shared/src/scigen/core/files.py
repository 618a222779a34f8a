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

    The temporary name keeps ``path``'s suffix (``.<stem>.<random>.tmp<suffix>``), so writers that infer
    the format from the extension (numpy, anndata, matplotlib) behave as for ``path``. It is created
    exclusively (``mkstemp``), so it can never be a file of the user's that happens to have that name,
    and it is empty when the block starts. The parent directory is created. If the block raises, the
    temporary file is removed and ``path`` is unchanged.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
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
    """Yield a fresh temporary directory beside ``path`` to fill; on success it is renamed to ``path``.

    A reader (or a run killed mid-write) never finds a half-filled folder under the final name: until
    the block ends the files live in ``.<name>.<random>.tmpdir`` in the same parent (so the final
    ``os.rename`` stays on one file system). If the block raises, the temporary directory and
    everything in it are removed. An existing ``path`` (file or folder) is refused with
    :class:`~scigen.core.errors.InvalidInputError` before anything is written, and again just
    before the rename, so nothing of the user's is ever replaced.

    ``overwrite=True`` (a rerun writing the same folder again, e.g. ``--overwrite``) replaces an existing
    *folder* whose every entry the new one also holds, so only older versions of what was just written
    are lost: the old folder is moved aside, the new one renamed into place, the old one removed. A file,
    or a folder holding anything else, is still refused.
    """
    path = Path(path)

    def refuse_existing(new: Path | None) -> bool:
        if not (path.exists() or path.is_symlink()):
            return False
        kind = "folder" if path.is_dir() and not path.is_symlink() else "file"
        if not overwrite or kind == "file":
            raise InvalidInputError(f"{path}: a {kind} of that name exists; choose a new output folder")
        foreign = [] if new is None else sorted({p.name for p in path.iterdir()} - {p.name for p in new.iterdir()})
        if foreign:
            raise InvalidInputError(f"{path} holds entries this write does not ({', '.join(foreign[:5])}); "
                                    "refusing to replace it: move them or choose a new output folder")
        return True

    refuse_existing(None)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmpdir", dir=path.parent))
    try:
        yield tmp
        if refuse_existing(tmp):
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent))
            os.rename(path, old / path.name)
            os.rename(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
