"""Hostile inputs to AGDiff (API and CLI): TU folders with missing / inconsistent files, graphs without
the node features the model was trained on, one-class test sets, bad labels and requests — each a named
scigen error whose message names the file / line / field."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from scigen.core.errors import InvalidInputError, NotTrainedError
from scigen.graphs.agdiff import AGDiff, label_by_class, synthetic_anomaly_graphs
from scigen.graphs.agdiff.protocol import cross_validate
from scigen.graphs.data import TUFormatError

from .helpers import assert_one_line_error, cli

QUIET = {"progress": False, "logger": None}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("agdiff_runs")
    model = AGDiff(AGDiff.Config.preset("tiny")).fit(synthetic_anomaly_graphs(12, 0, seed=0), max_steps=2, **QUIET)
    model.save(root / "run")
    return {"model": model, "run": root / "run"}


def _tu(folder, *, indicator="1\n1\n2\n2\n", labels="0\n1\n", node_labels=None):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "DS_A.txt").write_text("1, 2\n2, 1\n3, 4\n4, 3\n")
    (folder / "DS_graph_indicator.txt").write_text(indicator)
    if labels is not None:
        (folder / "DS_graph_labels.txt").write_text(labels)
    if node_labels is not None:
        (folder / "DS_node_labels.txt").write_text(node_labels)
    return folder


def test_tu_folders_with_missing_or_inconsistent_files_name_file_and_line(tmp_path):
    from scigen.graphs.agdiff.graphs import as_graphs

    with pytest.raises(TUFormatError, match=r"DS_A\.txt:3: node id out of range 1\.\.3"):
        as_graphs(_tu(tmp_path / "a", indicator="1\n1\n2\n"))  # indicator count vs adjacency
    with pytest.raises(TUFormatError, match=r"DS_graph_labels\.txt: 3 lines, expected 2"):
        as_graphs(_tu(tmp_path / "b", labels="0\n1\n1\n"))  # labels of the wrong length
    with pytest.raises(TUFormatError, match=r"DS_node_labels\.txt: 3 lines, expected 4"):
        as_graphs(_tu(tmp_path / "c", node_labels="1\n1\n2\n"))
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "DS_A.txt").write_text("1, 2\n")
    with pytest.raises(TUFormatError, match=r"missing .*DS_graph_indicator\.txt"):
        as_graphs(tmp_path / "d")
    with pytest.raises(InvalidInputError, match="no such file or folder"):
        as_graphs(tmp_path / "nowhere")


def test_graphs_without_the_trained_node_features_are_refused(run):
    model = run["model"]
    with pytest.raises(InvalidInputError, match=r"(?s)not trained on.*data\[0\]: node types \['NODE'\]"):
        model.score([nx.cycle_graph(6)])
    g = nx.cycle_graph(6)
    nx.set_node_attributes(g, "Z", "type")
    with pytest.raises(InvalidInputError, match=r"node types \['Z'\]"):
        model.sample([g], n_samples=1)


def test_one_class_test_sets_and_bad_labels(run):
    model = run["model"]
    normal = synthetic_anomaly_graphs(10, 0, seed=1)
    with pytest.raises(InvalidInputError, match="holds only normal graphs"):
        model.evaluate(normal)
    unlabelled = [nx.Graph(g) for g in normal]
    for g in unlabelled:
        g.graph.pop("anomaly")
    with pytest.raises(InvalidInputError, match=r"carry no anomaly labels"):
        model.evaluate(unlabelled)
    mixed = normal[:3] + unlabelled[:2]
    with pytest.raises(InvalidInputError, match=r"data\[3\] has no G.graph\['anomaly'\]"):
        model.evaluate(mixed)
    normal[0].graph["anomaly"] = 2
    with pytest.raises(InvalidInputError, match=r"data\[0\].graph\['anomaly'\] must be 0 or 1, got 2"):
        model.evaluate(normal)
    with pytest.raises(InvalidInputError, match="has no class label"):
        label_by_class(unlabelled)
    labelled = [nx.Graph(g, label=1) for g in unlabelled]
    with pytest.raises(InvalidInputError, match=r"normal_class=0 is not a class of the data \(classes \[1\]\)"):
        label_by_class(labelled, normal_class=0)
    with pytest.raises(InvalidInputError, match="needs at least 5 graphs of each class"):
        cross_validate(synthetic_anomaly_graphs(20, 3, seed=0), {}, folds=5)


def test_bad_training_and_sampling_requests(run):
    with pytest.raises(NotTrainedError, match="untrained"):
        AGDiff(AGDiff.Config.preset("tiny")).score(synthetic_anomaly_graphs(4, 0))
    with pytest.raises(InvalidInputError, match="every graph is marked anomalous"):
        AGDiff(AGDiff.Config.preset("tiny")).fit([nx.Graph(g, anomaly=1) for g in synthetic_anomaly_graphs(4, 0)],
                                                 max_steps=2, **QUIET)
    with pytest.raises(InvalidInputError, match="max_steps must be >= 2"):
        AGDiff(AGDiff.Config.preset("tiny")).fit(synthetic_anomaly_graphs(4, 0), max_steps=1, **QUIET)
    with pytest.raises(InvalidInputError, match="n_samples"):
        run["model"].sample(n_samples=0)
    with pytest.raises(InvalidInputError, match="directed"):
        run["model"].score([nx.DiGraph([(0, 1)])])
    with pytest.raises(InvalidInputError, match="continuous node attributes are not supported"):
        import torch
        from torch_geometric.data import Data

        run["model"].score(Data(x=torch.rand(3, 2), edge_index=torch.tensor([[0, 1], [1, 0]])))
    with pytest.raises(InvalidInputError, match="scores for"):
        from scigen.graphs.agdiff.metrics import detection_scores

        detection_scores(np.array([0, 1]), np.array([0.1, 0.2, 0.3]))


def test_cli_bad_inputs_are_one_line_errors(tmp_path, run):
    bad = _tu(tmp_path / "DS", indicator="1\n1\n2\n")
    assert_one_line_error(cli("graphs", "agdiff", "score", "--run", str(run["run"]), "--data", str(bad),
                              "--out", str(tmp_path / "s.txt")), "DS_A.txt:3")
    good = _tu(tmp_path / "GOOD")
    assert_one_line_error(cli("graphs", "agdiff", "score", "--run", str(run["run"]), "--data", str(good),
                              "--out", str(tmp_path / "s.txt")), "node types", "not trained on")
    (tmp_path / "exists.txt").write_text("keep me\n")
    assert_one_line_error(cli("graphs", "agdiff", "score", "--run", str(run["run"]), "--data", str(good),
                              "--out", str(tmp_path / "exists.txt")), "already exists")
    assert (tmp_path / "exists.txt").read_text() == "keep me\n"
    assert_one_line_error(cli("graphs", "agdiff", "score", "--run", str(tmp_path / "norun"), "--data", str(good),
                              "--out", str(tmp_path / "s2.txt")), "norun")
    assert_one_line_error(cli("graphs", "agdiff", "evaluate", "--run", str(run["run"]), "--data", str(good)),
                          "node types")


def test_cli_score_writes_one_score_per_graph(tmp_path, run):
    from scigen.graphs.io import write_edgelist

    graphs = synthetic_anomaly_graphs(5, 2, seed=2)
    write_edgelist(graphs, tmp_path / "g.txt")
    res = cli("graphs", "agdiff", "score", "--run", str(run["run"]), "--data", str(tmp_path / "g.txt"),
              "--out", str(tmp_path / "s.txt"))
    assert res.exit_code == 0, res.output
    got = np.loadtxt(tmp_path / "s.txt")
    np.testing.assert_allclose(got, run["model"].score(graphs), rtol=1e-6)
