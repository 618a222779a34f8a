"""Generators (family properties, seeding, SPECTRE split), conversions nx <-> PyG <-> RDKit, GraphML /
edge-list I/O, and bad inputs."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.graphs.convert import from_pyg, graph_to_smiles, smiles_to_graphs, to_pyg
from scigen.graphs.data import (
    community_graphs,
    generate,
    lobster_graphs,
    planar_graphs,
    read_smiles,
    sbm_graphs,
    spectre_split,
    tree_graphs,
)
from scigen.graphs.io import read_edgelist, read_graphml, read_graphs, write_edgelist, write_graphml

MATCH = dict(node_match=lambda a, b: a.get("type") == b.get("type"), edge_match=lambda a, b: a.get("type") == b.get("type"))


def test_planar_is_delaunay_triangulation():
    for g in planar_graphs(5, 64, seed=1):
        assert g.number_of_nodes() == 64 and nx.is_connected(g) and nx.check_planarity(g)[0]
        # a triangulation of n points with h hull points has 3n - 3 - h edges, h >= 3
        assert 2 * 64 - 3 <= g.number_of_edges() <= 3 * 64 - 6


def test_sbm_blocks_and_densities():
    gs = sbm_graphs(30, seed=2)
    intra, inter, pairs_in, pairs_out = 0, 0, 0, 0
    for g in gs:
        blocks = nx.get_node_attributes(g, "block")
        sizes = np.bincount(list(blocks.values()))
        assert 2 <= len(sizes) <= 5 and sizes.min() >= 20 and sizes.max() <= 40
        for u, v in g.edges:
            intra += blocks[u] == blocks[v]
            inter += blocks[u] != blocks[v]
        pairs_in += int((sizes * (sizes - 1) // 2).sum())
        pairs_out += int((sizes.sum() ** 2 - (sizes**2).sum()) // 2)
    assert intra / pairs_in == pytest.approx(0.3, abs=0.02)
    assert inter / pairs_out == pytest.approx(0.005, abs=0.002)


def test_tree_lobster_community_and_seeding():
    assert all(nx.is_tree(g) and g.number_of_nodes() == 64 for g in tree_graphs(5, seed=0))
    lob = lobster_graphs(5, seed=0)
    assert all(nx.is_tree(g) and 10 <= g.number_of_nodes() <= 100 for g in lob)
    com = community_graphs(5, seed=0)
    assert all(12 <= g.number_of_nodes() <= 20 for g in com)
    a, b = generate("planar", 3, seed=7), generate("planar", 3, seed=7)
    assert all(nx.utils.graphs_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not nx.utils.graphs_equal(a[0], generate("planar", 1, seed=8)[0])


def test_spectre_split_sizes_and_disjoint():
    tr, va, te = spectre_split(list(range(200)))
    assert (len(tr), len(va), len(te)) == (128, 32, 40)
    assert sorted(tr + va + te) == list(range(200))


def test_pyg_roundtrip_typed_and_isolated():
    g = nx.Graph()
    g.add_node(0, type="C")
    g.add_node(1, type="N")
    g.add_node(2, type="C")  # isolated
    g.add_edge(0, 1, type="DOUBLE")
    d = to_pyg(g)
    assert d.num_nodes == 3 and d.edge_index.shape == (2, 2)
    assert nx.is_isomorphic(from_pyg(d), g, **MATCH)
    d.edge_index = torch.tensor([[0], [1]])
    with pytest.raises(InvalidInputError, match="not symmetric"):
        from_pyg(d)
    with pytest.raises(InvalidInputError, match="unknown node types"):
        to_pyg(g, node_types=["C"])


def test_rdkit_roundtrip_and_bad_smiles():
    from rdkit import Chem

    smi = ["c1ccc2[nH]ccc2c1", "CC(=O)[O-].[NH4+]", "O=C(O)c1ccncc1Cl", "C#N"]
    for s, g in zip(smi, smiles_to_graphs(smi), strict=True):
        assert graph_to_smiles(g) == Chem.MolToSmiles(Chem.MolFromSmiles(s))
    with pytest.raises(InvalidInputError, match=r"line 2.*\n.*line 4"):
        smiles_to_graphs(["CCO", "C1CC", "CCN", "XYZ"])


def test_read_smiles_reports_every_bad_line(tmp_path):
    p = tmp_path / "m.smi"
    p.write_text("SMILES\nCCO\nC1CC\n\nCCN\nC(\n")
    with pytest.raises(InvalidInputError, match=r"2 invalid SMILES:\n  line 3: 'C1CC'\n  line 6"):
        read_smiles(p)
    p.write_text("CCO\nc1ccccc1\n")
    assert read_smiles(p) == ["CCO", "c1ccccc1"]


def test_graphml_and_edgelist_roundtrip(tmp_path):
    g = nx.Graph()
    g.add_nodes_from([(0, {"type": "A"}), (1, {"type": "B"}), (2, {"type": "A"}), (3, {"type": "B"})])
    g.add_edges_from([(0, 1, {"type": "x"}), (1, 2, {"type": "y"})])  # node 3 isolated
    write_graphml(g, tmp_path / "g.graphml")
    assert nx.is_isomorphic(read_graphml(tmp_path / "g.graphml")[0], g, **MATCH)
    graphs = [g, nx.path_graph(5)]
    write_edgelist(graphs, tmp_path / "g.txt")
    back = read_graphs(tmp_path / "g.txt")
    assert len(back) == 2 and back[0].number_of_nodes() == 4
    assert nx.is_isomorphic(back[0], g, **MATCH) and nx.is_isomorphic(back[1], nx.path_graph(5))
    (tmp_path / "plain.txt").write_text("0 1\n1 2\n")
    assert nx.is_isomorphic(read_edgelist(tmp_path / "plain.txt")[0], nx.path_graph(3))
    (tmp_path / "bad.txt").write_text("0 1\nfoo\n2 2\n")
    with pytest.raises(InvalidInputError, match=r"line 2.*\n.*line 3"):
        read_edgelist(tmp_path / "bad.txt")


def test_bad_graphs_rejected():
    from scigen.graphs.validate import check_graphs

    with pytest.raises(InvalidInputError, match="empty"):
        check_graphs([])
    with pytest.raises(InvalidInputError, match=r"graphs\[1\].*directed.*\n.*graphs\[2\].*parallel"):
        check_graphs([nx.path_graph(3), nx.DiGraph([(0, 1)]), nx.MultiGraph([(0, 1)])])


def test_sized_sbm_graphs_grow_by_communities_of_the_same_make_up():
    """n = 100, communities of 25: k = 4 blocks of 25, density p_in = 0.3 inside, p_out = 1/75 between, so a
    node has on average 75 · (1/75) = 1 neighbour outside its block (expectations over 40 graphs)."""
    from scigen.graphs.data import sized_sbm_graphs

    graphs = sized_sbm_graphs(40, min_nodes=100, max_nodes=100, community_size=25, seed=3)
    inside, pairs, cross = 0, 0, 0
    for g in graphs:
        blocks = [g.nodes[v]["block"] for v in g.nodes]
        assert g.number_of_nodes() == 100 and sorted(set(blocks)) == [0, 1, 2, 3]
        assert all(blocks.count(b) == 25 for b in range(4))
        same = sum(1 for u, v in g.edges if g.nodes[u]["block"] == g.nodes[v]["block"])
        inside += same
        cross += g.number_of_edges() - same
        pairs += 4 * 25 * 24 // 2
    assert abs(inside / pairs - 0.3) < 0.01  # sd of the pooled density ~ 0.0024
    assert abs(2 * cross / (40 * 100) - 1.0) < 0.1  # mean outside-degree; sd ~ 0.016
    again = sized_sbm_graphs(40, min_nodes=100, max_nodes=100, community_size=25, seed=3)
    assert [sorted(g.edges) for g in again] == [sorted(g.edges) for g in graphs]
    sizes = [g.number_of_nodes() for g in sized_sbm_graphs(30, min_nodes=20, max_nodes=60, seed=0)]
    assert min(sizes) >= 20 and max(sizes) <= 60 and len(set(sizes)) > 5
