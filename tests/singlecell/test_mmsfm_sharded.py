"""MMSFM sampling keyed by trajectory index (issue 33.3): with a fixed-step method, trajectory ``i`` of
``sample(n, seed=s)`` depends only on ``(s, i)``: the same drawn alone, among ``n``, or on either of two
processes (``devices=2``)."""

from __future__ import annotations

import textwrap

import anndata
import numpy as np
import pandas as pd
import pytest
import torch

from scigen.singlecell import MMSFM


def _cells(n=60, seed=0):
    rng = np.random.default_rng(seed)
    times = [0.0, 1.0, 2.0]
    X = np.concatenate([rng.normal((t, -t), 0.5, (n, 2)) for t in times]).astype(np.float32)
    obs = pd.DataFrame({"day": np.repeat(times, n)}, index=[f"c{i}" for i in range(len(X))])
    return anndata.AnnData(X=X, obs=obs, var=pd.DataFrame(index=["a", "b"]))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    model = MMSFM(k=2, sigma=0.1, time_key="day", train={"batch_size": 16, "max_steps": 3}).fit(_cells())
    path = tmp_path_factory.mktemp("mmsfm") / "model"
    model.save(path)
    return model, path


def _states(ad):
    return np.asarray(ad.X, dtype=np.float64)


@pytest.mark.parametrize("method", ["rk4", "euler_maruyama"])
def test_the_first_k_of_n_trajectories_are_the_k_trajectories(trained, method):
    model, _ = trained
    # 70 > 60 stored start cells: samples 60.. take keyed uniform start cells; the first 60 a seed permutation
    big, small = model.sample(70, method=method, steps=8, seed=3), model.sample(5, method=method, steps=8, seed=3)
    T = len(np.unique(big.obs["day"]))
    per_time_big = _states(big).reshape(T, 70, -1)
    np.testing.assert_allclose(_states(small).reshape(T, 5, -1), per_time_big[:, :5], rtol=0, atol=1e-6)
    assert not np.allclose(_states(model.sample(5, method=method, steps=8, seed=4)), _states(small))
    # the first 60 start from distinct stored cells (without replacement), as before keying
    start = per_time_big[0, :60]
    assert len(np.unique(start.round(6), axis=0)) == 60



def test_sample_to_writes_the_trajectories_of_sample(trained, tmp_path):
    """``sample_to`` (chunks of 4, fixed-step solver): trajectory ``i``'s states at the observed times equal
    ``sample``'s cells of trajectory ``i``."""
    from scigen.core.system.shard_writer import load_sharded_samples

    model, _ = trained
    got = load_sharded_samples(model.sample_to(tmp_path / "traj", 10, method="rk4", steps=8, seed=3, chunk_size=4))
    ad = model.sample(10, method="rk4", steps=8, seed=3)
    T = len(np.unique(ad.obs["day"]))
    assert got["states"].shape == (10, T, 2)
    np.testing.assert_allclose(got["states"], _states(ad).reshape(T, 10, -1).transpose(1, 0, 2), rtol=0, atol=1e-6)

SCRIPT = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    from scigen.singlecell import MMSFM

    if __name__ == "__main__":
        model = MMSFM.load(sys.argv[1])
        ad = model.sample(7, method="euler_maruyama", steps=8, seed=5, devices=2)
        np.save(os.path.join(sys.argv[2], f"rank{int(os.environ.get('LOCAL_RANK', 0))}.npy"), np.asarray(ad.X))
    """
)


@pytest.mark.slow  # 2-process runs in the default suite: the engine's and SBGM's
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
def test_two_processes_draw_the_trajectories_of_one(trained, tmp_path, run_script):
    model, path = trained
    run_script(tmp_path / "run.py", path, tmp_path, cwd=tmp_path, text=SCRIPT)
    one = np.asarray(model.sample(7, method="euler_maruyama", steps=8, seed=5).X)
    for r in (0, 1):
        np.testing.assert_allclose(np.load(tmp_path / f"rank{r}.npy"), one, rtol=0, atol=1e-6)
