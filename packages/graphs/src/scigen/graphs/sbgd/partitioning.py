"""Partition a graph's nodes into blocks of at most ``b`` nodes (SBGD's block graph space).

The paper splits the node set into groups ``V_1..V_k`` whose induced subgraphs ``C_i = G[V_i]`` are
the "block graphs"; how it partitions is not known (research note). Three partitioners, all ours:

* ``"metis"``: METIS k-way (Karypis & Kumar 1998, through ``pymetis``) with ``k = ceil(N / b)``;
  METIS handles disconnected graphs;
* ``"louvain"``: Louvain modularity communities (Blondel et al. 2008; networkx, fixed seed), the
  natural blocks of SBM-like graphs; each connected component is handled separately;
* ``"spectral"``: recursive bisection at the median of the Fiedler vector (Fiedler 1973) of each
  connected component (a disconnected part is first split into its components).

Any part larger than ``b`` is then bisected (spectrally) until every block has ``<= b`` nodes, so the
result always covers every node exactly once with block sizes in ``[1, b]``. Blocks are ordered by
their smallest node position and each lists nodes in the graph's node order.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np

from scigen.core.errors import InvalidInputError, UnknownNameError

PARTITIONERS = ("metis", "louvain", "spectral")


def _fiedler_halves(g: nx.Graph, nodes: list) -> tuple[list, list]:
    """Split ``nodes`` in two equal halves by the Fiedler vector of their induced subgraph; a
    disconnected subgraph is split by whole components (largest first) instead."""
    sub = g.subgraph(nodes)
    pos = {v: i for i, v in enumerate(nodes)}
    comps = sorted(nx.connected_components(sub), key=lambda c: (-len(c), min(pos[v] for v in c)))
    if len(comps) > 1:
        left: list = []
        for c in comps:  # greedily fill the first half with whole components
            if len(left) + len(c) <= len(nodes) / 2 or not left:
                left.extend(c)
        if len(left) < len(nodes):
            keep = set(left)
            return [v for v in nodes if v in keep], [v for v in nodes if v not in keep]
    order = list(nodes)
    if len(order) > 2 and sub.number_of_edges() > 0:
        lap = nx.laplacian_matrix(sub, nodelist=order).toarray().astype(np.float64)
        vals, vecs = np.linalg.eigh(lap)
        f = vecs[:, 1]
        rank = np.argsort(f, kind="stable")
        order = [order[i] for i in rank]
    half = len(order) // 2
    a, b = set(order[:half]), set(order[half:])
    return [v for v in nodes if v in a], [v for v in nodes if v in b]


def _bisect_until(g: nx.Graph, part: list, b: int) -> list[list]:
    if len(part) <= b:
        return [part]
    left, right = _fiedler_halves(g, part)
    return _bisect_until(g, left, b) + _bisect_until(g, right, b)


def _metis(g: nx.Graph, nodes: list, b: int, seed: int) -> list[list]:
    import pymetis

    k = math.ceil(len(nodes) / b)
    if k == 1:
        return [list(nodes)]
    index = {v: i for i, v in enumerate(nodes)}
    adjacency = [[index[u] for u in g.neighbors(v)] for v in nodes]
    opts = pymetis.Options(seed=seed)
    _, membership = pymetis.part_graph(k, adjacency=adjacency, options=opts)
    parts: dict[int, list] = {}
    for v, p in zip(nodes, membership, strict=True):
        parts.setdefault(int(p), []).append(v)
    return list(parts.values())


def _louvain(g: nx.Graph, nodes: list, seed: int) -> list[list]:
    pos = {v: i for i, v in enumerate(nodes)}
    out = []
    for comp in nx.connected_components(g):
        sub = g.subgraph(comp)
        comms = nx.community.louvain_communities(sub, seed=seed) if sub.number_of_edges() else [set(comp)]
        out.extend(sorted(c, key=pos.__getitem__) for c in comms)
    return out


def partition(graph: nx.Graph, block_size: int, method: str = "metis", *, seed: int = 0) -> list[list]:
    """Blocks (lists of nodes) covering every node of ``graph`` exactly once, each of ``<= block_size``
    nodes (module docstring). ``block_size >= graph size`` gives one block (the full graph)."""
    if method not in PARTITIONERS:
        raise UnknownNameError(f"unknown partition method {method!r}; valid: {', '.join(PARTITIONERS)}")
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise InvalidInputError(f"block_size: expected a positive int, got {block_size!r}")
    if graph.number_of_nodes() == 0:
        raise InvalidInputError("partition: the graph has no nodes")
    nodes = list(graph.nodes)
    b = int(block_size)
    if len(nodes) <= b:
        return [nodes]
    if method == "metis":
        parts = _metis(graph, nodes, b, seed)
    elif method == "louvain":
        parts = _louvain(graph, nodes, seed)
    else:
        pos0 = {v: i for i, v in enumerate(nodes)}
        parts = [sorted(c, key=pos0.__getitem__) for c in nx.connected_components(graph)]
    blocks = [blk for p in parts if p for blk in _bisect_until(graph, p, b)]
    pos = {v: i for i, v in enumerate(nodes)}
    blocks = [sorted(blk, key=pos.__getitem__) for blk in blocks]
    return sorted(blocks, key=lambda blk: pos[blk[0]])
