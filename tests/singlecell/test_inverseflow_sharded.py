"""Inverse Flow's ``sample`` (issue 33.3) denoises a seeded subset of the data's rows: the subset is keyed by
row (row ``j`` is chosen by a uniform keyed by ``(seed, j)``) and the denoising is deterministic per cell, so
a cell's output depends only on its row. ``devices=N`` splits the cells over processes in whole network batches:
the one-process result, bit for bit."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from scigen.singlecell.inverseflow import Gaussian, InverseFlow
from scigen.singlecell.inverseflow.data import circle_toy
from scigen.singlecell.inverseflow.system import keyed_subset

TINY = {"width": 32, "depth": 1, "t_max": 0.2, "sigma_data": 0.7,
        "train": {"max_steps": 3, "batch_size": 64, "progress": False, "logger": None}}


def test_the_subset_of_k_rows_is_inside_the_subset_of_n_and_denoised_alike():
    toy = circle_toy(20, sigma=0.2, seed=0)
    model = InverseFlow(TINY, noise=Gaussian(0.2)).fit(toy)
    big, small = model.sample(toy, n_samples=30, seed=3), model.sample(toy, n_samples=8, seed=3)
    assert set(small.obs_names) < set(big.obs_names)
    common = big[small.obs_names]
    np.testing.assert_allclose(small.layers["inverse_flow"], common.layers["inverse_flow"], rtol=0, atol=1e-6)
    # each cell is its row denoised alone: the output of a row does not depend on the others chosen
    np.testing.assert_allclose(small.layers["inverse_flow"], model.denoise(toy[small.obs_names].copy()).layers[
        "inverse_flow"], rtol=0, atol=1e-6)
    assert set(model.sample(toy, n_samples=8, seed=4).obs_names) != set(small.obs_names)


def test_sample_to_writes_the_denoised_rows_of_a_sparse_anndata(tmp_path):
    """``sample_to`` reads the rows a chunk at a time and writes what ``denoise`` puts in the layer, bit for bit
    (the same network batches); asking for more rows than the data has is refused by name."""
    import anndata

    from scigen.core.errors import InvalidInputError
    from scigen.core.system.shard_writer import load_sharded_samples

    model = InverseFlow(TINY, noise=Gaussian(0.2)).fit(circle_toy(20, sigma=0.2, seed=0))
    X = np.random.default_rng(1).normal(size=(2500, 2)).astype(np.float32)
    X[X < -0.5] = 0.0
    ad = anndata.AnnData(X=sp.csr_matrix(X))
    got = load_sharded_samples(model.sample_to(tmp_path / "d", ad.n_obs, data=ad, chunk_size=1000))
    want = model.denoise(ad.copy()).layers["inverse_flow"].toarray()
    np.testing.assert_array_equal(got["denoised"], want)
    with pytest.raises(InvalidInputError, match="the data has 2500 rows"):
        model.sample_to(tmp_path / "e", 2600, data=ad)
    assert not (tmp_path / "e").exists()

@pytest.mark.parametrize(("n_obs", "k"), [(10, 3), (7, 6)])
def test_keyed_subsets_are_uniform_without_replacement(n_obs, k):
    """Over 1500 seeds every row is chosen with probability k / n_obs (within 5 binomial standard errors), each
    subset has k distinct sorted rows, and growing the subset keeps the smaller one."""
    hits = np.zeros(n_obs)
    for seed in range(1500):
        rows = keyed_subset(n_obs, k, seed)
        assert len(rows) == k and np.all(np.diff(rows) > 0)
        assert set(keyed_subset(n_obs, k - 1, seed)) <= set(rows)
        hits[rows] += 1
    p = k / n_obs
    se = np.sqrt(p * (1 - p) / 1500)
    assert np.abs(hits / 1500 - p).max() < 5 * se, hits / 1500


SCRIPT = textwrap.dedent(
    """
    import os, sys
    import anndata
    import numpy as np
    import scipy.sparse as sp
    from scigen.singlecell.inverseflow import InverseFlow

    if __name__ == "__main__":
        model = InverseFlow.load(sys.argv[1])
        rank = int(os.environ.get("LOCAL_RANK", 0))
        X = np.load(sys.argv[3])
        # 2 processes of whole 4096-row blocks: 5000 rows -> rank 0 rows 0..4095, rank 1 the rest and 3192 keys past n
        ad = model.denoise(anndata.AnnData(X=sp.csr_matrix(X)), devices=2)
        small = model.sample(X[:50], n_samples=9, seed=2, devices=2)  # batches of 1024: rank 1 has no row at all
        np.save(os.path.join(sys.argv[2], f"ad{rank}.npy"), ad.layers["inverse_flow"].toarray())
        np.save(os.path.join(sys.argv[2], f"small{rank}.npy"), small)
    """
)


@pytest.mark.slow  # singlecell's 2-process test in the default suite is GIM's
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
def test_two_processes_denoise_what_one_does(tmp_path, run_script):
    import anndata

    toy = circle_toy(40, sigma=0.2, seed=0)
    model = InverseFlow(TINY, noise=Gaussian(0.2)).fit(toy)
    model.save(tmp_path / "model")
    rng = np.random.default_rng(0)
    X = (rng.normal(size=(5000, 2)) * (rng.random((5000, 2)) < 0.7)).astype(np.float32)  # sparse-ish
    np.save(tmp_path / "x.npy", X)
    run_script(tmp_path / "run.py", tmp_path / "model", tmp_path, tmp_path / "x.npy", cwd=tmp_path, timeout=300, text=SCRIPT)
    one = model.denoise(anndata.AnnData(X=sp.csr_matrix(X))).layers["inverse_flow"].toarray()
    small = model.sample(X[:50], n_samples=9, seed=2)
    for r in (0, 1):
        np.testing.assert_array_equal(np.load(tmp_path / f"ad{r}.npy"), one)
        np.testing.assert_array_equal(np.load(tmp_path / f"small{r}.npy"), small)
