"""QM9's original release (Ramakrishnan et al. 2014, *Sci Data* 1:140022; figshare collection 978904):
``dsgdb9nsd.xyz.tar.bz2`` (one extended-XYZ file per molecule) and ``uncharacterized.txt``.

Each ``dsgdb9nsd_NNNNNN.xyz`` holds, per the paper's Table 2-3: line 1 the atom count ``na``; line 2
``gdb <index>`` and 15 properties (A, B, C in GHz; μ in D; α in Bohr³; HOMO, LUMO, gap in Hartree;
⟨R²⟩ in Bohr²; ZPVE, U0, U, H, G in Hartree; Cv in cal/(mol K)); then ``na`` lines ``element x y z
mulliken`` (Å, exponents written Mathematica-style as ``1.2*^-6``); then the harmonic frequencies,
the GDB and relaxed-geometry SMILES, and the InChIs. ``uncharacterized.txt`` lists the 3,054 molecules
that failed the geometry-consistency check; like EDM (Hoogeboom et al. 2022) the first integer of each
line is taken as a gdb index to exclude.

Properties come out in the units of :data:`scigen.molecules.data.qm9.QM9_PROPERTIES` (EDM's), the same
as :func:`scigen.molecules.data.load_qm9` (the qm9pack copy of the same data).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from scigen.core.errors import InvalidInputError
from scigen.molecules.data.dataset import MoleculeSet
from scigen.molecules.data.qm9 import QM9_PROPERTIES
from scigen.molecules.elements import QM9_ATOMS, atomic_number

__all__ = ["load_qm9_xyz", "read_qm9_xyz", "read_uncharacterized"]

#: position of each property among the 15 numbers after ``gdb <index>`` on line 2
_HEADER = {"A": 0, "B": 1, "C": 2, "mu": 3, "alpha": 4, "homo": 5, "lumo": 6, "gap": 7, "r2": 8, "zpve": 9,
           "U0": 10, "U": 11, "H": 12, "G": 13, "Cv": 14}


def _num(tok: str, path: Path, line: int) -> float:
    try:
        return float(tok.replace("*^", "e"))
    except ValueError:
        raise InvalidInputError(f"{path}:{line}: expected a number, got {tok!r}") from None


def read_qm9_xyz(path: str | os.PathLike) -> dict:
    """One QM9 file: ``{"index", "Z", "pos" (Å), "props" (raw units, by name), "smiles"}``."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    try:
        na = int(lines[0].strip())
    except (IndexError, ValueError):
        raise InvalidInputError(f"{path}:1: expected the atom count, got {lines[0][:40] if lines else ''!r}") from None
    if na < 1 or len(lines) < na + 4:
        raise InvalidInputError(f"{path}: truncated or bad count: {na} atoms need {na + 5} lines, found {len(lines)}")
    head = lines[1].split()
    if len(head) < 17 or head[0] != "gdb":
        raise InvalidInputError(f"{path}:2: expected 'gdb <index>' and 15 properties, got {lines[1][:60]!r}")
    values = [_num(t, path, 2) for t in head[2:17]]
    zs, pos = [], []
    for k in range(na):
        parts = lines[2 + k].split()
        if len(parts) < 4:
            raise InvalidInputError(f"{path}:{3 + k}: expected 'element x y z charge', got {lines[2 + k][:60]!r}")
        try:
            zs.append(atomic_number(parts[0]))
        except (ValueError, KeyError) as exc:
            raise InvalidInputError(f"{path}:{3 + k}: {exc}") from None
        pos.append([_num(t, path, 3 + k) for t in parts[1:4]])
    smiles = lines[na + 3].split()
    return {"index": int(head[1]), "Z": np.asarray(zs, dtype=np.int64), "pos": np.asarray(pos, dtype=np.float64),
            "props": {name: values[i] for name, i in _HEADER.items()}, "smiles": smiles[-1] if smiles else ""}


def read_uncharacterized(path: str | os.PathLike) -> set[int]:
    """gdb indices listed in ``uncharacterized.txt`` (first integer of every line; text lines skipped)."""
    out = set()
    for line in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
        tok = line.split()[:1]
        if tok and tok[0].isdigit():
            out.add(int(tok[0]))
    return out


def load_qm9_xyz(root: str | os.PathLike | None = None, *, limit: int | None = None,
                 properties: Sequence[str] | None = None, exclude_uncharacterized: bool = True) -> MoleculeSet:
    """QM9 from its original xyz files as a :class:`MoleculeSet`, in gdb-index order.

    Args:
        root: a folder holding the ``dsgdb9nsd_*.xyz`` files (at any depth) and ``uncharacterized.txt``;
            ``None`` = the catalog's cache (``scigen.datasets.path("QM9")``, which extracts a hand-placed
            ``dsgdb9nsd.xyz.tar.bz2`` or says what to fetch and where to put it).
        limit: keep the first ``limit`` molecules (after exclusion).
        properties: names from ``QM9_PROPERTIES`` (default: alpha, gap, homo, lumo, mu, Cv).
        exclude_uncharacterized: drop the molecules of ``uncharacterized.txt`` (EDM does).
    """
    props = list(properties) if properties is not None else ["alpha", "gap", "homo", "lumo", "mu", "Cv"]
    unknown = [p for p in props if p not in QM9_PROPERTIES]
    if unknown:
        raise InvalidInputError(f"properties: {unknown} not in QM9; available: {list(QM9_PROPERTIES)}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InvalidInputError(f"limit: expected a positive int or None, got {limit!r}")
    if root is None:
        from scigen.datasets import path as dataset_path

        root = dataset_path("QM9")
    root = Path(root)
    if not root.is_dir():
        raise InvalidInputError(f"root: {root} is not a directory")
    files = sorted(root.rglob("dsgdb9nsd_*.xyz"))
    if not files:
        raise InvalidInputError(f"{root}: no dsgdb9nsd_*.xyz files (extract dsgdb9nsd.xyz.tar.bz2 here; "
                                "scigen data info QM9)")
    excluded: set[int] = set()
    if exclude_uncharacterized:
        unc = next(iter(sorted(root.rglob("uncharacterized.txt"))), None)
        if unc is None:
            raise InvalidInputError(f"{root}: uncharacterized.txt is missing (pass exclude_uncharacterized=False "
                                    "to keep every molecule)")
        excluded = read_uncharacterized(unc)
    mols = []
    for f in files:
        rec = read_qm9_xyz(f)
        if rec["index"] in excluded:
            continue
        mols.append(rec)
        if limit is not None and len(mols) == limit:
            break
    if not mols:
        raise InvalidInputError(f"{root}: every molecule is listed in uncharacterized.txt")
    values = {p: [m["props"][p] * QM9_PROPERTIES[p][1] for m in mols] for p in props}
    return MoleculeSet([m["Z"] for m in mols], [m["pos"] for m in mols], values, atom_vocab=QM9_ATOMS,
                       smiles=[m["smiles"] for m in mols], names=[f"gdb_{m['index']}" for m in mols])
