"""QM9 with DFT geometries (Ramakrishnan et al. 2014, *Sci Data* 1:140022) from the ``qm9pack`` wheel,
with EDM's split (Hoogeboom et al., ICML 2022, ``qm9/data/prepare/qm9.py``) and units.

* **Exclusions.** QM9 has 133,885 molecules; EDM drops the 3,054 listed in ``uncharacterized.txt``
  (figshare file 3195404), leaving 130,831. That list is *not* available offline, but ``qm9pack``
  ships exactly the 130,831 characterised molecules (gdb indices 1 ... 133,885 with 3,054 gaps), so
  the excluded set is the complement of qm9pack's ``Index`` column: :func:`excluded_indices`.
* **Split.** EDM sorts the remaining molecules by gdb index, draws ``np.random.seed(0);
  np.random.permutation(130831)`` (NumPy's legacy Mersenne-Twister stream) and cuts it into
  100,000 train / 17,748 valid / 13,083 test (``Ntest = int(0.1·N)``, valid = the rest). qm9pack's
  rows are already in increasing gdb index, so :func:`edm_split` applies the same permutation to
  row positions. (Reproduced from the code's description; EDM's saved split files could not be
  compared offline.)
* **Units** (EDM's ``qm9/dataset.py``): HOMO, LUMO, gap, U0, U, H, G in eV (Hartree × 27.2114),
  ZPVE in meV, α in Bohr³, μ in Debye, Cv in cal/(mol·K), ⟨R²⟩ in Bohr².

The full table takes ~15-30 s to parse; it is cached as ``<scigen cache>/molecules/qm9pack.npz``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from scigen.core.errors import InvalidInputError
from scigen.core.files import atomic_path
from scigen.molecules.data.dataset import MoleculeSet
from scigen.molecules.elements import QM9_ATOMS, atomic_number

__all__ = [
    "HARTREE_TO_EV", "QM9_PROPERTIES", "QM9_N_MOLECULES", "QM9_N_TOTAL", "EDM_SPLIT_SIZES",
    "edm_split", "load_qm9", "excluded_indices",
]

HARTREE_TO_EV = 27.2114
QM9_N_TOTAL = 133_885
QM9_N_MOLECULES = 130_831
EDM_SPLIT_SIZES = {"train": 100_000, "valid": 17_748, "test": 13_083}

#: name -> (qm9pack column, factor to EDM's unit, unit)
QM9_PROPERTIES: dict[str, tuple[str, float, str]] = {
    "alpha": ("Polarizability_bohr3", 1.0, "Bohr^3"),
    "gap": ("HOMO_LUMO_gap_au", HARTREE_TO_EV, "eV"),
    "homo": ("HOMO_au", HARTREE_TO_EV, "eV"),
    "lumo": ("LUMO_au", HARTREE_TO_EV, "eV"),
    "mu": ("Dipole_debye", 1.0, "D"),
    "Cv": ("Heatcapacity_Cv_cal_mol_K", 1.0, "cal/(mol K)"),
    "U0": ("InternalEnergy_0K_au", HARTREE_TO_EV, "eV"),
    "U": ("InternalEnergy_298K_au", HARTREE_TO_EV, "eV"),
    "H": ("Enthalphy_298K_au", HARTREE_TO_EV, "eV"),
    "G": ("GibbsFreeEnergy_298K_au", HARTREE_TO_EV, "eV"),
    "zpve": ("ZPVE_au", HARTREE_TO_EV * 1000.0, "meV"),
    "r2": ("R2_bohr2", 1.0, "Bohr^2"),
}
SPLITS = ("train", "valid", "test", "all")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def edm_split(n: int = QM9_N_MOLECULES, seed: int = 0) -> dict[str, np.ndarray]:
    """EDM's split of ``n`` molecules (row positions): ``np.random.seed(seed); permutation(n)`` cut into
    100,000 / rest / ``int(0.1·n)``. For ``n != 130,831`` the train size is ``n − valid − test`` scaled
    the same way (train = n − int(0.1n) − valid with valid = 17,748/130,831 of n)."""
    if n < 3:
        raise InvalidInputError(f"n: need at least 3 molecules to split, got {n}")
    n_test = int(0.1 * n)
    n_train = 100_000 if n == QM9_N_MOLECULES else int(round(n * 100_000 / QM9_N_MOLECULES))
    rs = np.random.RandomState(seed)  # the legacy stream of np.random.seed(seed); np.random.permutation
    perm = rs.permutation(n)
    n_valid = n - n_train - n_test
    return {"train": perm[:n_train], "valid": perm[n_train:n_train + n_valid], "test": perm[n_train + n_valid:]}


def _cache_path() -> Path:
    root = os.environ.get("SCIGEN_DATA")
    if root:
        return Path(root) / "molecules" / "qm9pack.npz"
    import platformdirs

    return Path(platformdirs.user_cache_dir("scigen")) / "molecules" / "qm9pack.npz"


#: how to install the QM9 data wheel
QM9_INSTALL = "pip install 'scigen-molecules[qm9]'"


def _read_table(limit: int | None) -> dict[str, np.ndarray]:
    """Flat arrays: index [M], n_atoms [M], Z [sum n], pos [sum n, 3], smiles [M], one column per property."""
    from scigen.datasets.bundled import parse_qm9pack_list, qm9pack_table
    from scigen.datasets.errors import MissingPackageError

    cols = ["Index", "SMILES", "Elements", "XYZ_Ang"] + [c for c, _, _ in QM9_PROPERTIES.values()]
    try:
        t = qm9pack_table(columns=cols, limit=limit)
    except MissingPackageError as exc:  # qm9pack (224 MB) is an optional extra of scigen-molecules
        raise MissingPackageError(f"QM9 needs the optional qm9pack data wheel (224 MB): {QM9_INSTALL} "
                                  f"(or: pip install qm9pack). {exc}") from None
    zs, pos, counts = [], [], []
    for el, xyz in zip(t["Elements"], t["XYZ_Ang"], strict=True):
        z = [atomic_number(s) for s in parse_qm9pack_list(el)]
        # not parse_qm9pack_list: qm9pack writes numbers like "0." that JSON rejects
        p = np.asarray(_NUMBER.findall(xyz), dtype=np.float64).reshape(-1, 3)
        if p.shape != (len(z), 3):
            raise InvalidInputError(f"qm9pack: a row has {len(z)} elements but coordinates of shape {p.shape}")
        zs.append(z)
        pos.append(p)
        counts.append(len(z))
    out = {"index": t["Index"].astype(np.int64), "n_atoms": np.asarray(counts, dtype=np.int64),
           "Z": np.concatenate([np.asarray(z, dtype=np.int64) for z in zs]), "pos": np.concatenate(pos),
           "smiles": np.asarray(t["SMILES"], dtype=str)}
    for name, (col, factor, _) in QM9_PROPERTIES.items():
        out[f"prop_{name}"] = t[col] * factor
    return out


def _table(limit: int | None, cache: bool) -> dict[str, np.ndarray]:
    if limit is not None:
        return _read_table(limit)
    path = _cache_path()
    if cache and path.is_file():
        with np.load(path, allow_pickle=False) as f:
            return {k: f[k] for k in f.files}
    table = _read_table(None)
    if cache:
        with atomic_path(path) as tmp:
            np.savez(tmp, **table)
    return table


def excluded_indices(*, cache: bool = True) -> np.ndarray:
    """gdb indices (1-based) of the 3,054 molecules QM9's authors flagged as uncharacterised: the
    complement of qm9pack's indices in 1 ... 133,885 (the original list is not shipped offline)."""
    idx = _table(None, cache)["index"]
    return np.setdiff1d(np.arange(1, QM9_N_TOTAL + 1), idx)


