"""Hostile inputs to SBGD through the Python API and the CLI: self-loops, multi-edges, empty graphs,
edge types it cannot model, a block size larger than the graphs (documented: one block = the whole
graph), a requested size below one block, disconnected inputs (documented: every partitioner
handles them), unknown node types, bad sampler names — each a named scigen error or the
documented behaviour."""

from __future__ import annotations

import networkx as nx
import pytest

from scigen.core.errors import InvalidInputError
from scigen.graphs.data import sbm_graphs
from scigen.graphs.io import write_edgelist
from scigen.graphs.sbgd import SBGD

from .helpers import assert_one_line_error, cli

TINY = {"steps": 3, "train": {"batch_size": 4, "progress": False}}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("sbgd_runs")
    data = sbm_graphs(8, min_blocks=2, max_blocks=2, min_size=6, max_size=8, p_in=0.6, p_out=0.05, seed=0)
    model = SBGD(SBGD.Config.preset("tiny", **TINY)).fit(data, max_steps=2, logger=None)
    model.save(root / "run")
    return {"model": model, "run": root / "run", "root": root}


def test_graphs_sbgd_cannot_model_are_refused_by_name():
    multi = nx.MultiGraph([(0, 1), (0, 1)])
    loop = nx.Graph([(0, 1), (1, 1)])
    typed = nx.path_graph(4)
    nx.set_edge_attributes(typed, "DOUBLE", "type")
    for data, match in [([multi], r"data\[0\]: expected a simple graph"), ([loop], r"data\[0\]: self-loops"),
                        ([nx.Graph()], r"data\[0\]: the graph has no nodes"), ([], "empty"),
                        ([nx.path_graph(3), typed], r"untyped edges; graphs \[1\]"),
                        (["CCO"], "not SMILES")]:
        with pytest.raises(InvalidInputError, match=match):
            SBGD(SBGD.Config.preset("tiny", **TINY)).fit(data, max_steps=1)


def test_block_size_larger_than_the_graphs_and_disconnected_graphs_are_handled():
    tiny = [nx.path_graph(5), nx.disjoint_union(nx.complete_graph(4), nx.empty_graph(3))]  # 2nd: disconnected
    for part in ("metis", "louvain", "spectral"):
        model = SBGD(SBGD.Config.preset("tiny", partition=part, block_size=64, **TINY)).fit(tiny, max_steps=1,
                                                                                            logger=None)
        assert model.metadata["block_histogram"][5] == 1 and model.metadata["block_histogram"][7] == 1
        assert [g.number_of_nodes() for g in model.sample(2, seed=0, n_nodes=[5, 7])] == [5, 7]


def test_requests_below_one_block_unknown_types_and_bad_methods(run):
    model = run["model"]
    with pytest.raises(InvalidInputError, match="below one block"):
        model.sample(1, n_nodes=2)
    with pytest.raises(InvalidInputError, match="n_nodes"):
        model.sample(1, n_nodes=0)
    with pytest.raises(InvalidInputError, match="unknown sampler method"):
        model.sample(1, method="nope")
    with pytest.raises(InvalidInputError, match="output"):
        model.sample(1, output="dgl")
    typed = nx.path_graph(6)
    nx.set_node_attributes(typed, "C", "type")
    with pytest.raises(InvalidInputError, match=r"(?s)node types the model was not trained on .*\['C'\]"):
        model.evaluate([typed])
    with pytest.raises(ValueError, match="block_size"):
        SBGD(block_size=1)
    with pytest.raises(ValueError, match="partition"):
        SBGD(partition="kmeans")


def test_cli_errors_are_one_line(run, tmp_path):
    loop = tmp_path / "loop.txt"
    loop.write_text("0 1\n1 1\n")
    assert_one_line_error(cli("graphs", "sbgd", "train", "--data", str(loop), "--out", str(tmp_path / "r"),
                              "--preset", "tiny"), "loop.txt", "self-loop")
    assert_one_line_error(cli("graphs", "sbgd", "generate", "--run", str(run["run"]), "--out",
                              str(tmp_path / "g.txt"), "--n-nodes", "2"), "below one block")
    out = tmp_path / "g.txt"
    ok = cli("graphs", "sbgd", "generate", "--run", str(run["run"]), "--out", str(out), "--n-nodes", "30",
             "--n-samples", "2", "--steps", "2")
    assert ok.exit_code == 0, ok.output
    from scigen.graphs.io import read_graphs

    assert [g.number_of_nodes() for g in read_graphs(out)] == [30, 30]
    assert_one_line_error(cli("graphs", "sbgd", "generate", "--run", str(run["run"]), "--out", str(out),
                              "--n-nodes", "30"), "already exists")
    write_edgelist([nx.path_graph(4)], tmp_path / "typed_ok.txt")  # the package's own format reads back untyped
    assert_one_line_error(cli("graphs", "sbgd", "evaluate", "--run", str(run["run"]), "--data",
                              str(tmp_path / "missing.txt")), "missing.txt")
