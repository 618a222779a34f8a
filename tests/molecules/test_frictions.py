"""Frictions of a chemist's inputs (issue 37): nothing guessed, every refusal says what to pass."""

import numpy as np
import pytest

Chem = pytest.importorskip("rdkit.Chem")
from rdkit.Chem import AllChem, rdDepictor  # noqa: E402

from scigen.core.errors import InvalidInputError  # noqa: E402
from scigen.molecules.convert import from_rdkit, to_rdkit  # noqa: E402
from scigen.molecules.elements import QM9_ATOMS  # noqa: E402
from scigen.molecules.structures import Molecule  # noqa: E402
from scigen.molecules.unigem.inputs import as_molecule_set  # noqa: E402

BOHR = 0.529177210903


def _embed(smiles, seed=1):
    m = Chem.AddHs(Chem.MolFromSmiles(smiles))
    assert AllChem.EmbedMolecule(m, randomSeed=seed) == 0
    return m


def _set(data, **kw):
    return as_molecule_set(data, atom_vocab=QM9_ATOMS, max_atoms=29, **kw)


def test_sdf_path_supplier_and_single_mol_are_read():
    mols = [_embed(s) for s in ("CCO", "CC#N", "OCC=O")]
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "in.sdf"
        w = Chem.SDWriter(str(path))
        for m in mols:
            w.write(m)
        w.close()
        for data in (path, str(path), Chem.SDMolSupplier(str(path), removeHs=False)):
            ms = _set(data)
            assert list(ms.n_atoms) == [m.GetNumAtoms() for m in mols]  # 9, 6, 7 atoms with H
        # RDKit's default removeHs=True drops the hydrogens: refused, not read heavy-atom only
        with pytest.raises(InvalidInputError, match=r"hydrogen\(s\) without coordinates.*AddHs"):
            _set(Chem.SDMolSupplier(str(path)))
    one = _set(mols[0])
    assert len(one) == 1 and one.n_atoms[0] == 9
    np.testing.assert_allclose(one.positions[0], mols[0].GetConformer().GetPositions())


def test_smiles_are_refused_with_the_embedding_function_named():
    with pytest.raises(InvalidInputError, match=r"data\[0\]: got the string 'CCO'.*conformers_from_smiles"):
        _set(["CCO", "CCN"])
    with pytest.raises(InvalidInputError, match="not an .sdf / .xyz path; SMILES.*conformers_from_smiles"):
        _set("CCO")


def test_implicit_hydrogens_2d_and_multi_conformer_mols_are_refused():
    heavy = Chem.RemoveHs(_embed("CCO"))
    with pytest.raises(InvalidInputError, match=r"data\[0\]: 6 hydrogen\(s\) without coordinates"):
        _set([heavy])
    flat = Chem.AddHs(Chem.MolFromSmiles("CCO"))
    rdDepictor.Compute2DCoords(flat)
    with pytest.raises(InvalidInputError, match="conformer is 2-D"):
        _set([flat])
    multi = _embed("CCO")
    AllChem.EmbedMultipleConfs(multi, 3, randomSeed=1)
    with pytest.raises(InvalidInputError, match="has 3 conformers; pass one Mol per conformer"):
        _set([multi])
    split = [Chem.Mol(multi, confId=c.GetId()) for c in multi.GetConformers()]  # the advised fix works
    assert len(_set(split)) == 3
    np.testing.assert_allclose(from_rdkit(multi, conf_id=1).positions, multi.GetConformer(1).GetPositions())


def test_formal_charges_are_refused():
    with pytest.raises(InvalidInputError, match=r"molecule\(s\) \[1\] carry formal charges.*Uncharger"):
        _set([_embed("CCO"), _embed("C[NH3+]")])


def test_bohr_coordinates_are_refused_for_mols_and_bondless_records():
    m = _embed("CCO")
    pos = m.GetConformer().GetPositions()
    bohr = Chem.Mol(m)
    for i, p in enumerate(pos / BOHR):
        bohr.GetConformer().SetAtomPosition(i, p.tolist())
    with pytest.raises(InvalidInputError, match=r"median bond length 2\.\d\d .*multiply them by 0.529177"):
        _set([bohr])
    z = np.array([a.GetAtomicNum() for a in m.GetAtoms()])
    with pytest.raises(InvalidInputError, match="median distance of a hydrogen to its nearest atom"):
        _set([Molecule(z, pos / BOHR)])
    assert len(_set([Molecule(z, pos), m])) == 2  # the same molecule in Å passes both ways


def test_elements_outside_the_vocabulary_are_named():
    with pytest.raises(InvalidInputError, match=r"unknown element\(s\) \['Br'\].*knows \['H', 'C', 'N', 'O', 'F'\]"):
        _set([_embed("CCBr")])
    with pytest.raises(InvalidInputError, match=r"unknown element\(s\) \['Si'\]"):
        _set([_embed("C[Si](C)(C)C")])


def test_coordinates_only_output_has_no_invented_hydrogens():
    # two carbons 1.54 Å apart: EDM's rule bonds them singly; the record has no hydrogens
    mol = Molecule(np.array([6, 6]), np.array([[0.0, 0, 0], [1.54, 0, 0]]))
    out = to_rdkit(mol, implicit_hs=False)
    assert sum(a.GetTotalNumHs() for a in out.GetAtoms()) == 0
    assert Chem.MolToSmiles(out) == "[C][C]"  # three radical electrons each, not ethane
    assert from_rdkit(out).n_atoms == 2  # and it reads back without an implicit-hydrogen refusal
    assert Chem.MolToSmiles(to_rdkit(mol)) == "CC"  # EDM's validity keeps RDKit's implicit H


def test_the_cli_reader_applies_the_same_checks(tmp_path):
    from scigen.molecules.unigem.inputs import read_molecule_file

    path = tmp_path / "charged.sdf"
    w = Chem.SDWriter(str(path))
    w.write(_embed("CCO"))
    w.write(_embed("C[NH3+]"))
    w.close()
    with pytest.raises(InvalidInputError, match=r"charged.sdf: molecule\(s\) \[1\] carry formal charges"):
        read_molecule_file(path, QM9_ATOMS)


def test_hartree_sized_homo_and_gap_are_refused():
    mols = [_embed(s) for s in ("CCO", "CC#N", "OCC=O")]
    for m, gap_ha in zip(mols, (0.30, 0.35, 0.20), strict=True):
        m.SetDoubleProp("gap", gap_ha)  # QM9's raw files are in Hartree
    with pytest.raises(InvalidInputError, match=r"property 'gap' has median \|value\| 0.3, Hartree-sized; .*"
                                                r"multiply Hartree values by 27.2113"):
        _set(mols, properties=["gap"])
    for m in mols:
        m.SetDoubleProp("gap", m.GetDoubleProp("gap") * 27.211386246)
    np.testing.assert_allclose(_set(mols, properties=["gap"]).properties["gap"],
                               np.array([0.30, 0.35, 0.20]) * 27.211386246)


def test_molecule_records_written_to_sdf_read_back_with_the_same_atoms(tmp_path):
    from scigen.molecules.io import read_sdf, write_sdf

    # a C-O fragment without hydrogens (a coordinates-only record, e.g. a sample): RDKit must not add any
    frag = Molecule(np.array([6, 8]), np.array([[0.0, 0, 0], [1.43, 0, 0]]))
    back = read_sdf(write_sdf([frag], tmp_path / "frag.sdf"))
    np.testing.assert_array_equal(back[0].atomic_numbers, [6, 8])