def load_qm9(split: str = "train", *, limit: int | None = None, properties: Sequence[str] | None = None,
             cache: bool = True) -> MoleculeSet:
    """QM9 molecules of an EDM split as a :class:`MoleculeSet` (Å; properties in EDM's units).

    Args:
        split: "train" (100,000), "valid" (17,748), "test" (13,083) or "all" (130,831, gdb order).
        limit: keep the first ``limit`` molecules of the split. With ``split="all"`` only the first
            ``limit`` rows of qm9pack are parsed (fast: tests and demos); other splits parse all rows.
        properties: names from :data:`QM9_PROPERTIES` (default: alpha, gap, homo, lumo, mu, Cv).
    """
    if split not in SPLITS:
        raise InvalidInputError(f"split: expected one of {SPLITS}, got {split!r}")
    props = list(properties) if properties is not None else ["alpha", "gap", "homo", "lumo", "mu", "Cv"]
    unknown = [p for p in props if p not in QM9_PROPERTIES]
    if unknown:
        raise InvalidInputError(f"properties: {unknown} not in QM9; available: {list(QM9_PROPERTIES)}")
    if limit is not None and (not isinstance(limit, int) or limit < 1):
        raise InvalidInputError(f"limit: expected a positive int or None, got {limit!r}")
    t = _table(limit if split == "all" else None, cache)
    m = t["n_atoms"].shape[0]
    if split == "all":
        rows = np.arange(m)
    else:
        if m != QM9_N_MOLECULES:
            raise InvalidInputError(f"qm9pack has {m} molecules, expected {QM9_N_MOLECULES}: cannot apply EDM's split")
        rows = edm_split(m)[split]
    if limit is not None:
        rows = rows[:limit]
    ptr = np.concatenate([[0], np.cumsum(t["n_atoms"])])
    zs = [t["Z"][ptr[r]:ptr[r + 1]] for r in rows]
    pos = [t["pos"][ptr[r]:ptr[r + 1]] for r in rows]
    return MoleculeSet(zs, pos, {p: t[f"prop_{p}"][rows] for p in props}, atom_vocab=QM9_ATOMS,
                       smiles=[str(s) for s in t["smiles"][rows]],
                       names=[f"gdb_{int(i)}" for i in t["index"][rows]])
