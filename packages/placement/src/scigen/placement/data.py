"""Loaders for the dataset cards of the placement domain (``scigen data info ispd2005``).

* :func:`load_ispd2005`: the ISPD 2005 placement contest designs (Nam et al., ISPD 2005; adaptec1-4,
  bigblue1-4) in GSRC Bookshelf format, from the local cache of ``scigen data fetch ispd2005``. Nothing
  is downloaded here: an uncached dataset raises :class:`scigen.datasets.DataNotAvailableError`, whose
  message gives the fetch command and the cache directory.
"""

from __future__ import annotations

import os
from pathlib import Path

from scigen.core.errors import InvalidInputError
from scigen.placement.bookshelf import read_bookshelf
from scigen.placement.netlist import Netlist

__all__ = ["ISPD2005_DESIGNS", "ispd2005_aux_files", "load_ispd2005"]

ISPD2005_DESIGNS = ("adaptec1", "adaptec2", "adaptec3", "adaptec4", "bigblue1", "bigblue2", "bigblue3", "bigblue4")


def ispd2005_aux_files(root: str | os.PathLike | None = None,
                       designs: tuple[str, ...] | list[str] | None = None) -> dict[str, Path]:
    """``{design: .aux path}`` under ``root`` (default: the cached dataset, ``scigen.datasets.path``).

    Raises ``DataNotAvailableError`` when the dataset is not cached, and :class:`InvalidInputError`
    naming the missing designs when ``root`` lacks some of ``designs`` (default: all eight).
    """
    if root is None:
        from scigen.datasets import path as dataset_path

        root = dataset_path("ISPD2005")
    root = Path(root)
    found = {a.stem: a for a in sorted(root.rglob("*.aux"))}
    wanted = list(ISPD2005_DESIGNS if designs is None else designs)
    unknown = [d for d in wanted if d not in ISPD2005_DESIGNS]
    if unknown:
        raise InvalidInputError(f"designs: unknown ISPD2005 design(s) {unknown}; valid: {', '.join(ISPD2005_DESIGNS)}")
    missing = [d for d in wanted if d not in found]
    if missing:
        raise InvalidInputError(f"{root}: no <design>.aux for {missing} (found {sorted(found) or 'none'}); "
                                "re-run `scigen data fetch ISPD2005 --force`")
    return {d: found[d] for d in wanted}


def load_ispd2005(root: str | os.PathLike | None = None,
                  designs: tuple[str, ...] | list[str] | None = None) -> dict[str, Netlist]:
    """``{design: Netlist}`` of the ISPD2005 designs (full netlists; place them macro-only with
    :func:`scigen.placement.macro_only` or :meth:`DiffusionPlacer.place`)."""
    return {d: read_bookshelf(a) for d, a in ispd2005_aux_files(root, designs).items()}
