"""PoseBusters' checks on RDKit-embedded molecules with known outcomes (a stretched bond, a bent angle, a clash,
a puckered benzene), and its sanitization check against EDM's validity on the same molecules."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("posebusters")
from rdkit import Chem  # noqa: E402
from rdkit.Chem import AllChem  # noqa: E402

from scigen.core.errors import InvalidInputError  # noqa: E402
from scigen.molecules import Molecule, from_rdkit, molecule_metrics  # noqa: E402
from scigen.molecules.pose_checks import posebusters_checks, posebusters_metrics  # noqa: E402


def _embedded(smiles: str) -> Chem.Mol:
    m = Chem.AddHs(Chem.MolFromSmiles(smiles))
    assert AllChem.EmbedMolecule(m, randomSeed=0) == 0
    AllChem.MMFFOptimizeMolecule(m)
    return m


def _moved(mol: Chem.Mol, atoms, shift) -> Chem.Mol:
    """A copy with ``atoms`` shifted by ``shift`` (Å); the bond graph is kept."""
    out = Chem.Mol(mol)
    pos = out.GetConformer().GetPositions()
    pos[list(atoms)] += np.asarray(shift, dtype=float)
    conf = out.GetConformer()
    for i, p in enumerate(pos):
        conf.SetAtomPosition(i, p.tolist())
    return out


def _stretched(mol: Chem.Mol, a: int, b: int, length: float) -> Chem.Mol:
    """``b`` and the atoms on its side of the bond ``a-b`` moved so that the bond is ``length`` Å long."""
    em = Chem.RWMol(mol)
    em.RemoveBond(a, b)
    side = next(f for f in Chem.GetMolFrags(em) if b in f)
    pos = mol.GetConformer().GetPositions()
    u = (pos[b] - pos[a]) / np.linalg.norm(pos[b] - pos[a])
    return _moved(mol, side, (length - np.linalg.norm(pos[b] - pos[a])) * u)


def test_relaxed_molecules_pass_every_check():
    df = posebusters_checks([_embedded(s) for s in ("CCO", "c1ccccc1", "CC(=O)N", "C1CCCCC1")])
    assert df.shape[0] == 4 and df.to_numpy().all(), df


def test_a_stretched_bond_fails_the_bond_length_check_only_on_geometry():
    ethanol = _embedded("CCO")  # atoms 0 C, 1 C, 2 O; bond C1-O2 ~1.42 Å
    bad = _stretched(ethanol, 1, 2, 2.2)  # RDKit's bound ~1.43 Å widened by 25 %: 1.8 Å
    df = posebusters_checks([ethanol, bad])
    assert df.loc[0, "bond_lengths"] and not df.loc[1, "bond_lengths"]
    assert df.loc[1, "sanitization"] and df.loc[1, "all_atoms_connected"]  # the chemistry is unchanged


def test_a_clash_and_a_puckered_benzene_fail_their_checks():
    hexane = _embedded("CCCCCC")
    pos = hexane.GetConformer().GetPositions()
    clash = _moved(hexane, [5], pos[0] - pos[5] + np.array([1.2, 0.0, 0.0]))  # C6 1.2 Å from C1, not bonded
    benzene = _embedded("c1ccccc1")
    ring = [a.GetIdx() for a in benzene.GetAtoms() if a.GetAtomicNum() == 6]
    normal = np.cross(*(benzene.GetConformer().GetPositions()[ring[1:3]] - benzene.GetConformer().GetPositions()[ring[0]]))
    puckered = _moved(benzene, [ring[0], ring[3]], 0.8 * normal / np.linalg.norm(normal))  # a boat: 0.5 Å off plane
    df = posebusters_checks([clash, puckered])
    assert not df.loc[0, "internal_steric_clash"]
    assert not df.loc[1, "aromatic_ring_flatness"]


def test_sanitization_is_edm_validity_and_metrics_are_pass_rates():
    """On molecules as EDM builds them (distance bonds): PoseBusters' sanitization pass rate equals EDM's
    validity; a pentavalent carbon fails both, two distant fragments fail ``all_atoms_connected`` only."""
    methane, water = (from_rdkit(_embedded(s)) for s in ("C", "O"))
    pentavalent = Molecule([6, 1, 1, 1, 1, 1], np.array([[0, 0, 0], [1.05, 0, 0], [-1.05, 0, 0], [0, 1.05, 0],
                                                         [0, -1.05, 0], [0, 0, 1.05]], dtype=float))
    far = Molecule(np.concatenate([methane.atomic_numbers, water.atomic_numbers]),
                   np.concatenate([methane.positions, water.positions + 10.0]))
    mols = [methane, water, pentavalent, far]
    df = posebusters_checks(mols)
    assert df["sanitization"].tolist() == [True, True, False, True]
    assert df["all_atoms_connected"].tolist() == [True, True, True, False]
    assert not df.loc[2, "bond_lengths"] and not df.loc[2, "internal_steric_clash"]  # not run on it: counted failed
    scores = posebusters_metrics(mols)
    assert scores["posebusters/sanitization"] == pytest.approx(molecule_metrics(mols)["validity"])
    assert scores["posebusters/all_atoms_connected"] == pytest.approx(3 / 4)
    assert scores["posebusters/all"] == pytest.approx(float(df.all(axis=1).mean()))


def test_bad_input_is_named():
    with pytest.raises(InvalidInputError, match="config"):
        posebusters_checks([_embedded("C")], config="redock")
    with pytest.raises(InvalidInputError, match="without a 3-D conformer"):
        posebusters_checks([Chem.MolFromSmiles("CC")])
    with pytest.raises(InvalidInputError, match="at least one"):
        posebusters_checks([])


def test_evaluate_reports_pass_rates_beside_edm_metrics():
    from scigen.molecules import EDM, load_qm9

    qm9 = load_qm9("all", limit=60)
    m = EDM(hidden=16, n_layers=2, steps=10, train={"ema_decay": None, "batch_size": 16, "progress": False})
    m.fit(qm9, max_steps=1)
    real = qm9.to_molecules()[:40]  # DFT geometries: (nearly) all pass
    scores = m.evaluate(qm9, samples=real)
    assert scores["posebusters/sanitization"] == pytest.approx(scores["validity"])
    assert scores["posebusters/bond_lengths"] > 0.9 and "posebusters/internal_energy" not in scores
    assert not any(k.startswith("posebusters/") for k in m.evaluate(qm9, samples=real, posebusters=False))
