"""Molecule datasets as SMILES and typed graphs, all offline.

* MOSES (Polykovskiy et al. 2020) from the ``molsets`` wheel, read by
  :func:`scigen.datasets.bundled.moses_smiles` (never imports ``moses``);
* QM9 (Ramakrishnan et al. 2014) SMILES from the ``qm9pack`` wheel.

A SMILES file is read by :func:`scigen.graphs.io.read_smiles` (the graph file formats live in one module;
the name is importable from here too).
"""

from __future__ import annotations

from scigen.core.errors import InvalidInputError
from scigen.graphs.io import read_smiles

__all__ = ["moses", "moses_fcd_stats", "qm9", "read_smiles"]


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
