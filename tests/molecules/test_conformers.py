"""MOSES SMILES -> ETKDG + MMFF94 conformers: geometry against reference bond lengths and covalent
radii, determinism with a seed, per-molecule failures reported / skipped."""

import numpy as np
import pytest
from rdkit import Chem

from scigen.molecules.data import conformers_from_smiles, embed_smiles, load_moses_conformers
from scigen.molecules.elements import GEOM_ATOMS
from scigen.molecules.io import MoleculeFileError, MoleculeFileWarning

# the first MOSES training SMILES and two small references
SMILES = ["CCCS(=O)c1ccc2[nH]c(=NC(=O)OC)[nH]c2c1", "CC(C)(C)C(=O)C(Oc1ccc(Cl)cc1)n1ccnc1", "c1ccccc1", "CCO"]


def _graph(smiles):
    return Chem.AddHs(Chem.MolFromSmiles(smiles))


@pytest.fixture(scope="module")
def mols():
    return conformers_from_smiles(SMILES, seed=3)


def test_bond_lengths_within_covalent_tables(mols):
    pt = Chem.GetPeriodicTable()
    for smi, m in zip(SMILES, mols, strict=True):
        g = _graph(smi)
        assert m.atomic_numbers.tolist() == [a.GetAtomicNum() for a in g.GetAtoms()]
        topo = Chem.GetDistanceMatrix(g)
        d = np.linalg.norm(m.positions[:, None] - m.positions[None], axis=-1)
        for b in g.GetBonds():
            i, j = b.GetBeginAtomIdx(), b.GetEndAtomIdx()
            r = pt.GetRcovalent(int(m.atomic_numbers[i])) + pt.GetRcovalent(int(m.atomic_numbers[j]))
            assert 0.75 * r < d[i, j] < 1.12 * r, (smi, i, j, d[i, j], r)
        far = topo >= 3  # atoms three or more bonds apart do not clash
        assert d[far].min() > 1.8 if far.any() else True


def test_reference_bond_lengths(mols):
    """Benzene C:C 1.397 Å and C-H 1.09 Å (experimental; MMFF94 reproduces them within ~0.01 Å)."""
    benzene = mols[2]
    d = np.linalg.norm(benzene.positions[:, None] - benzene.positions[None], axis=-1)
    g = _graph("c1ccccc1")
    cc = [d[b.GetBeginAtomIdx(), b.GetEndAtomIdx()] for b in g.GetBonds() if b.GetIsAromatic()]
    ch = [d[b.GetBeginAtomIdx(), b.GetEndAtomIdx()] for b in g.GetBonds() if not b.GetIsAromatic()]
    assert len(cc) == 6 and len(ch) == 6
    np.testing.assert_allclose(cc, 1.397, atol=0.015)
    np.testing.assert_allclose(ch, 1.09, atol=0.015)
    # planar ring: the smallest singular value of the centred carbon coordinates vanishes
    c = benzene.positions[benzene.atomic_numbers == 6]
    assert np.linalg.svd(c - c.mean(0), compute_uv=False)[-1] < 1e-2


def test_mmff_lowers_the_energy_of_the_etkdg_geometry():
    from rdkit.Chem import AllChem

    raw = embed_smiles(SMILES[1], seed=5, mmff=False)
    relaxed = embed_smiles(SMILES[1], seed=5)
    g = _graph(SMILES[1])
    conf = Chem.Conformer(g.GetNumAtoms())
    for k, p in enumerate(raw.positions):
        conf.SetAtomPosition(k, p.tolist())
    g.AddConformer(conf, assignId=True)
    e_raw = AllChem.MMFFGetMoleculeForceField(g, AllChem.MMFFGetMoleculeProperties(g)).CalcEnergy()
    assert relaxed.properties["mmff_energy"] < e_raw - 1.0


def test_seeded_determinism(mols):
    again = conformers_from_smiles(SMILES, seed=3)
    for a, b in zip(mols, again, strict=True):
        np.testing.assert_array_equal(a.positions, b.positions)
    other = embed_smiles(SMILES[0], seed=99)
    assert np.abs(other.positions - mols[0].positions).max() > 0.1


def test_failures_are_reported_all_at_once_or_skipped():
    smi = ["CCO", "C1CC", "not_a_smiles", "c1ccccc1"]
    with pytest.raises(MoleculeFileError) as err:
        conformers_from_smiles(smi)
    assert [r[0] for r in err.value.records] == [1, 2]
    assert "C1CC" in str(err.value) and "not_a_smiles" in str(err.value)
    with pytest.warns(MoleculeFileWarning, match="2 bad record"):
        good = conformers_from_smiles(smi, skip_bad=True)
    assert [m.name for m in good] == ["CCO", "c1ccccc1"]
    with pytest.raises(ValueError, match="single str"):
        conformers_from_smiles("CCO")
    with pytest.raises(ValueError, match="cannot parse"):
        embed_smiles("C1CC")


def test_moses_set_is_ragged_types_and_coordinates():
    from scigen.datasets.bundled import moses_smiles

    ms = load_moses_conformers(limit=3, seed=1)
    assert ms.smiles == moses_smiles("train", limit=3) and ms.atom_vocab == GEOM_ATOMS
    item = ms[0]
    n = ms.n_atoms[0]
    assert n == _graph(ms.smiles[0]).GetNumAtoms() and int(item["mask"].sum()) == n
    assert abs(float(item["pos"][:n].mean(0).abs().max())) < 1e-5  # centred
    with pytest.raises(ValueError, match="limit"):
        load_moses_conformers(limit=0)
