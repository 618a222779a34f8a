"""SBGD sampling keyed by graph index (issue 33.3): graph ``i`` of ``sample(n, seed=s)`` draws its size, block plan
and inter-block edges from child 0 of key ``i`` and block ``j``'s noise from child ``j + 1``, so it is the same drawn
alone, among ``n``, or on either of two processes (``devices=2``).

Graphs are compared exactly (nodes, types, edges): the denoised blocks are thresholded at 0 and the edge uniforms
at ``p_ij``, so only a value within float rounding (~1e-7) of a threshold could differ between batch shapes (the
other blocks of a batch do not enter a block's computation)."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
import torch

from scigen.core.streams import SampleStreams
from scigen.graphs.data import sbm_graphs
from scigen.graphs.sbgd import SBGD
from scigen.graphs.sbgd.sizes import block_plan

TINY = {"train": {"progress": False, "batch_size": 4}, "steps": 4}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    data = sbm_graphs(12, min_blocks=2, max_blocks=3, min_size=6, max_size=9, p_in=0.6, p_out=0.05, seed=0)
    model = SBGD(SBGD.Config.preset("tiny", **TINY)).fit(data, max_steps=2, logger=None)
    path = tmp_path_factory.mktemp("sbgd") / "model"
    model.save(path)
    return model, path


def _key(graphs):
    return [(g.number_of_nodes(), sorted(g.nodes(data="type")), sorted(map(sorted, g.edges()))) for g in graphs]


def test_the_first_k_of_n_graphs_are_the_k_graphs(trained):
    model, _ = trained
    big = model.sample(9, seed=7)  # sizes drawn per graph from the training sizes
    assert _key(model.sample(3, seed=7)) == _key(big)[:3]
    assert _key(model.sample(3, seed=8)) != _key(big)[:3]
    assert len({g.number_of_nodes() for g in big}) > 1  # the sizes were drawn, not one size for all
    sized = model.sample(4, seed=2, n_nodes=[30, 12, 9, 25])  # 30 and 25 nodes: several blocks each
    assert _key(model.sample(2, seed=2, n_nodes=[30, 12])) == _key(sized)[:2]
    assert [g.number_of_nodes() for g in sized] == [30, 12, 9, 25]
    assert sum(g.number_of_edges() for g in sized) > 0


def test_sample_to_writes_the_graphs_of_sample(trained, tmp_path):
    """``sample_to`` (chunks of 3): graph ``i`` of ``sample`` as a padded adjacency, node types and size."""
    import networkx as nx

    from scigen.core.system.shard_writer import load_sharded_samples

    model, _ = trained
    got = load_sharded_samples(model.sample_to(tmp_path / "g", 5, seed=4, chunk_size=3))
    graphs = model.sample(5, seed=4)
    width = max(model.metadata["train_sizes"])
    assert got["adjacency"].shape == (5, width, width)
    assert got["n_nodes"].tolist() == [g.number_of_nodes() for g in graphs]
    for a, k, g in zip(got["adjacency"], got["n_nodes"], graphs, strict=True):
        np.testing.assert_array_equal(a[:k, :k], nx.to_numpy_array(g, nodelist=range(k)) > 0)
        assert not a[k:].any() and not a[:, k:].any()
    fixed = load_sharded_samples(model.sample_to(tmp_path / "f", 2, seed=4, n_nodes=12))
    assert fixed["n_nodes"].tolist() == [12, 12] and fixed["adjacency"].shape == (2, 12, 12)

def test_keyed_block_plans_draw_sizes_with_the_histogram_frequencies():
    """``"empirical"`` plans from keyed uniforms: the first four block sizes of a 40-node plan (4 · 8 < 40: always
    present, never cut to fit; later ones are selected by the stopping rule) are i.i.d. from the histogram,
    p = (0.2, 0.3, 0.5) on sizes (3, 5, 8): frequencies within 4 binomial sigmas."""
    hist = [0] * 9
    hist[3], hist[5], hist[8] = 2, 3, 5
    n_graphs, n_nodes = 2000, 40
    u = SampleStreams(0, torch.arange(n_graphs)).rand((n_graphs, n_nodes), dtype=torch.float64).numpy()
    plans = [block_plan(n_nodes, 8, "empirical", hist, u[i]) for i in range(n_graphs)]
    assert all(sum(p) == n_nodes for p in plans)
    body = np.array([s for p in plans for s in p[:4]])
    p = np.array([0.2, 0.3, 0.5])
    freq = np.array([(body == s).mean() for s in (3, 5, 8)])
    assert np.abs(freq - p).max() <= 4 * np.sqrt(p * (1 - p) / len(body)).max()
    # the same uniforms give the same plan (a plan depends on its graph's stream only)
    assert block_plan(n_nodes, 8, "empirical", hist, u[5]) == plans[5]


SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    from scigen.graphs.sbgd import SBGD

    if __name__ == "__main__":
        model = SBGD.load(sys.argv[1])
        graphs = model.sample(5, seed=5, devices=2)
        out = [(g.number_of_nodes(), sorted(map(sorted, g.edges()))) for g in graphs]
        with open(os.path.join(sys.argv[2], f"rank{int(os.environ.get('LOCAL_RANK', 0))}.json"), "w") as f:
            json.dump(out, f)
    """
)


# the graphs domain's 2-process sampling test in the default suite (the cheapest of G2PT, SBGD, AGDiff)
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
def test_two_processes_draw_the_graphs_of_one(trained, tmp_path, run_script):
    model, path = trained
    run_script(tmp_path / "run.py", path, tmp_path, cwd=tmp_path, text=SCRIPT)
    one = [[g.number_of_nodes(), sorted(map(sorted, g.edges()))] for g in model.sample(5, seed=5)]
    for r in (0, 1):
        assert json.loads((tmp_path / f"rank{r}.json").read_text()) == one
