"""Block decomposition of a graph and its exact inverse (SBGD's block graphs ``C_i = G[V_i]``).

A :class:`Decomposition` holds the blocks (node lists), each block's induced subgraph, and the
edges between blocks grouped by block pair. :func:`reassemble` rebuilds the graph from those parts;
``reassemble(decompose(g, blocks))`` is ``g`` (same nodes, attributes and edges) for any partition.
Generated graphs use the same :func:`reassemble` with generated blocks and inter-block edges.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import networkx as nx

from scigen.core.errors import InvalidInputError


@dataclasses.dataclass
class Decomposition:
    """``blocks[i]``: the nodes of block ``i``; ``subgraphs[i] = G[blocks[i]]``; ``inter[(i, j)]``
    (``i < j``): the edges ``(u, v)`` with ``u`` in block ``i`` and ``v`` in block ``j``."""

    blocks: list[list]
    subgraphs: list[nx.Graph]
    inter: dict[tuple[int, int], list[tuple]]
    graph_attrs: dict = dataclasses.field(default_factory=dict)

    @property
    def n_nodes(self) -> int:
        return sum(len(b) for b in self.blocks)

    @property
    def sizes(self) -> list[int]:
        return [len(b) for b in self.blocks]


def check_cover(graph: nx.Graph, blocks: Sequence[Sequence]) -> None:
    """Raise ``InvalidInputError`` unless ``blocks`` covers every node of ``graph`` exactly once."""
    seen: dict = {}
    for i, blk in enumerate(blocks):
        if len(blk) == 0:
            raise InvalidInputError(f"blocks[{i}] is empty")
        for v in blk:
            if v in seen:
                raise InvalidInputError(f"node {v!r} is in blocks {seen[v]} and {i}")
            if v not in graph:
                raise InvalidInputError(f"blocks[{i}] names node {v!r}, which is not in the graph")
            seen[v] = i
    missing = [v for v in graph.nodes if v not in seen]
    if missing:
        raise InvalidInputError(f"{len(missing)} nodes are in no block (e.g. {missing[:5]})")


def decompose(graph: nx.Graph, blocks: Sequence[Sequence]) -> Decomposition:
    """Split ``graph`` along ``blocks`` (checked with :func:`check_cover`)."""
    check_cover(graph, blocks)
    which = {v: i for i, blk in enumerate(blocks) for v in blk}
    inter: dict[tuple[int, int], list[tuple]] = {}
    for u, v in graph.edges:
        i, j = which[u], which[v]
        if i == j:
            continue
        if i > j:
            i, j, u, v = j, i, v, u
        inter.setdefault((i, j), []).append((u, v, dict(graph.edges[u, v])))
    subgraphs = [graph.subgraph(blk).copy() for blk in blocks]
    return Decomposition([list(b) for b in blocks], subgraphs, inter, dict(graph.graph))


def reassemble(parts: Decomposition) -> nx.Graph:
    """The union of the block subgraphs plus the inter-block edges (with their attributes if the
    decomposition came from a graph); nodes in block order."""
    g = nx.Graph(**parts.graph_attrs)
    for blk, sub in zip(parts.blocks, parts.subgraphs, strict=True):
        for v in blk:
            g.add_node(v, **sub.nodes[v])
        g.add_edges_from(sub.edges(data=True))
    for (i, j), edges in parts.inter.items():
        bi, bj = set(parts.blocks[i]), set(parts.blocks[j])
        for u, v, *attrs in edges:
            if u not in bi or v not in bj:
                raise InvalidInputError(f"inter-block edge ({u!r}, {v!r}) is not between blocks {i} and {j}")
            g.add_edge(u, v, **(attrs[0] if attrs else {}))
    return g
