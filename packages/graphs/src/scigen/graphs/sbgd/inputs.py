"""What SBGD accepts: the graphs the shared reader :func:`scigen.graphs.boundary.as_graphs` accepts (networkx,
PyG, a TUData, a path), simple and
undirected with at least one node (self-loops and multi-edges are refused by the shared checks),
with untyped edges (SBGD models edge presence only: a graph with edge types is refused instead of
silently losing them). Node types are modelled (one-hot); a trained model refuses unknown ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import networkx as nx

from scigen.core.errors import InvalidInputError
from scigen.graphs.validate import DEFAULT_EDGE_TYPE, edge_type, node_type


def as_sbgd_graphs(data: Any, what: str = "data") -> list[nx.Graph]:
    from scigen.graphs.boundary import as_graphs

    if isinstance(data, Sequence) and not isinstance(data, str) and data and all(isinstance(x, str) for x in data):
        raise InvalidInputError(f"{what}: SBGD models graphs, not SMILES strings (pass networkx or PyG graphs)")
    graphs = as_graphs(data, what)
    typed = [i for i, g in enumerate(graphs) if any(edge_type(g, u, v) != DEFAULT_EDGE_TYPE for u, v in g.edges)]
    if typed:
        raise InvalidInputError(f"{what}: SBGD models untyped edges; graphs {typed[:10]} have edge types "
                                "(drop the edge 'type' attribute to model edge presence only)")
    return graphs


def check_against(graphs: Sequence[nx.Graph], metadata: dict, *, full_graph: bool, what: str) -> None:
    """Refuse node types the trained model lacks (and, for the full-graph baseline, graphs wider than
    its training width: it was trained padded to that size)."""
    known = set(metadata["node_types"])
    bad = [f"{what}[{i}]: {sorted({node_type(g, v) for v in g.nodes} - known)}" for i, g in enumerate(graphs)
           if {node_type(g, v) for v in g.nodes} - known]
    if bad:
        raise InvalidInputError(f"{what}: node types the model was not trained on (known {sorted(known)}):\n  "
                                + "\n  ".join(bad[:10]))
    if full_graph:
        big = [f"{what}[{i}] has {g.number_of_nodes()} nodes" for i, g in enumerate(graphs)
               if g.number_of_nodes() > metadata["width"]]
        if big:
            raise InvalidInputError(f"the full-graph baseline was set up for graphs of <= {metadata['width']} nodes: "
                                    + "; ".join(big[:10]))
