"""AGDiff sampling keyed by sample index (issue 33.3): pseudo-anomaly ``i`` of ``sample(graphs, n_samples=n,
seed=s)`` draws its encoder, condition and chain noise from its own stream keyed by ``(s, i)``, so it is the same
drawn alone, among ``n`` (batches padded to their largest graph), or on either of two processes (``devices=2``).

Graphs are compared exactly (nodes, types, edges): the decoded latents are hardened (edges at 0.5 or the
source's top pairs, types by argmax), so only a value within float rounding (~1e-7) of a threshold could differ
between batch shapes; the padding of a batch enters a graph's computation as exact zeros."""

from __future__ import annotations

import json
import textwrap

import pytest
import torch

from scigen.graphs.agdiff import AGDiff
from scigen.graphs.agdiff.demo import split_normal
from scigen.graphs.agdiff.synthetic import synthetic_anomaly_graphs

QUIET = {"progress": False, "logger": None}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    train, test = split_normal(synthetic_anomaly_graphs(60, 45, seed=0), seed=0)
    model = AGDiff(AGDiff.Config.preset("tiny", stage_shares={"vgae": 0.5})).fit(train, max_steps=20, **QUIET)
    path = tmp_path_factory.mktemp("agdiff") / "model"
    model.save(path)
    return model, path, test


def _key(graphs):
    return [(g.number_of_nodes(), sorted(g.nodes(data="type")), sorted(map(sorted, g.edges()))) for g in graphs]


def test_the_first_k_of_n_pseudo_anomalies_are_the_k_pseudo_anomalies(trained):
    model, _, test = trained
    # sources by size: the batch of 8 pads every graph to the largest, the batch of the first 3 to a smaller size
    src = sorted(test[:8], key=lambda g: g.number_of_nodes())
    sizes = [g.number_of_nodes() for g in src]
    assert max(sizes[:3]) < max(sizes)
    big = model.sample(src, n_samples=8, seed=7)
    assert _key(model.sample(src[:3], n_samples=3, seed=7)) == _key(big)[:3]
    assert _key(model.sample(src[:3], n_samples=3, seed=8)) != _key(big)[:3]
    assert [g.number_of_nodes() for g in big] == sizes
    assert all(g.graph.get("anomaly") == 1 and g.graph.get("pseudo") for g in big)


SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    from scigen.graphs.agdiff import AGDiff

    if __name__ == "__main__":
        model = AGDiff.load(sys.argv[1])
        graphs = model.sample(n_samples=5, seed=5, devices=2)
        out = [(g.number_of_nodes(), sorted(g.nodes(data="type")), sorted(map(sorted, g.edges()))) for g in graphs]
        with open(os.path.join(sys.argv[2], f"rank{int(os.environ.get('LOCAL_RANK', 0))}.json"), "w") as f:
            json.dump(out, f)
    """
)


def test_sample_to_writes_the_pseudo_anomalies_of_sample(trained, tmp_path):
    """``sample_to`` (chunks of 2): pseudo-anomaly ``i`` of ``sample`` as padded node types, adjacency and size."""
    import networkx as nx
    import numpy as np

    from scigen.core.system.shard_writer import load_sharded_samples

    model, _, test = trained
    got = load_sharded_samples(model.sample_to(tmp_path / "p", 5, seed=3, chunk_size=2))
    graphs = model.sample(n_samples=5, seed=3)
    assert got["n_nodes"].tolist() == [g.number_of_nodes() for g in graphs]
    for a, k, g in zip(got["adjacency"], got["n_nodes"], graphs, strict=True):
        np.testing.assert_array_equal(a[:k, :k], nx.to_numpy_array(g, nodelist=sorted(g.nodes)) > 0)
        assert not a[k:].any()

@pytest.mark.slow  # the graphs domain's default-suite 2-process test is SBGD's
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
def test_two_processes_draw_the_pseudo_anomalies_of_one(trained, tmp_path, run_script):
    model, path, _ = trained
    run_script(tmp_path / "run.py", path, tmp_path, cwd=tmp_path, text=SCRIPT)
    one = json.loads(json.dumps(_key(model.sample(n_samples=5, seed=5))))  # tuples as JSON lists
    for r in (0, 1):
        assert json.loads((tmp_path / f"rank{r}.json").read_text()) == one
