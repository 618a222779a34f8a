"""Graphs larger than memory: the on-disk GraphStore round-trips graphs, trains G2PT, SBGD and AGDiff to the
weights the same graphs in memory give, and training from it keeps peak RSS flat as the store grows."""

import importlib.util
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.graphs.agdiff.system import AGDiff
from scigen.graphs.data import GraphStore, write_graph_store
from scigen.graphs.g2pt.system import G2PT
from scigen.graphs.sbgd.system import SBGD

_spec = importlib.util.spec_from_file_location("_rss", Path(__file__).parents[1] / "_rss.py")
_rss = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_rss)


def graphs(n, seed=0, *, anomaly=False, nodes=(4, 12), p=0.4, edges=None):
    """Random typed graphs: G(n, p) with ``nodes`` sizes, or G(n, m) of ``nodes[0]`` nodes and ``edges`` edges
    (every graph the same size, so the model's shapes do not depend on how many graphs there are)."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        s = int(rng.integers(1 << 30))
        g = nx.gnm_random_graph(nodes[0], edges, seed=s) if edges else nx.gnp_random_graph(int(rng.integers(*nodes)), p, seed=s)
        for v in g.nodes:
            g.nodes[v]["type"] = str(int(rng.integers(0, 3)))
        if anomaly:
            g.graph["anomaly"] = int(rng.random() < 0.2)
        yield g


def test_round_trip_and_views(tmp_path):
    ref = list(graphs(50, anomaly=True))
    ref[3].edges[next(iter(ref[3].edges))]["type"] = "double"
    st = GraphStore(write_graph_store(tmp_path / "g", iter(ref)))
    assert len(st) == 50 and st.label_names == ["anomaly"]
    for i in (0, 3, 49):
        assert nx.utils.graphs_equal(st[i], ref[i])
    assert nx.utils.graphs_equal(st[3], ref[3]) and st[3].edges[next(iter(st[3].edges))]["type"] == "double"
    y = np.array([g.graph["anomaly"] for g in ref])
    assert np.array_equal(st.labels("anomaly"), y)
    normal = st.subset(np.nonzero(y == 0)[0])
    assert len(normal) == int((y == 0).sum()) and nx.utils.graphs_equal(normal[1], [g for g in ref if not g.graph["anomaly"]][1])
    assert np.array_equal(st.n_nodes(), [g.number_of_nodes() for g in ref])


@pytest.mark.parametrize(("cls", "anomaly"), [(G2PT, False), (SBGD, False), (AGDiff, True)])
def test_fit_from_store_gives_the_in_memory_weights(tmp_path, cls, anomaly):
    path = write_graph_store(tmp_path / "g", graphs(60, anomaly=anomaly))
    cfg = cls.Config.preset("tiny")
    a = cls(cfg).fit(list(graphs(60, anomaly=anomaly)), max_steps=4, batch_size=8, progress=False)
    b = cls(cfg).fit(str(path), max_steps=4, batch_size=8, progress=False)
    sa, sb = a.network.state_dict(), b.network.state_dict()
    assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_bad_graphs_are_named_when_written(tmp_path):
    bad = [nx.Graph([(0, 1)]), nx.DiGraph([(0, 1)])]
    with pytest.raises(InvalidInputError, match=r"graphs\[1\]: expected an undirected graph"):
        write_graph_store(tmp_path / "a", bad)
    mixed = [nx.Graph([(0, 1)], anomaly=0), nx.Graph([(0, 1)])]
    with pytest.raises(InvalidInputError, match=r"graphs\[1\]: graph labels"):
        write_graph_store(tmp_path / "b", mixed)
    assert not any(tmp_path.iterdir())


def test_peak_rss_does_not_grow_with_the_store(tmp_path):
    """Peak RSS of 3 G2PT steps from a store of 600 and of 2,400 graphs (30 nodes, 45 edges each: the same
    sequence length, so the network does not change; 0.5 and 2.0 MB on disk, about 9 and 36 MB as networkx
    graphs); slack 6 MiB."""
    peaks = []
    for n in (600, 2400):
        path = write_graph_store(tmp_path / f"g{n}", graphs(n, nodes=(30, 30), edges=45))
        peaks.append(_rss.child_peak_rss(f"""
from scigen.graphs.g2pt.system import G2PT
G2PT(G2PT.Config.preset("tiny")).fit({str(path)!r}, max_steps=3, batch_size=4, progress=False)
""")[0])
    assert peaks[1] - peaks[0] < 6.0, peaks
