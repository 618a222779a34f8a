"""The TU-format reader against the format README, the published TUDataset statistics, PyG's own
``TUDataset`` on the same raw files, and a hand-made dataset whose graphs are known exactly."""

from __future__ import annotations

import zipfile
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.graphs.data import TUFormatError, load_tu, read_tu

TU = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "tu"
needs_tu = pytest.mark.skipif(not TU.is_dir(), reason="../shared/data/tu is absent")

# (graphs, classes, average nodes, average undirected edges): the statistics table of the TUDataset
# collection (Morris et al. 2020; chrsmrrs.github.io/datasets/docs/datasets/). Graph counts and class
# names also stand in the datasets' own READMEs and cards (ENZYMES: 600 enzymes, 6 EC classes; AIDS:
# classes a/i, 38 atom symbols, 3 valences; COX2: 365 labelled -1 and 102 labelled 1, ../shared/data/README).
PUBLISHED = {
    "AIDS": (2000, 2, 15.69, 16.20),
    "BZR": (405, 2, 35.75, 38.36),
    "COX2": (467, 2, 41.22, 43.45),
    "DHFR": (756, 2, 42.43, 44.54),
    "ENZYMES": (600, 6, 32.63, 62.14),
    "NCI1": (4110, 2, 29.87, 32.30),
}


@pytest.fixture(scope="module")
def tu_sets():
    if not TU.is_dir():
        pytest.skip("../shared/data/tu is absent")
    return {name: load_tu(name, root=TU) for name in PUBLISHED}


@needs_tu
@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_counts_match_the_published_statistics(tu_sets, name):
    d = tu_sets[name]
    n_graphs, n_classes, avg_nodes, avg_edges = PUBLISHED[name]
    assert len(d) == len(d.graphs) == n_graphs
    assert len(d.classes) == n_classes and sorted(set(d.y.tolist())) == list(range(n_classes))
    nodes = np.array([G.number_of_nodes() for G in d.graphs])
    edges = np.array([G.number_of_edges() for G in d.graphs])
    assert round(nodes.mean(), 2) == pytest.approx(avg_nodes, abs=0.006)
    assert round(edges.mean(), 2) == pytest.approx(avg_edges, abs=0.006)
    # the format README: DS_A.txt lists both directions of every undirected edge
    assert d.edges.shape[0] == 2 * edges.sum()
    for G in d.graphs[:50]:
        assert isinstance(G, nx.Graph) and not G.is_directed()
        assert sorted(G.nodes) == list(range(G.number_of_nodes()))
        assert G.graph["label"] == d.classes[G.graph["y"]]


@needs_tu
def test_readme_facts(tu_sets):
    cox2 = tu_sets["COX2"]
    assert cox2.classes.tolist() == [-1, 1] and np.bincount(cox2.y).tolist() == [365, 102]
    assert np.bincount(tu_sets["ENZYMES"].y).tolist() == [100] * 6  # 600 enzymes, 6 EC classes
    aids = tu_sets["AIDS"]
    assert aids.classes.tolist() == [0, 1]  # README: 0 = a(ctive), 1 = i(nactive)
    assert set(np.unique(aids.node_labels).tolist()) <= set(range(38))  # 38 symbols in the README map
    assert np.unique(aids.edge_labels).tolist() == [0, 1, 2]  # valences 1, 2, 3
    assert aids.node_attributes.shape[1] == 4  # [chem, charge, x, y]
    assert tu_sets["ENZYMES"].node_attributes.shape[1] == 18  # "18 node attributes" (card)
    assert tu_sets["NCI1"].node_attributes is None and tu_sets["NCI1"].edge_labels is None
    # node and edge labels on the networkx graphs
    G = aids.graphs[0]
    v = next(iter(G.nodes))
    assert G.nodes[v]["label"] == int(aids.node_labels[0, 0]) and G.nodes[v]["type"] == str(G.nodes[v]["label"])
    assert len(G.nodes[v]["attributes"]) == 4
    assert all(e["label"] in (0, 1, 2) for _, _, e in G.edges(data=True))


