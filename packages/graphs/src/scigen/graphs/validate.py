"""Boundary checks for graphs: undirected, simple, non-empty networkx graphs with string types.

Every public function of the package that takes graphs calls :func:`check_graphs` first, so a user
who passes a directed graph, a multigraph, a self-loop or an empty list gets one clear error that
names the argument, the offending graph's index and what was expected.
"""

from __future__ import annotations

from collections.abc import Iterable

import networkx as nx

from scigen.core.errors import InvalidInputError

NODE_TYPE = "type"
EDGE_TYPE = "type"
DEFAULT_NODE_TYPE = "NODE"
DEFAULT_EDGE_TYPE = "EDGE"
#: the most graphs one ``sample`` call of a graph system returns (each is a networkx graph in memory)
MAX_GRAPHS_PER_CALL = 1_000_000


def check_graph_count(value: object, name: str = "n_samples") -> int:
    """A positive number of graphs to generate, at most :data:`MAX_GRAPHS_PER_CALL` (an absurd request is
    refused at once instead of running for hours)."""
    from scigen.core.validation import check_count

    return check_count(value, name, maximum=MAX_GRAPHS_PER_CALL,
                       why="generated graphs are returned as networkx graphs held in memory")


def check_graph(graph: object, what: str = "graph", *, allow_self_loops: bool = False) -> nx.Graph:
    """Return ``graph`` if it is an undirected simple ``networkx.Graph`` with at least one node.

    Raises :class:`~scigen.core.errors.InvalidInputError` (a ``ValueError``) naming ``what``.
    """
    if not isinstance(graph, nx.Graph):
        raise InvalidInputError(f"{what}: expected a networkx.Graph, got {type(graph).__name__}")
    if graph.is_directed():
        raise InvalidInputError(f"{what}: expected an undirected graph, got a directed {type(graph).__name__}; "
                                "convert with G.to_undirected() first")
    if graph.is_multigraph():
        raise InvalidInputError(f"{what}: expected a simple graph, got a {type(graph).__name__} (parallel edges); "
                                "convert with networkx.Graph(G) first")
    if graph.number_of_nodes() == 0:
        raise InvalidInputError(f"{what}: the graph has no nodes")
    if not allow_self_loops and nx.number_of_selfloops(graph) > 0:
        loops = list(nx.nodes_with_selfloops(graph))[:5]
        raise InvalidInputError(f"{what}: self-loops are not allowed (at nodes {loops})")
    return graph


def check_graphs(graphs: Iterable[object], what: str = "graphs") -> list[nx.Graph]:
    """Check every graph of ``graphs`` (see :func:`check_graph`) and report *all* bad ones at once."""
    if isinstance(graphs, nx.Graph):
        graphs = [graphs]
    if getattr(graphs, "checked_graphs", False):  # a GraphStore: every graph was checked when written
        return graphs
    try:
        items = list(graphs)
    except TypeError:
        raise InvalidInputError(f"{what}: expected a list of networkx graphs, got {type(graphs).__name__}") from None
    if not items:
        raise InvalidInputError(f"{what}: the dataset is empty (expected at least one graph)")
    problems = []
    for i, g in enumerate(items):
        try:
            check_graph(g, f"{what}[{i}]")
        except InvalidInputError as exc:
            problems.append(str(exc))
    if problems:
        shown = "\n  ".join(problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise InvalidInputError(f"{what}: {len(problems)} of {len(items)} graphs are invalid:\n  {shown}{more}")
    return items


def _category(value: object, what: str) -> str:
    """A node/edge type as its category name: a str, or an int (numpy ints too) written as a str. Anything
    else (a float such as 0.37 or NaN, a list) is refused: types are categories, one-hot encoded or tokenised,
    and a continuous value would silently become one category per distinct number."""
    if isinstance(value, str):
        return value
    if hasattr(value, "__index__") and not isinstance(value, bool):
        return str(int(value.__index__()))
    raise InvalidInputError(f"{what} is {type(value).__name__} {value!r}: types are categories; pass a str or an "
                            "int (e.g. str(label)); continuous features are not node types")


def node_type(graph: nx.Graph, node: object) -> str:
    """The type of ``node`` (attribute ``"type"``, a str or int category; ``"NODE"`` when untyped)."""
    value = graph.nodes[node].get(NODE_TYPE, DEFAULT_NODE_TYPE)
    return value if isinstance(value, str) else _category(value, f"node {node!r} attribute 'type'")


def edge_type(graph: nx.Graph, u: object, v: object) -> str:
    """The type of edge ``(u, v)`` (attribute ``"type"``, a str or int category; ``"EDGE"`` when untyped)."""
    value = graph.edges[u, v].get(EDGE_TYPE, DEFAULT_EDGE_TYPE)
    return value if isinstance(value, str) else _category(value, f"edge ({u!r}, {v!r}) attribute 'type'")
