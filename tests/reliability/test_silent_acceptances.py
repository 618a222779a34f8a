"""Inputs the code used to reinterpret or accept silently are refused with a message saying what to pass
(issue 35, case 8)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from scigen.core.errors import InvalidInputError


def _typed_path(value):
    g = nx.path_graph(4)
    nx.set_node_attributes(g, value, "type")
    return g


def test_float_node_types_are_refused_int_and_str_are_categories():
    from scigen.graphs.validate import edge_type, node_type

    for bad in (0.37, float("nan"), 1.0, [1]):
        with pytest.raises(InvalidInputError, match=r"node 0 attribute 'type' is .*types are categories"):
            node_type(_typed_path(bad), 0)
    assert node_type(_typed_path(3), 0) == "3" and node_type(_typed_path(np.int64(3)), 0) == "3"
    assert node_type(_typed_path("C"), 0) == "C" and node_type(nx.path_graph(2), 0) == "NODE"
    g = nx.path_graph(2)
    g.edges[0, 1]["type"] = 2.5
    with pytest.raises(InvalidInputError, match=r"edge \(0, 1\) attribute 'type' is float 2.5"):
        edge_type(g, 0, 1)


def test_agdiff_refuses_to_train_on_float_node_types():
    from scigen.graphs.agdiff import AGDiff

    graphs = [_typed_path(0.5 * i) for i in range(8)]
    model = AGDiff(AGDiff.Config.preset("tiny"))
    with pytest.raises(InvalidInputError, match="types are categories"):
        model.fit(graphs, max_steps=2, progress=False, logger=None)
    assert not model.is_trained


def test_g2pt_never_raises_max_nodes_silently():
    from scigen.graphs.g2pt import G2PT

    trees = [nx.random_labeled_tree(8, seed=i) for i in range(4)]
    model = G2PT(G2PT.Config.preset("tiny", max_nodes=3))
    with pytest.raises(InvalidInputError, match=r"max_nodes=3 but graph 0 has 8 nodes; raise max_nodes to at least 8"):
        model.fit(trees, max_steps=1, progress=False, logger=None)
    assert model.config.max_nodes == 3 and not model.is_trained


def test_inverse_flow_key_added_must_be_storable_in_h5ad(tmp_path):
    from scigen.singlecell.inverseflow import InverseFlow
    from scigen.singlecell.inverseflow.data import circle_toy

    toy = circle_toy(8, seed=0)
    model = InverseFlow(width=8, depth=1).fit(toy, max_steps=2, progress=False, logger=None)
    with pytest.raises(InvalidInputError, match=r"key_added='a/b' contains '/'.*'a_b'"):
        model.denoise(toy, key_added="a/b", copy=True)
    assert "a/b" not in toy.layers
    with pytest.raises(Exception, match="pattern"):
        InverseFlow(key_added="x/y")
