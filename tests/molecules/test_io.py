"""XYZ / SDF readers and writers, RDKit round trips, bad-record reporting."""

import numpy as np
import pytest
from rdkit import Chem
from rdkit.Chem import AllChem

from scigen.molecules import Molecule, from_rdkit, read_sdf, read_xyz, to_rdkit, write_sdf, write_xyz
from scigen.molecules.io import MoleculeFileError, MoleculeFileWarning


def _ethanol():
    m = Chem.AddHs(Chem.MolFromSmiles("CCO"))
    AllChem.EmbedMolecule(m, randomSeed=0)
    AllChem.MMFFOptimizeMolecule(m)
    return m


def test_rdkit_round_trip_keeps_atoms_coords_charges():
    rd = Chem.AddHs(Chem.MolFromSmiles("C[NH3+]"))
    AllChem.EmbedMolecule(rd, randomSeed=1)
    mol = from_rdkit(rd)
    assert mol.atomic_numbers.tolist() == [a.GetAtomicNum() for a in rd.GetAtoms()]
    assert mol.charges.sum() == 1
    back = to_rdkit(mol)
    np.testing.assert_allclose(back.GetConformer().GetPositions(), rd.GetConformer().GetPositions())
    assert [a.GetFormalCharge() for a in back.GetAtoms()] == [a.GetFormalCharge() for a in rd.GetAtoms()]


def test_distance_bonds_recover_ethanol_graph():
    rd = _ethanol()
    rebuilt = to_rdkit(from_rdkit(rd), sanitize=True)
    assert Chem.MolToSmiles(Chem.RemoveHs(rebuilt)) == Chem.MolToSmiles(Chem.MolFromSmiles("CCO"))


def test_sdf_round_trip_through_rdkit(tmp_path):
    rd = _ethanol()
    mol = from_rdkit(rd)
    mol.properties = {"gap": 7.5}
    path = write_sdf([mol, rd], tmp_path / "x.sdf")
    sup = [m for m in Chem.SDMolSupplier(str(path), removeHs=False)]  # RDKit reads what we wrote
    assert len(sup) == 2 and all(m is not None for m in sup)
    np.testing.assert_allclose(sup[0].GetConformer().GetPositions(), rd.GetConformer().GetPositions(), atol=1e-4)
    back = read_sdf(path)
    assert back[0].properties["gap"] == pytest.approx(7.5)
    np.testing.assert_allclose(back[1].positions, rd.GetConformer().GetPositions(), atol=1e-4)


def test_xyz_round_trip(tmp_path):
    rd = _ethanol()
    mol = from_rdkit(rd)
    path = write_xyz([mol, mol], tmp_path / "x.xyz")
    back = read_xyz(path)
    assert len(back) == 2
    np.testing.assert_allclose(back[1].positions, mol.positions, atol=1e-6)
    assert back[0].atomic_numbers.tolist() == mol.atomic_numbers.tolist()
    # RDKit reads our XYZ too
    rx = Chem.MolFromXYZFile(str(tmp_path / "one.xyz")) if write_xyz([mol], tmp_path / "one.xyz") else None
    np.testing.assert_allclose(rx.GetConformer().GetPositions(), mol.positions, atol=1e-6)


def test_qm9_exponent_notation(tmp_path):
    p = tmp_path / "q.xyz"
    p.write_text("2\nprops\nH 0.0 0.0 1.2*^-3 0.1\nH 0.74 0 0 -0.1\n")
    (m,) = read_xyz(p)
    assert m.positions[0, 2] == pytest.approx(1.2e-3)


BAD_XYZ = """2
ok
H 0 0 0
H 0.74 0 0
2
bad element
Xx 0 0 0
H 1 0 0
two
garbage count
1
nan coords
C nan 0 0
1
good again
O 0 0 0
"""


def test_xyz_bad_records_all_reported_and_skippable(tmp_path):
    p = tmp_path / "bad.xyz"
    p.write_text(BAD_XYZ)
    with pytest.raises(MoleculeFileError) as exc:
        read_xyz(p)
    recs = exc.value.records
    assert [(r[0], r[1]) for r in recs] == [(1, 5), (2, 9), (3, 11)]
    assert "unknown element" in recs[0][2] and "line 7" in recs[0][2]
    assert "NaN" in recs[2][2]
    with pytest.warns(MoleculeFileWarning):
        good = read_xyz(p, skip_bad=True)
    assert [m.atomic_numbers.tolist() for m in good] == [[1, 1], [8]]


def test_sdf_bad_record_reported(tmp_path):
    rd = _ethanol()
    good = Chem.MolToMolBlock(rd)
    text = good + "$$$$\n" + "garbage\n\n\n  x  y  V2000\nM  END\n$$$$\n" + good + "$$$$\n"
    p = tmp_path / "b.sdf"
    p.write_text(text)
    with pytest.raises(MoleculeFileError) as exc:
        read_sdf(p)
    start = good.count("\n") + 2
    assert [(r[0], r[1]) for r in exc.value.records] == [(1, start)]
    with pytest.warns(MoleculeFileWarning):
        assert len(read_sdf(p, skip_bad=True)) == 2


def test_bad_molecules_rejected():
    with pytest.raises(ValueError, match="NaN"):
        to_rdkit(Molecule([6], [[np.nan, 0, 0]]))
    with pytest.raises(ValueError, match="shape"):
        to_rdkit(Molecule([6, 1], [[0, 0, 0]]))
    with pytest.raises(ValueError, match="unknown element"):
        to_rdkit(Molecule([250], [[0, 0, 0]]))
    with pytest.raises(FileNotFoundError):
        read_xyz("/nonexistent/file.xyz")
