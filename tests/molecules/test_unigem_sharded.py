"""UniGEM / EDM sampling keyed by molecule index (issue 33.3): molecule ``i`` of ``sample(n, seed=s)`` (its size,
its atoms' initial noise and the ancestral sampler's noise) depends only on ``(s, i)``, so it is the same drawn
alone, among ``n``, in another ``batch_size``, or on either of two processes (``devices=2``)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.core.streams import SampleStreams
from scigen.molecules import EDM, UniGEM, load_qm9
from scigen.molecules.data.batching import ptr_from_counts
from scigen.molecules.unigem.inputs import molecule_sizes
from scigen.molecules.unigem.process import atom_streams, size_streams

# method "ddpm" (config default) on 6 integer steps: the stochastic ancestral sampler, noise at every step
TINY = dict(hidden=16, n_layers=2, steps=6, train={"lr": 2e-3, "ema_decay": None, "batch_size": 16,
                                                    "progress": False})


@pytest.fixture(scope="module", params=["unigem", "edm"])
def trained(request, tmp_path_factory):
    data = load_qm9("all", limit=120)
    model = (UniGEM(**TINY, properties=("gap",)) if request.param == "unigem" else EDM(**TINY)).fit(data, max_steps=2)
    path = tmp_path_factory.mktemp(request.param) / "model"
    model.save(path)
    return model, path


def _arrays(mols):
    """``(sizes, atomic numbers, positions, properties)`` of RDKit Mols, padded to the largest."""
    sizes = [m.GetNumAtoms() for m in mols]
    z = np.zeros((len(mols), max(sizes)), dtype=np.int64)
    pos = np.zeros((len(mols), max(sizes), 3))
    for i, m in enumerate(mols):
        z[i, :sizes[i]] = [a.GetAtomicNum() for a in m.GetAtoms()]
        pos[i, :sizes[i]] = m.GetConformer().GetPositions()
    props = np.array([[m.GetDoubleProp(p) for p in sorted(m.GetPropsAsDict())] for m in mols])
    return np.array(sizes), z, pos, props


def _assert_same(got, want, rel: float = 0.0):
    """Sizes and types exactly; positions and properties to ``1e-6`` plus ``rel`` times their largest magnitude."""
    for a, b in zip(got[:2], want[:2], strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(got[2:], want[2:], strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6 + rel * (np.abs(b).max() if b.size else 0.0))


def test_sample_to_writes_the_molecules_of_sample_as_padded_arrays(trained, tmp_path):
    """``sample_to`` (chunks of 4 rounded to the batches of 3): molecule ``i`` of ``sample(n)`` as padded arrays,
    bit for bit (the same batches); a fixed ``n_atoms`` too."""
    from scigen.core.system.shard_writer import load_sharded_samples

    model, _ = trained
    got = load_sharded_samples(model.sample_to(tmp_path / "m", 8, seed=7, chunk_size=4, batch_size=3))
    sizes, z, pos, props = _arrays(model.sample(8, seed=7, batch_size=3))
    width = model.config.max_atoms
    assert got["pos"].shape == (8, width, 3) and got["atomic_numbers"].shape == (8, width)
    np.testing.assert_array_equal(got["n_atoms"], sizes)
    np.testing.assert_array_equal(got["atomic_numbers"][:, :z.shape[1]], z)
    assert not got["atomic_numbers"][:, z.shape[1]:].any() and not got["pos"][:, z.shape[1]:].any()
    np.testing.assert_allclose(got["pos"][:, :z.shape[1]], pos, rtol=0, atol=1e-6)
    if "properties" in got:
        np.testing.assert_allclose(got["properties"], props, rtol=0, atol=1e-6)
    fixed = load_sharded_samples(model.sample_to(tmp_path / "f", 3, seed=1, n_atoms=5, batch_size=3))
    assert fixed["n_atoms"].tolist() == [5, 5, 5]
    np.testing.assert_array_equal(fixed["atomic_numbers"][:, :5] > 0, True)

def test_the_first_k_of_n_molecules_are_the_k_molecules(trained):
    """Same blocks (``batch_size=3``): the first 3 of 9 molecules are ``sample(3)`` to float32 rounding."""
    model, _ = trained
    nine = model.sample(9, seed=7, batch_size=3)
    three = model.sample(3, seed=7)
    _assert_same(_arrays(nine[:3]), _arrays(three))
    # batches 0-2, 3-5, 6 (cut at 7): molecule 6 is alone in its network calls here and one of three in ``nine``,
    # so it differs by the ulps of another batch size, amplified over the sampler's steps (the next test's bound)
    _assert_same(_arrays(nine[:7]), _arrays(model.sample(7, seed=7, batch_size=3)), rel=1e-4)
    assert [m.GetProp("_Name") for m in nine] == [f"{model.name}_{i}" for i in range(9)]
    other = _arrays(model.sample(3, seed=8))
    assert not (np.array_equal(other[0], _arrays(three)[0]) and np.allclose(other[2], _arrays(three)[2]))
    # given sizes: molecule i still draws from key i
    a = model.sample(3, seed=7, n_atoms=[5, 9, 6])
    b = model.sample(1, seed=7, n_atoms=[5])
    _assert_same(_arrays(model.sample(3, seed=7, n_atoms=[5, 9, 6], batch_size=1)[:1]), _arrays(b))
    assert [m.GetNumAtoms() for m in a] == [5, 9, 6]
    with pytest.raises(InvalidInputError, match="devices must be a positive int"):
        model.sample(2, devices=0)


def test_a_molecule_does_not_depend_on_the_others_in_its_batch(trained):
    """Other blocks (``batch_size`` 4 and 2 against 3): the same molecules up to float32 rounding. One network
    call on identical inputs differs by ~1 ulp between a batch of 4 and of 3 molecules (the EGNN's edge matmuls
    and index_add over another number of rows), and the untrained network amplifies it over the sampler's
    steps: measured ≤ 2.2e-6 of the largest coordinate. A keying error draws other noise: an O(1) change."""
    model, _ = trained
    three = _arrays(model.sample(3, seed=7))
    for bs in (4, 2):
        _assert_same(_arrays(model.sample(9, seed=7, batch_size=bs)[:3]), three, rel=1e-4)


def test_keyed_sizes_follow_the_histogram():
    """The inverse-CDF size draw: size frequencies over many molecules match the histogram (4σ binomial)."""
    hist = {"3": 1.0, "9": 5.0, "5": 2.0, "12": 0.5}  # unsorted keys, as a JSON round trip may give
    n = 20000
    sizes = molecule_sizes(n, None, hist, 29, size_streams(SampleStreams(2, torch.arange(n))))
    total = sum(hist.values())
    for k, v in hist.items():
        p = v / total
        assert abs(float((sizes == int(k)).double().mean()) - p) <= 4 * (p * (1 - p) / n) ** 0.5
    assert set(sizes.tolist()) <= {int(k) for k in hist}


def test_every_atom_draws_from_its_own_child_of_the_molecule_key():
    """Keys: molecule k, atom j -> k·2^20 + 1 + j; size -> k·2^20. All distinct, none a bare molecule key."""
    mols = SampleStreams(0, torch.tensor([0, 1, 5]))
    atoms = atom_streams(mols, ptr_from_counts(torch.tensor([2, 3, 1])))
    want = [1, 2, 2**20 + 1, 2**20 + 2, 2**20 + 3, 5 * 2**20 + 1]
    assert atoms.keys.tolist() == want
    assert size_streams(mols).keys.tolist() == [0, 2**20, 5 * 2**20]


SCRIPT = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    from scigen.molecules import EDM, UniGEM

    if __name__ == "__main__":
        model = (UniGEM if sys.argv[3] == "unigem" else EDM).load(sys.argv[1])
        mols = model.sample(7, seed=5, batch_size=3, devices=2)
        few = model.sample(2, seed=5, devices=2)  # one batch of 256: rank 1 has no molecule
        rank = int(os.environ.get("LOCAL_RANK", 0))
        sizes = [m.GetNumAtoms() for m in mols]
        z = np.zeros((7, max(sizes)), dtype=np.int64)
        pos = np.zeros((7, max(sizes), 3))
        for i, m in enumerate(mols):
            z[i, :sizes[i]] = [a.GetAtomicNum() for a in m.GetAtoms()]
            pos[i, :sizes[i]] = m.GetConformer().GetPositions()
        props = np.array([[m.GetDoubleProp(p) for p in sorted(m.GetPropsAsDict())] for m in mols])
        names = np.array([m.GetProp("_Name") for m in mols])
        few_pos = np.concatenate([m.GetConformer().GetPositions() for m in few])
        np.savez(os.path.join(sys.argv[2], f"rank{rank}.npz"), sizes=sizes, z=z, pos=pos, props=props, names=names,
                 few_pos=few_pos)
    """
)


# one 2-process run in the default suite (UniGEM); EDM's on demand (slow)
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
@pytest.mark.parametrize("trained", ["unigem", pytest.param("edm", marks=pytest.mark.slow)], indirect=True)
def test_two_processes_draw_the_molecules_of_one(trained, tmp_path, run_script):
    model, path = trained
    run_script(tmp_path / "run.py", path, tmp_path, model.name, cwd=tmp_path, text=SCRIPT)
    # batches of 3 aligned to multiples of 3 and whole batches per rank (rank 0: molecules 0-5, rank 1: 6): the
    # batches of one process, so the same arithmetic (other batches differ by float32 rounding only:
    # test_a_molecule_does_not_depend_on_the_others_in_its_batch)
    one = _arrays(model.sample(7, seed=5, batch_size=3))
    for r in (0, 1):
        got = np.load(tmp_path / f"rank{r}.npz")
        assert got["names"].tolist() == [f"{model.name}_{i}" for i in range(7)]
        _assert_same((got["sizes"], got["z"], got["pos"], got["props"]), one)
        few = np.concatenate([m.GetConformer().GetPositions() for m in model.sample(2, seed=5)])
        np.testing.assert_allclose(got["few_pos"], few, rtol=0, atol=1e-6)