def _pyg_reference(tmp_path: Path, name: str, **kw):
    from torch_geometric.datasets import TUDataset

    raw = tmp_path / name / "raw"
    raw.mkdir(parents=True)
    for f in (TU / name).glob(f"{name}_*.txt"):
        (raw / f.name).symlink_to(f.resolve())
    return TUDataset(str(tmp_path), name, **kw)  # raw files present: PyG does not download


def _same(ours, ref):
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref, strict=True):
        assert torch.equal(a.edge_index, b.edge_index)
        assert torch.equal(a.y, b.y)
        assert a.num_nodes == b.num_nodes
        for key in ("x", "edge_attr"):
            va, vb = getattr(a, key, None), getattr(b, key, None)
            assert (va is None) == (vb is None), key
            if va is not None:
                assert va.shape == vb.shape and torch.allclose(va, vb.to(va.dtype)), key


@needs_tu
@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_to_pyg_equals_pyg_tudataset(tu_sets, tmp_path, name):
    _same(tu_sets[name].to_pyg(), _pyg_reference(tmp_path, name))


@needs_tu
@pytest.mark.parametrize("name", ["AIDS", "ENZYMES"])
def test_to_pyg_with_attributes_equals_pyg(tu_sets, tmp_path, name):
    ref = _pyg_reference(tmp_path, name, use_node_attr=True, use_edge_attr=True)
    _same(tu_sets[name].to_pyg(use_node_attr=True, use_edge_attr=True), ref)


@needs_tu
def test_load_through_the_catalog_cache(tmp_path, monkeypatch, tu_sets):
    from scigen.datasets import DataNotAvailableError

    monkeypatch.setenv("SCIGEN_DATA", str(tmp_path))
    monkeypatch.delenv("SCIGEN_OFFLINE", raising=False)
    with pytest.raises(DataNotAvailableError) as ei:
        load_tu("COX2")
    msg = str(ei.value)
    assert "scigen data fetch COX2" in msg and "COX2.zip" in msg and str(tmp_path / "COX2") in msg
    (tmp_path / "COX2").mkdir()
    with zipfile.ZipFile(tmp_path / "COX2" / "COX2.zip", "w") as zf:  # the layout of the published zip
        for f in sorted((TU / "COX2").glob("COX2_*.txt")):
            zf.write(f, f"COX2/{f.name}")
    d = load_tu("cox2")  # card names are case-insensitive; the hand-placed zip is extracted on first use
    assert d.name == "COX2" and len(d) == 467 and np.array_equal(d.y, tu_sets["COX2"].y)


# ------------------------------------------------------------------ a tiny dataset known exactly

