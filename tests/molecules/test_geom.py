"""GEOM-Drugs loader on a small rdkit_folder written by the test (the documented layout), the
restricted unpickler, and the error when the data is not cached."""

import json
import os
import pickle

import numpy as np
import pytest
from rdkit import Chem
from rdkit.Chem import AllChem

from scigen.molecules.data import load_geom_drugs
from scigen.molecules.data.geom import UnsafePickleError, read_geom_pickle
from scigen.molecules.io import MoleculeFileError, MoleculeFileWarning


def _conformer(smiles, seed):
    m = Chem.AddHs(Chem.MolFromSmiles(smiles))
    assert AllChem.EmbedMolecule(m, randomSeed=seed) == 0
    return m


def _write_folder(root, *, with_missing=True):
    drugs = root / "rdkit_folder" / "drugs"
    drugs.mkdir(parents=True)
    confs = [{"rd_mol": _conformer("CCO", s), "totalenergy": e, "boltzmannweight": w}
             for s, e, w in ((1, -154.10, 0.2), (2, -154.30, 0.7), (3, -154.20, 0.1))]
    (drugs / "ethanol.pickle").write_bytes(pickle.dumps({"conformers": confs, "smiles": "CCO", "charge": 0}))
    one = [{"rd_mol": _conformer("c1ccncc1", 4), "totalenergy": -248.0, "boltzmannweight": 1.0}]
    (drugs / "pyridine.pickle").write_bytes(pickle.dumps({"conformers": one, "smiles": "c1ccncc1", "charge": 0}))
    summary = {"CCO": {"pickle_path": "drugs/ethanol.pickle", "charge": 0, "uniqueconfs": 3},
               "C#N": {"charge": 0, "uniqueconfs": 0},  # no pickle_path: skipped, as in EDM
               "c1ccncc1": {"pickle_path": "drugs/pyridine.pickle", "charge": 0, "uniqueconfs": 1}}
    if with_missing:
        summary["CCN"] = {"pickle_path": "drugs/missing.pickle", "charge": 0}
    (root / "rdkit_folder" / "summary_drugs.json").write_text(json.dumps(summary))
    return confs, one


def test_loads_lowest_energy_conformers(tmp_path):
    confs, one = _write_folder(tmp_path, with_missing=False)
    ms = load_geom_drugs(tmp_path, conformers=2)
    assert len(ms) == 3 and ms.smiles == ["CCO", "CCO", "c1ccncc1"]
    assert ms.names == ["CCO#0", "CCO#1", "c1ccncc1#0"]
    np.testing.assert_allclose(ms.properties["totalenergy"], [-154.30, -154.20, -248.0])
    np.testing.assert_allclose(ms.properties["boltzmannweight"], [0.7, 0.1, 1.0])
    # the coordinates are those of the pickled conformers (lowest energy first)
    np.testing.assert_allclose(ms.positions[0], confs[1]["rd_mol"].GetConformer().GetPositions())
    np.testing.assert_allclose(ms.positions[1], confs[2]["rd_mol"].GetConformer().GetPositions())
    assert ms.atomic_numbers[2].tolist() == [a.GetAtomicNum() for a in one[0]["rd_mol"].GetAtoms()]
    # the rdkit_folder itself is accepted as root; limit counts molecules
    assert len(load_geom_drugs(tmp_path / "rdkit_folder", conformers=30, limit=1)) == 3


def test_missing_pickle_is_reported_or_skipped(tmp_path):
    _write_folder(tmp_path)
    with pytest.raises(MoleculeFileError, match="missing.pickle") as err:
        load_geom_drugs(tmp_path)
    assert len(err.value.records) == 1 and "CCN" in str(err.value)
    with pytest.warns(MoleculeFileWarning):
        ms = load_geom_drugs(tmp_path, skip_bad=True)
    assert len(ms) == 4


class _Evil:
    def __reduce__(self):
        return (os.getcwd, ())


def test_restricted_unpickler_refuses_other_globals(tmp_path):
    p = tmp_path / "evil.pickle"
    p.write_bytes(pickle.dumps({"conformers": [{"rd_mol": _Evil()}]}))
    with pytest.raises(UnsafePickleError, match="posix.getcwd|os.getcwd"):
        read_geom_pickle(p)


def test_not_cached_names_the_fetch_command(tmp_path, monkeypatch):
    from scigen.datasets import DataNotAvailableError

    monkeypatch.setenv("SCIGEN_DATA", str(tmp_path / "cache"))
    with pytest.raises(DataNotAvailableError, match="scigen data fetch GEOM-Drugs"):
        load_geom_drugs()
    with pytest.raises(FileNotFoundError, match="summary_drugs.json"):
        load_geom_drugs(tmp_path)
    with pytest.raises(ValueError, match="conformers"):
        load_geom_drugs(tmp_path, conformers=0)
