"""Atomic file writes: write to a temporary file beside the target, then ``os.replace`` it into place.

A reader never sees a half-written file, and a write that fails (or is interrupted) leaves the
previous file untouched and no temporary file behind. Every writer of the project (reports, figures,
samples, domain file formats) goes through :func:`atomic_path`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "atomic_write_text"]


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
