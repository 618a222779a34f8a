"""GIM sampling keyed by cell index (issue 33.3): cell ``i`` of condition ``k`` of ``sample(..., n_samples=n,
seed=s)`` depends only on ``(s, i, k)``: the same among ``m < n`` cells, or on either of two processes
(``devices=2``)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import torch

from scigen.core.streams import SampleStreams
from scigen.singlecell.gim.synthetic import synthetic_screen
from scigen.singlecell.gim.system import GIM

FAST = {"width": 16, "depth": 1, "train": {"max_steps": 3, "batch_size": 8, "progress": False, "logger": None}}


def _small():
    return synthetic_screen(6, n_functions=6, n_ood_functions=2, cells=20, n_control=200, seed=0)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    ad = _small()
    model = GIM(**FAST, target_prior="categorical").fit(ad)
    path = tmp_path_factory.mktemp("gim") / "model"
    model.save(path)
    return model, path, ad[ad.obs["split"] == "ood_full"]


def _by_condition(ad, n):
    """``[K, n, d]``: the cells of each condition (sample() writes condition-major, n per condition)."""
    x = np.asarray(ad.X, dtype=np.float64)
    return x.reshape(-1, n, x.shape[1])


@pytest.mark.parametrize("intervention", ["map", "mixture"])
def test_the_first_m_of_n_cells_are_the_m_cells(trained, intervention):
    model, _, cond = trained
    big = model.sample(cond, n_samples=9, intervention=intervention, seed=3)
    small = model.sample(cond, n_samples=4, intervention=intervention, seed=3)
    K = _by_condition(big, 9).shape[0]
    assert K == 8  # 2 compounds x 4 doses: several conditions keyed apart
    np.testing.assert_allclose(_by_condition(small, 4), _by_condition(big, 9)[:, :4], rtol=0, atol=1e-6)
    assert list(small.obs["gim_condition"]) == list(big.obs["gim_condition"].to_numpy().reshape(K, 9)[:, :4].ravel())
    other = model.sample(cond, n_samples=4, intervention=intervention, seed=4)
    assert not np.allclose(np.asarray(other.X), np.asarray(small.X))
    # conditions do not share noise: cell i of two conditions is not a shifted copy of the same draw
    z = _by_condition(big, 9)
    assert not np.allclose(z[0] - z[0].mean(0), z[1] - z[1].mean(0))
    # the observational model too
    obs_big, obs_small = model.sample(None, n_samples=9, seed=3), model.sample(None, n_samples=4, seed=3)
    np.testing.assert_allclose(np.asarray(obs_small.X), np.asarray(obs_big.X)[:4], rtol=0, atol=1e-6)


def test_sample_to_writes_the_cells_of_sample(trained, tmp_path):
    """``sample_to`` (chunks of 3): ``cells[i, k]`` is ``sample``'s cell ``i`` of condition ``k`` (mixture draws)."""
    from scigen.core.system.shard_writer import load_sharded_samples

    model, _, cond = trained
    got = load_sharded_samples(model.sample_to(tmp_path / "c", 7, conditions=cond, intervention="mixture", seed=3,
                                               chunk_size=3))
    want = _by_condition(model.sample(cond, n_samples=7, intervention="mixture", seed=3), 7)  # [K, n, d]
    np.testing.assert_allclose(got["cells"], want.transpose(1, 0, 2), rtol=0, atol=1e-6)
    plain = load_sharded_samples(model.sample_to(tmp_path / "o", 5, seed=3))
    np.testing.assert_allclose(plain["cells"][:, 0], np.asarray(model.sample(None, n_samples=5, seed=3).X), rtol=0,
                               atol=1e-6)

def test_keyed_categorical_targets_follow_the_probabilities(trained):
    """The keyed inversion draw of a target index has the categorical law: frequencies within 5 binomial
    standard errors of p over 40 000 keyed cells."""
    model, _, _ = trained
    p = torch.tensor([0.05, 0.5, 0.15, 0.3, 0.0, 0.0]).expand(40_000, 6)
    idx = model._targets(p, SampleStreams(7, torch.arange(40_000)))
    freq = torch.bincount(idx, minlength=6).double() / 40_000
    se = (p[0].double() * (1 - p[0].double()) / 40_000).sqrt()
    assert (freq - p[0].double()).abs().le(5 * se + 1e-12).all(), freq


SCRIPT = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    from scigen.singlecell.gim.synthetic import synthetic_screen
    from scigen.singlecell.gim.system import GIM

    if __name__ == "__main__":
        model = GIM.load(sys.argv[1])
        ad = synthetic_screen(6, n_functions=6, n_ood_functions=2, cells=20, n_control=200, seed=0)
        cells = model.sample(ad[ad.obs["split"] == "ood_full"], n_samples=7, intervention="mixture", seed=5,
                             devices=2)
        rank = int(os.environ.get("LOCAL_RANK", 0))
        np.save(os.path.join(sys.argv[2], f"rank{rank}.npy"), np.asarray(cells.X))
        np.save(os.path.join(sys.argv[2], f"cond{rank}.npy"), cells.obs["gim_condition"].to_numpy().astype(str))
    """
)


# the singlecell domain's one 2-process sampling test in the default suite (MMSFM's is slow)
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
def test_two_processes_draw_the_cells_of_one(trained, tmp_path, run_script):
    """Float32 cells gathered from 2 processes equal one process's: each rank computes its cells from the same
    keyed float64 noise with the same float32 network, so only reduction order (the [m, d] matrix products over
    a different number of rows) can differ: atol 1e-6."""
    model, path, cond = trained
    run_script(tmp_path / "run.py", path, tmp_path, cwd=tmp_path, text=SCRIPT)
    one = model.sample(cond, n_samples=7, intervention="mixture", seed=5)
    for r in (0, 1):
        np.testing.assert_allclose(np.load(tmp_path / f"rank{r}.npy"), np.asarray(one.X), rtol=0, atol=1e-6)
        assert list(np.load(tmp_path / f"cond{r}.npy")) == list(one.obs["gim_condition"].astype(str))
