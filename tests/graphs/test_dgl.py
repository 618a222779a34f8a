"""Optional DGL conversions (tox env ``dgl``)."""

from __future__ import annotations

import networkx as nx
import pytest

pytestmark = pytest.mark.dgl


def test_dgl_roundtrip():
    pytest.importorskip("dgl")
    from scigen.graphs.convert import from_dgl, to_dgl

    g = nx.Graph()
    g.add_nodes_from([(0, {"type": "C"}), (1, {"type": "O"}), (2, {"type": "C"})])
    g.add_edge(0, 1, type="DOUBLE")
    d = to_dgl(g)
    assert d.num_nodes() == 3 and d.num_edges() == 2
    back = from_dgl(d, ["C", "O"], ["DOUBLE"])
    m = lambda a, b: a.get("type") == b.get("type")  # noqa: E731
    assert nx.is_isomorphic(back, g, node_match=m, edge_match=m)