def _write(folder: Path, **files: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for part, text in files.items():
        (folder / f"T_{part}.txt").write_text(text)
    return folder


TINY = {  # graph 1: a triangle 1-2-3 with a self-loop on 1; graph 2: the edge 4-5
    "A": "1, 2\n2, 1\n2, 3\n3, 2\n1, 3\n3, 1\n1, 1\n4, 5\n5, 4\n",
    "graph_indicator": "1\n1\n1\n2\n2\n",
    "graph_labels": "7\n-2\n",
    "node_labels": "3\n4\n3\n5\n3\n",
    "edge_labels": "0\n0\n1\n1\n0\n0\n2\n1\n1\n",
    "node_attributes": "0.5, 1\n1.5, 2\n2.5, 3\n3.5, 4\n4.5, 5\n",
}


def test_tiny_dataset_graphs_are_exact(tmp_path):
    d = read_tu(_write(tmp_path / "T", **TINY), "T")
    g1, g2 = d.graphs
    assert set(map(frozenset, g1.edges)) == {frozenset(e) for e in [(0, 1), (1, 2), (0, 2)]}  # self-loop dropped
    assert list(g2.edges) == [(0, 1)]
    assert [g1.nodes[v]["label"] for v in g1] == [3, 4, 3] and g2.nodes[0]["attributes"] == [3.5, 4.0]
    assert g1.edges[1, 2]["label"] == 1 and g2.edges[0, 1]["type"] == "1"
    assert (g1.graph["label"], g1.graph["y"], g2.graph["label"], g2.graph["y"]) == (7, 1, -2, 0)
    p1, p2 = d.to_pyg()
    # one-hot of labels shifted by their minimum (3): widths 5 - 3 + 1 = 3
    assert p1.x.tolist() == [[1, 0, 0], [0, 1, 0], [1, 0, 0]] and p2.x.tolist() == [[0, 0, 1], [1, 0, 0]]
    assert p1.edge_index.tolist() == [[0, 0, 1, 1, 2, 2], [1, 2, 0, 2, 0, 1]]
    assert p1.edge_attr.argmax(1).tolist() == [0, 0, 0, 1, 0, 1] and p1.edge_attr.shape == (6, 3)
    assert p1.y.tolist() == [1] and p2.y.tolist() == [0]
    p1a, _ = d.to_pyg(use_node_attr=True)
    assert p1a.x[:, :2].tolist() == [[0.5, 1.0], [1.5, 2.0], [2.5, 3.0]]


def test_tiny_dataset_equals_pyg(tmp_path):
    from torch_geometric.datasets import TUDataset

    _write(tmp_path / "T" / "raw", **TINY)
    ref = TUDataset(str(tmp_path), "T", use_node_attr=True, use_edge_attr=True)
    _same(read_tu(tmp_path / "T" / "raw", "T").to_pyg(use_node_attr=True, use_edge_attr=True), ref)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"A": "1, 2\n2, x\n"}, r"T_A\.txt:2: expected 2 comma-separated integers, got '2, x'"),
        ({"A": "1, 2\n2, 1, 3\n"}, r"T_A\.txt:2: expected 2 comma-separated integers"),
        ({"A": "1, 2\n\n2, 1\n"}, r"T_A\.txt:2: expected 2 comma-separated integers, got ''"),
        ({"A": "1, 2\n2, 9\n"}, r"T_A\.txt:2: node id out of range 1\.\.5"),
        ({"A": "1, 2\n3, 4\n"}, r"T_A\.txt:2: edge joins node 3 of graph 1 to node 4 of graph 2"),
        ({"A": ""}, r"T_A\.txt: the file is empty"),
        ({"graph_indicator": "1\n2\n1\n2\n2\n"}, r"T_graph_indicator\.txt:3: graph ids must start at 1 and never"),
        ({"graph_indicator": "1\n1\n1\n3\n3\n"}, r"T_graph_indicator\.txt:4: graph id jumps from 1 to 3"),
        ({"node_labels": "3\n4\n3\n"}, r"T_node_labels\.txt: 3 lines, expected 5 \(one per node of T_graph_"),
        ({"graph_labels": "7\n"}, r"T_graph_labels\.txt: 1 lines, expected 2 \(one per graph id"),
        ({"node_attributes": "0.5, 1\n1.5, nan\n2, 3\n3, 4\n4, 5\n"}, r"T_node_attributes\.txt:2: expected 2"),
        ({"edge_labels": "0\n1\n1\n1\n0\n0\n2\n1\n1\n"}, r"T_A\.txt:2: edge 2, 1 has labels/attributes .* line 1"),
    ],
)
def test_malformed_files_are_named_with_their_line(tmp_path, change, expected):
    files = dict(TINY, **change)
    with pytest.raises(TUFormatError, match=expected):
        read_tu(_write(tmp_path / "T", **files), "T")


def test_missing_files_and_bad_arguments_are_named(tmp_path):
    _write(tmp_path / "T", graph_indicator="1\n")
    with pytest.raises(TUFormatError, match=r"missing .*T_A\.txt \(required by the TU format\)"):
        read_tu(tmp_path / "T", "T")
    with pytest.raises(TUFormatError, match="is not a directory"):
        load_tu("T", root=tmp_path / "nowhere")
    with pytest.raises(InvalidInputError, match="name"):
        load_tu("")
    (tmp_path / "U").mkdir()
    (tmp_path / "U" / "U_A.txt").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "U" / "U_graph_indicator.txt").write_text("1\n")
    with pytest.raises(TUFormatError, match=r"U_A\.txt: not a text file"):
        load_tu("U", root=tmp_path)
