"""Bundled-data helpers on the installed wheels (molsets, qm9pack, scanpy); skipped when not installed."""

from __future__ import annotations

import gzip
import importlib.util
import math
import sys

import numpy as np
import pytest

from scigen.datasets import MissingPackageError, fetch, path
from scigen.datasets.bundled import (
    moses_csv_path,
    moses_smiles,
    package_dir,
    parse_qm9pack_list,
    qm9pack_dir,
    qm9pack_table,
    scanpy_dataset,
)

has = lambda mod: importlib.util.find_spec(mod) is not None  # noqa: E731
needs_moses = pytest.mark.skipif(not has("moses"), reason="molsets not installed (pip install --no-deps molsets)")
needs_qm9pack = pytest.mark.skipif(not has("qm9pack"), reason="qm9pack not installed (pip install qm9pack)")
needs_scanpy = pytest.mark.skipif(not has("scanpy"), reason="scanpy not installed (pip install scanpy)")


def test_missing_packages_name_the_install_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("moses", "qm9pack", "scanpy") else real(name, *a))
    with pytest.raises(MissingPackageError, match=r"pip install --no-deps molsets"):
        moses_smiles("test", limit=1)
    with pytest.raises(MissingPackageError, match=r"pip install qm9pack"):
        qm9pack_dir()
    with pytest.raises(MissingPackageError, match=r"pip install scanpy"):
        scanpy_dataset("krumsiek11")
    with pytest.raises(MissingPackageError, match=r"pip install --no-deps molsets"):
        path("MOSES")  # bundled cards resolve to the package and fail the same way
    with pytest.raises(ImportError):  # MissingPackageError is an ImportError
        package_dir("surely_not_a_package_xyz", "pip install nothing")


def test_bad_arguments_are_rejected_at_the_boundary():
    with pytest.raises(ValueError, match="split"):
        moses_csv_path("valid")
    with pytest.raises(ValueError, match="limit"):
        moses_smiles("test", limit=-1)
    with pytest.raises(ValueError, match="name"):
        scanpy_dataset("pbmc3k")
    with pytest.raises(ValueError, match="text"):
        parse_qm9pack_list("not a list")


@needs_moses
def test_moses_splits_have_the_published_sizes_and_valid_smiles():
    assert "moses" not in sys.modules  # located, never imported (import moses is broken)
    test = moses_smiles("test")
    scaf = moses_smiles("test_scaffolds")
    with gzip.open(moses_csv_path("train"), "rb") as fh:
        n_train = sum(1 for _ in fh) - 1  # minus the header
    # MOSES (Polykovskiy et al. 2020): 1,936,962 molecules in total over the three splits.
    assert n_train + len(test) + len(scaf) == 1_936_962
    assert n_train == 1_584_663
    train = moses_smiles("train", limit=500)
    assert len(train) == 500 and all(isinstance(s, str) and s for s in train)
    assert "moses" not in sys.modules
    Chem = pytest.importorskip("rdkit.Chem")
    mols = [Chem.MolFromSmiles(s) for s in train[:200] + test[:100]]
    assert all(m is not None for m in mols)
    # MOSES filters: heavy atoms only from C, N, S, O, F, Cl, Br, H; molecular weight 250-350 Da.
    from rdkit.Chem import Descriptors

    atoms = {a.GetSymbol() for m in mols for a in m.GetAtoms()}
    assert atoms <= {"C", "N", "S", "O", "F", "Cl", "Br", "H"}
    mw = [Descriptors.MolWt(m) for m in mols]
    assert 250 <= min(mw) and max(mw) <= 350


@needs_qm9pack
def test_qm9pack_reads_real_molecules_with_dft_geometries():
    assert "qm9pack" not in sys.modules
    t = qm9pack_table(limit=3, polarizability=True)
    assert list(t["XYZ_file"]) == ["dsgdb9nsd_000001.xyz", "dsgdb9nsd_000002.xyz", "dsgdb9nsd_000003.xyz"]
    assert list(t["SMILES"][:3]) == ["C", "N", "O"]  # QM9 starts with methane, ammonia, water
    assert t["HOMO_au"].dtype == np.float64 and t["SMILES"].dtype == object
    elements = parse_qm9pack_list(t["Elements"][0])
    xyz = np.asarray(parse_qm9pack_list(t["XYZ_Ang"][0]))
    assert elements == ["C", "H", "H", "H", "H"] and xyz.shape == (5, 3)
    # Methane at B3LYP: four equal C-H bonds of ~1.09 Angstrom and tetrahedral angles arccos(-1/3).
    bonds = xyz[1:] - xyz[0]
    lengths = np.linalg.norm(bonds, axis=1)
    assert np.allclose(lengths, 1.0919, atol=2e-3)
    cos = (bonds @ bonds.T)[np.triu_indices(4, 1)] / np.outer(lengths, lengths)[np.triu_indices(4, 1)]
    assert np.allclose(np.degrees(np.arccos(cos)), math.degrees(math.acos(-1 / 3)), atol=0.1)
    # gap = LUMO - HOMO; the isotropic polarizability is the mean of the tensor's diagonal.
    assert np.allclose(t["HOMO_LUMO_gap_au"], t["LUMO_au"] - t["HOMO_au"], atol=1.5e-4)
    iso = (t["A_xx"] + t["A_yy"] + t["A_zz"]) / 3
    assert np.allclose(iso, t["Polarizability_bohr3"], atol=0.02)


@needs_qm9pack
def test_qm9pack_columns_limit_and_part_boundaries():
    d = qm9pack_dir()
    with open(d / "qm9_part1.csv", "rb") as fh:
        n1 = sum(1 for _ in fh) - 1
    t = qm9pack_table(columns=["SMILES", "N_atoms"], limit=n1 + 2)  # crosses into qm9_part2.csv
    assert set(t) == {"XYZ_file", "SMILES", "N_atoms"} and len(t["SMILES"]) == n1 + 2
    idx = [int(x.split("_")[1].split(".")[0]) for x in t["XYZ_file"][n1 - 1:]]
    assert idx[1] > idx[0]  # part 2 continues after part 1
    with pytest.raises(ValueError, match="columns"):
        qm9pack_table(columns=["NoSuchColumn"], limit=1)
    assert path("QM9-qm9pack") == d.parent and fetch("qm9-qm9pack") == d.parent


@needs_scanpy
def test_scanpy_bundled_datasets_load_offline():
    pbmc = scanpy_dataset("pbmc68k_reduced")
    assert pbmc.shape == (700, 765)
    k = scanpy_dataset("krumsiek11")
    assert k.shape == (640, 11)
