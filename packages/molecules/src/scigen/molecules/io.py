"""Reading and writing molecules: XYZ (multi-record, QM9's extended XYZ too), SDF, and RDKit ``Mol``.

Readers validate every record and report **all** bad ones at once (record index, first line, reason)
in a :class:`MoleculeFileError`; ``skip_bad=True`` returns the good records instead and emits one
:class:`MoleculeFileWarning` listing the bad ones. Writers go through a temporary file and rename.

RDKit conversion (:func:`to_rdkit`, :func:`from_rdkit`) lives in :mod:`scigen.molecules.convert` and is
re-exported here.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from scigen.core.errors import InvalidInputError
from scigen.core.files import atomic_path, atomic_write_text
from scigen.molecules.convert import check_molecule, distance_bonds, from_rdkit, to_rdkit
from scigen.molecules.elements import atomic_number, symbol
from scigen.molecules.structures import Molecule

__all__ = [
    "MoleculeFileError", "MoleculeFileWarning", "MoleculeFileNotFoundError", "BadRecord", "read_xyz", "write_xyz", "read_sdf", "write_sdf",
    "to_rdkit", "from_rdkit", "distance_bonds",
]


class BadRecord(tuple):
    """``(index, line, reason)``: 0-based record index, 1-based first line of the record."""

    __slots__ = ()

    def __new__(cls, index: int, line: int, reason: str):
        return super().__new__(cls, (index, line, reason))

    def __str__(self) -> str:
        return f"record {self[0]} (line {self[1]}): {self[2]}"


class MoleculeFileError(InvalidInputError):
    """A molecule file with bad records; ``.records`` lists every :class:`BadRecord`."""

    def __init__(self, path, records: Sequence[BadRecord]):
        self.path, self.records = str(path), list(records)
        shown = "\n  ".join(str(r) for r in self.records[:20])
        more = f"\n  ... and {len(self.records) - 20} more" if len(self.records) > 20 else ""
        super().__init__(f"{path}: {len(self.records)} bad record(s) (pass skip_bad=True to skip them):\n  "
                         f"{shown}{more}")


class MoleculeFileNotFoundError(InvalidInputError, FileNotFoundError):
    """A molecule file that does not exist (an ``InvalidInputError`` and a ``FileNotFoundError``)."""


class MoleculeFileWarning(UserWarning):
    """Bad records were skipped (``skip_bad=True``)."""


def _finish(path, good: list[Molecule], bad: list[BadRecord], skip_bad: bool) -> list[Molecule]:
    if bad and not skip_bad:
        raise MoleculeFileError(path, bad)
    if bad:
        warnings.warn(str(MoleculeFileError(path, bad)), MoleculeFileWarning, stacklevel=3)
    return good


def _read_text(path, kind: str) -> tuple[Path, str]:
    """The text of molecule file ``path``; a missing path, a folder, binary content (a PNG, a pickle)
    or a file without any record is an ``InvalidInputError`` naming the file."""
    p = Path(path)
    if p.is_dir():
        raise InvalidInputError(f"{p}: is a directory, expected an {kind} file")
    if not p.is_file():
        raise MoleculeFileNotFoundError(f"{p}: no such file")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{p}: not a text {kind} file (undecodable byte at offset {exc.start})") from None
    if "\x00" in text:
        raise InvalidInputError(f"{p}: not a text {kind} file (it holds NUL bytes)")
    if not text.strip():
        raise InvalidInputError(f"{p}: empty {kind} file (no molecule records)")
    return p, text


# --------------------------------------------------------------------------------------------- XYZ


def _float(tok: str) -> float:
    return float(tok.replace("*^", "e"))  # QM9's Mathematica exponents, e.g. 1.2*^-6


def _count(line: str) -> int | None:
    parts = line.split()
    if len(parts) != 1:
        return None
    try:
        n = int(parts[0])
    except ValueError:
        return None
    return n if n > 0 else None


def read_xyz(path: str | os.PathLike, *, skip_bad: bool = False) -> list[Molecule]:
    """Read a (multi-record) XYZ file: per record an atom count, a comment (kept as ``name``), and
    ``n`` lines ``Symbol x y z [extra columns...]`` (Å). A bad record (count, element, number, NaN,
    truncation) is reported by index and line; after a bad count the reader resynchronises on the
    next line holding a single positive integer."""
    p, text = _read_text(path, "XYZ")
    lines = text.splitlines()
    good: list[Molecule] = []
    bad: list[BadRecord] = []
    i, rec = 0, 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        start = i + 1
        n = _count(lines[i])
        if n is None:
            bad.append(BadRecord(rec, start, f"expected a positive atom count, got {lines[i].strip()[:40]!r}"))
            rec += 1
            i += 1
            while i < len(lines) and _count(lines[i]) is None:
                i += 1
            continue
        body = lines[i + 2: i + 2 + n]
        comment = lines[i + 1].strip() if i + 1 < len(lines) else ""
        i += 2 + n
        if len(body) < n:
            bad.append(BadRecord(rec, start, f"truncated: {n} atoms announced, {len(body)} lines present"))
            rec += 1
            continue
        zs, xyz, err = [], [], None
        for k, ln in enumerate(body):
            parts = ln.split()
            try:
                if len(parts) < 4:
                    raise ValueError(f"expected 'Symbol x y z', got {ln.strip()[:40]!r}")
                zs.append(atomic_number(parts[0]))
                xyz.append([_float(t) for t in parts[1:4]])
            except ValueError as exc:
                err = f"line {start + 2 + k}: {exc}"
                break
        if err is None and not np.isfinite(np.asarray(xyz)).all():
            err = "NaN or inf coordinates"
        if err is not None:
            bad.append(BadRecord(rec, start, err))
        else:
            good.append(Molecule(np.asarray(zs), np.asarray(xyz), name=comment))
        rec += 1
    return _finish(p, good, bad, skip_bad)


def write_xyz(molecules: Iterable[Molecule], path: str | os.PathLike) -> Path:
    """Write molecules as a multi-record XYZ file (coordinates with 6 decimals, Å)."""
    out = []
    for k, m in enumerate(molecules):
        m = check_molecule(m, f"molecules[{k}]")
        out.append(str(m.n_atoms))
        out.append(m.name.replace("\n", " "))
        for z, (x, y, w) in zip(m.atomic_numbers, m.positions, strict=True):
            out.append(f"{symbol(int(z)):<2s} {x: .6f} {y: .6f} {w: .6f}")
    return atomic_write_text(path, "\n".join(out) + "\n")


# --------------------------------------------------------------------------------------------- SDF


def read_sdf(path: str | os.PathLike, *, skip_bad: bool = False, as_rdkit: bool = False) -> list:
    """Read every record of an SDF file (hydrogens kept, not sanitised) as :class:`Molecule`
    (or RDKit ``Mol`` with ``as_rdkit=True``). Unparseable records, records without coordinates,
    unknown elements and NaN coordinates are reported by record index and first line."""
    from rdkit import Chem, RDLogger

    p, text = _read_text(path, "SDF")
    lines = text.splitlines(keepends=True)
    blocks: list[tuple[int, str]] = []
    cur: list[str] = []
    start = 1
    for k, ln in enumerate(lines, start=1):
        cur.append(ln)
        if ln.strip() == "$$$$":
            blocks.append((start, "".join(cur)))
            cur, start = [], k + 1
    if "".join(cur).strip():
        blocks.append((start, "".join(cur) + ("\n" if not cur[-1].endswith("\n") else "") + "$$$$\n"))
    good, bad = [], []
    RDLogger.DisableLog("rdApp.*")
    try:
        for idx, (line, text) in enumerate(blocks):
            sup = Chem.SDMolSupplier()
            sup.SetData(text, sanitize=False, removeHs=False)
            m = sup[0] if len(sup) else None
            if m is None:
                bad.append(BadRecord(idx, line, "RDKit cannot parse this mol block"))
                continue
            try:
                m.UpdatePropertyCache(strict=False)
                mol = check_molecule(from_rdkit(m, what="this record"), "this record")
            except InvalidInputError as exc:
                bad.append(BadRecord(idx, line, str(exc)))
                continue
            good.append(m if as_rdkit else mol)
    finally:
        RDLogger.EnableLog("rdApp.*")
    return _finish(p, good, bad, skip_bad)


def write_sdf(molecules: Iterable, path: str | os.PathLike) -> Path:
    """Write :class:`Molecule` objects (bonds by EDM's distance rule; all-atom: no implicit hydrogens, so
    reading the file back gives the same atoms) and/or RDKit ``Mol`` objects (their own bonds, first
    conformer) to an SDF file, properties as SD fields."""
    from rdkit import Chem

    path = Path(path)
    with atomic_path(path) as tmp:
        writer = Chem.SDWriter(str(tmp))
        writer.SetKekulize(False)
        try:
            for k, m in enumerate(molecules):
                rd = m if isinstance(m, Chem.Mol) else to_rdkit(check_molecule(m, f"molecules[{k}]"), implicit_hs=False)
                if rd.GetNumConformers() == 0:
                    raise InvalidInputError(f"molecules[{k}]: has no 3-D conformer")
                writer.write(rd)
        finally:
            writer.close()
    return path
