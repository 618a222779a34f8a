"""Molecule datasets as SMILES and typed graphs, all offline.

* MOSES (Polykovskiy et al. 2020) from the ``molsets`` wheel, read by
  :func:`scigen.datasets.bundled.moses_smiles` (never imports ``moses``);
* QM9 (Ramakrishnan et al. 2014) SMILES from the ``qm9pack`` wheel.
"""

from __future__ import annotations

import os
from pathlib import Path

from scigen.core.errors import InvalidInputError


def moses(split: str = "train", *, limit: int | None = None) -> list[str]:
    """MOSES SMILES of ``split`` (``"train"``, ``"test"``, ``"test_scaffolds"``), first ``limit`` rows."""
    from scigen.datasets.bundled import moses_smiles

    return moses_smiles(split, limit=limit)


def moses_fcd_stats(split: str = "test") -> dict:
    """MOSES' precomputed ChemNet statistics ``{"mu", "sigma"}`` of ``split`` (``"test"`` or
    ``"test_scaffolds"``), read from ``<split>_stats.npz`` in the ``molsets`` wheel: the reference
    of MOSES' ``FCD/Test`` (and ``FCD/TestSF``), computed by the MOSES authors on the whole split."""
    import numpy as np

    from scigen.datasets.bundled import moses_csv_path

    if split not in ("test", "test_scaffolds"):
        raise InvalidInputError(f"split: expected 'test' or 'test_scaffolds', got {split!r}")
    path = moses_csv_path(split).with_name(f"{split}_stats.npz")
    if not path.is_file():
        raise InvalidInputError(f"{path} is missing: reinstall molsets (pip install --no-deps molsets)")
    with np.load(path, allow_pickle=True) as z:  # a dict pickled by MOSES itself, inside the wheel
        stats = z["stats"].item()["FCD"]
    return {"mu": np.asarray(stats["mu"]), "sigma": np.asarray(stats["sigma"])}


def qm9(*, limit: int | None = None) -> list[str]:
    """QM9 SMILES (qm9pack order, 130,831 molecules), first ``limit`` rows."""
    from scigen.datasets.bundled import qm9pack_table

    return [str(s) for s in qm9pack_table(columns=["SMILES"], limit=limit)["SMILES"]]


def read_smiles(path: str | os.PathLike[str]) -> list[str]:
    """Read one SMILES per line (first whitespace-separated field; blank lines and ``#`` comments skipped).

    Every SMILES RDKit cannot parse is reported with its 1-based line number in one error.
    """
    from rdkit import Chem, RDLogger

    from scigen.graphs.io import read_text

    p = Path(path)
    text = read_text(p, "SMILES file")
    out, bad = [], []
    RDLogger.DisableLog("rdApp.*")
    try:
        for line_no, line in enumerate(text.splitlines(), start=1):
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            s = s.split()[0]
            if s.upper() == "SMILES" and not out and not bad:
                continue  # a header row
            if Chem.MolFromSmiles(s) is None:
                bad.append(f"line {line_no}: {s!r}")
            else:
                out.append(s)
    finally:
        RDLogger.EnableLog("rdApp.*")
    if bad:
        shown = "\n  ".join(bad[:20]) + (f"\n  ... and {len(bad) - 20} more" if len(bad) > 20 else "")
        raise InvalidInputError(f"{p}: {len(bad)} invalid SMILES:\n  {shown}")
    if not out:
        raise InvalidInputError(f"{p}: the file holds no SMILES (the dataset is empty)")
    return out
