"""Molecules larger than memory: the on-disk store (write_molecules / MoleculeStore) trains UniGEM exactly as
the in-memory MoleculeSet does, and training from it keeps peak RSS flat as the store grows."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.molecules import Molecule, MoleculeSet, MoleculeStore, UniGEM, write_molecules
from scigen.molecules.unigem.config import UniGEMConfig

_spec = importlib.util.spec_from_file_location("_rss", Path(__file__).parents[1] / "_rss.py")
_rss = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_rss)


def molecules(n, seed=0):
    """Random neutral molecules in Å: heavy atoms around the origin, hydrogens 1.09 Å from one of them."""
    rng = np.random.default_rng(seed)
    for i in range(n):
        k, nh = int(rng.integers(5, 15)), int(rng.integers(1, 14))
        heavy = rng.normal(size=(k, 3)) * 1.2
        d = rng.normal(size=(nh, 3))
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        yield Molecule(np.concatenate([rng.choice([6, 7, 8, 9], size=k), np.ones(nh, int)]),
                       np.concatenate([heavy, heavy[rng.integers(0, k, nh)] + 1.09 * d]),
                       properties={"lumo": float(rng.normal()), "gap": float(rng.normal() + 6)}, name=f"m{i}")


def test_store_items_and_summaries_equal_the_molecule_set(tmp_path):
    path = write_molecules(tmp_path / "qm", molecules(300), properties=("lumo", "gap"))
    ms = MoleculeSet.from_molecules(list(molecules(300)), properties=("lumo", "gap"))
    st = MoleculeStore(path)
    assert len(st) == 300 and st.size_histogram() == ms.size_histogram() and st.largest == ms.max_atoms
    assert list(st.names[:3]) == ["m0", "m1", "m2"]
    for p in ("lumo", "gap"):
        assert np.array_equal(st.properties[p], ms.properties[p])
    for i in (0, 17, 299):
        a, b = ms[i], st[i]
        assert all(torch.equal(a[k], b[k]) for k in a)


def test_fit_from_store_gives_the_in_memory_weights(tmp_path):
    cfg = UniGEMConfig.preset("tiny").model_copy(update={"properties": ("lumo",)})
    path = write_molecules(tmp_path / "qm", molecules(120), properties=("lumo",))
    a = UniGEM(cfg).fit(MoleculeSet.from_molecules(list(molecules(120)), properties=("lumo",)), max_steps=3,
                        batch_size=8, progress=False)
    b = UniGEM(cfg).fit(str(path), max_steps=3, batch_size=8, progress=False)
    sa, sb = a.network.state_dict(), b.network.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert a.metadata["prop_mean"] == b.metadata["prop_mean"] and a.metadata["train_smiles"] == b.metadata["train_smiles"]


def test_store_checks_name_the_problem(tmp_path):
    path = write_molecules(tmp_path / "qm", molecules(10), properties=("lumo",))
    with pytest.raises(InvalidInputError, match="gap"):
        UniGEM(UniGEMConfig.preset("tiny").model_copy(update={"properties": ("gap",)})).fit(path, max_steps=1)
    with pytest.raises(InvalidInputError, match="max_atoms=5"):
        UniGEM(UniGEMConfig.preset("tiny").model_copy(update={"properties": ("lumo",), "max_atoms": 5})).fit(path)
    bohr = [Molecule(m.atomic_numbers, m.positions / 0.529177210903, properties=m.properties) for m in molecules(10)]
    cfg = UniGEMConfig.preset("tiny").model_copy(update={"properties": ("lumo",)})
    with pytest.raises(InvalidInputError, match="Bohr") as in_memory:  # the same molecule is named either way
        UniGEM(cfg).fit(bohr, max_steps=1)
    with pytest.raises(InvalidInputError, match="Bohr") as on_disk:
        UniGEM(cfg).fit(write_molecules(tmp_path / "bohr", bohr, properties=("lumo",)), max_steps=1)
    assert str(on_disk.value) == str(in_memory.value)
    with pytest.raises(InvalidInputError, match=r"molecules\[1\]: property \['lumo'\] missing"):
        write_molecules(tmp_path / "bad", [next(molecules(1)), Molecule([6], [[0, 0, 0]])], properties=("lumo",))


def test_peak_rss_does_not_grow_with_the_store(tmp_path):
    """Peak RSS of training 3 steps from a store of 1,500 and of 6,000 molecules (0.8 and 3.1 MB on disk);
    slack 6 MiB (the in-memory MoleculeSet grows by about 10 MiB between the two: benchmarks/core/
    bench_rss_streaming_b.py). What grows legitimately: the novelty SMILES and the property table."""
    peaks = []
    for n in (1500, 6000):
        path = write_molecules(tmp_path / f"s{n}", molecules(n), properties=("lumo",))
        peaks.append(_rss.child_peak_rss(f"""
from scigen.molecules import UniGEM
from scigen.molecules.unigem.config import UniGEMConfig
cfg = UniGEMConfig.preset("tiny").model_copy(update={{"properties": ("lumo",)}})
UniGEM(cfg).fit({str(path)!r}, max_steps=3, batch_size=8, progress=False)
""")[0])
    assert peaks[1] - peaks[0] < 6.0, peaks
