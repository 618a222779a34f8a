"""EDM bond orders and stability on real QM9 molecules and perturbed ones; RDKit validity, uniqueness, novelty."""

import itertools

import numpy as np
import pytest
import torch

from scigen.molecules import Molecule, edm_smiles, molecule_metrics, property_mae, stability
from scigen.molecules.bonds import BONDS1, BONDS2, BONDS3, BondTables, bond_orders
from scigen.molecules.data import load_qm9
from scigen.molecules.elements import symbol


def _rule(a, b, d_pm):
    """EDM's rule written out scalar by scalar (the spec)."""
    if (a, b) not in BONDS1 or d_pm >= BONDS1[(a, b)] + 10:
        return 0
    if (a, b) in BONDS2 and d_pm < BONDS2[(a, b)] + 5:
        if (a, b) in BONDS3 and d_pm < BONDS3[(a, b)] + 3:
            return 3
        return 2
    return 1


def test_bond_orders_match_scalar_rule_brute_force():
    vocab = (1, 6, 7, 8, 9, 16)
    tables = BondTables(vocab)
    d = torch.linspace(0.9, 1.9, 201, dtype=torch.float64)
    for i, j in itertools.product(range(len(vocab)), repeat=2):
        got = bond_orders(torch.tensor([i, j]), torch.tensor([[0.0, 1.0], [1.0, 0.0]]) * d[:, None, None], tables)
        want = [_rule(symbol(vocab[i]), symbol(vocab[j]), float(x) * 100) for x in d]
        assert got[:, 0, 1].tolist() == want


@pytest.fixture(scope="module")
def qm9_small():
    return load_qm9("all", limit=400)


def test_known_qm9_molecules_stable(qm9_small):
    # gdb 1-8: methane, ammonia, water, acetylene, HCN, formaldehyde (CH2O), ethane ... all stable under EDM's rule
    mols = qm9_small.to_molecules()[:8]
    st = stability(mols)
    assert st["mol_stable"].all(), [qm9_small.smiles[i] for i in np.nonzero(~st["mol_stable"])[0]]
    # the first 400 molecules: EDM reports 99.0 % / 95.2 % for the whole data set
    st = stability(qm9_small.to_molecules())
    assert st["atom_stability"] > 0.98 and st["molecule_stability"] > 0.9


def test_perturbed_molecules_unstable(qm9_small):
    m = qm9_small.molecule(0)  # methane
    stretched = Molecule(m.atomic_numbers, m.positions.copy())
    stretched.positions[1] = m.positions[0] + 1.5 * (m.positions[1] - m.positions[0])  # C-H 1.09 -> 1.64 A
    st = stability([stretched])
    assert st["atom_stable"][0].tolist() == [False, False, True, True, True]
    squeezed = Molecule(m.atomic_numbers, m.positions * 0.4)  # H-H 0.71 A < 74+10 pm
    # C keeps its 4 single bonds; each H gets 1 (C) + 3 (H) = 4 bonds
    assert stability([squeezed])["atom_stable"][0].tolist() == [True, False, False, False, False]
    rng = np.random.default_rng(0)
    noisy = [Molecule(x.atomic_numbers, x.positions + rng.normal(0, 0.3, x.positions.shape))
             for x in qm9_small.to_molecules()[:100]]
    assert stability(noisy)["molecule_stability"] < 0.2


def test_validity_uniqueness_novelty(qm9_small):
    ms = qm9_small.to_molecules()
    methane, water = ms[0], ms[2]
    from rdkit import Chem

    def explicit(smi):  # EDM keeps H atoms as atoms: canonical SMILES with explicit [H]
        return Chem.MolToSmiles(Chem.AddHs(Chem.MolFromSmiles(smi)))

    assert edm_smiles(methane) == explicit("C") and edm_smiles(water) == explicit("O")
    far = Molecule(np.concatenate([methane.atomic_numbers, water.atomic_numbers]),
                   np.concatenate([methane.positions, water.positions + 10.0]))
    assert edm_smiles(far) == explicit("C")  # largest fragment
    pentavalent = Molecule([6, 1, 1, 1, 1, 1], np.array([[0, 0, 0], [1.05, 0, 0], [-1.05, 0, 0], [0, 1.05, 0],
                                                         [0, -1.05, 0], [0, 0, 1.05]], dtype=float))
    assert edm_smiles(pentavalent) is None
    scores = molecule_metrics([methane, methane, water, pentavalent], train_smiles=[explicit("C")])
    assert scores["validity"] == pytest.approx(3 / 4)
    assert scores["uniqueness"] == pytest.approx(2 / 3)
    assert scores["novelty"] == pytest.approx(1 / 2)
    assert scores["valid_x_unique"] == pytest.approx(0.5)
    assert scores["molecule_stability"] == pytest.approx(3 / 4)


def test_property_mae():
    assert property_mae({"gap": [1.0, 2.0]}, {"gap": [1.5, 1.0]}) == {"gap": pytest.approx(0.75)}
    with pytest.raises(ValueError, match="no true values"):
        property_mae({"gap": [1.0]}, {"homo": [1.0]})


def test_element_fractions_count_atoms():
    from scigen.molecules.metrics import element_fractions

    methane = Molecule([6, 1, 1, 1, 1], np.zeros((5, 3)))
    water = Molecule([8, 1, 1], np.zeros((3, 3)))
    f = element_fractions([methane, water])
    assert f == pytest.approx({"C": 1 / 8, "H": 6 / 8, "O": 1 / 8})
    qm9 = element_fractions(load_qm9("all", limit=2000).to_molecules())
    assert sum(qm9.values()) == pytest.approx(1.0) and 0.45 < qm9["H"] < 0.6  # QM9 is ~51 % hydrogen
    with pytest.raises(ValueError, match="at least one atom"):
        element_fractions([])
