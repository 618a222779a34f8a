"""Node orbit counts of graphlets with up to 4 nodes (the 15 orbits of ORCA, Hočevar & Demšar 2014).

Orbit numbering (Pržulj 2007, as in ORCA's ``node 4`` output used by GraphRNN/GRAN/SPECTRE):

====  ==============================  =====================================
orbit graphlet                        node role (degree inside the graphlet)
====  ==============================  =====================================
0     edge                            either end (= the node degree)
1, 2  path on 3 nodes                 end (1), middle (2)
3     triangle                        any
4, 5  path on 4 nodes                 end (1), inner (2)
6, 7  star on 4 nodes (claw)          leaf (1), centre (3)
8     4-cycle                         any
9-11  paw (triangle with a tail)      tail end (1), triangle deg-2 (2), joint (3)
12,13 diamond (K4 minus an edge)      degree 2 (12), degree 3 (13)
14    K4                              any
====  ==============================  =====================================

Counts are over **induced** connected subgraphs. Enumeration is ESU (Wernicke 2006): every
connected induced subgraph of 3 and 4 nodes is visited exactly once and classified by its internal
degree sequence, which identifies the graphlet uniquely for ≤ 4 nodes.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

N_ORBITS = 15

# (sorted internal degrees) -> {internal degree: orbit}
_CLASSES = {
    (1, 1, 2): {1: 1, 2: 2},
    (2, 2, 2): {2: 3},
    (1, 1, 2, 2): {1: 4, 2: 5},
    (1, 1, 1, 3): {1: 6, 3: 7},
    (2, 2, 2, 2): {2: 8},
    (1, 2, 2, 3): {1: 9, 2: 10, 3: 11},
    (2, 2, 3, 3): {2: 12, 3: 13},
    (3, 3, 3, 3): {3: 14},
}


def orbit_counts(graph: nx.Graph) -> np.ndarray:
    """``int64 [n, 15]``: row ``i`` counts, for the ``i``-th node of ``graph.nodes``, how many induced
    graphlets (2–4 nodes) touch it in each orbit (table in the module docstring)."""
    nodes = list(graph.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    n = len(nodes)
    adj = [set() for _ in range(n)]
    for u, v in graph.edges:
        if u != v:
            adj[index[u]].add(index[v])
            adj[index[v]].add(index[u])
    counts = np.zeros((n, N_ORBITS), dtype=np.int64)
    counts[:, 0] = [len(a) for a in adj]

    def record(sub: tuple[int, ...]) -> None:
        deg = [sum(1 for w in sub if w in adj[u]) for u in sub]
        table = _CLASSES[tuple(sorted(deg))]
        for u, d in zip(sub, deg, strict=True):
            counts[u, table[d]] += 1

    def extend(sub: tuple[int, ...], ext: set[int], nbhd: set[int], root: int) -> None:
        # ESU: sub is connected, ext holds candidates > root adjacent to sub but not yet used
        ext = set(ext)
        while ext:
            w = ext.pop()
            new_sub = (*sub, w)
            record(new_sub) if len(new_sub) >= 3 else None
            if len(new_sub) == 4:
                continue
            excl = {u for u in adj[w] if u > root and u not in nbhd}
            extend(new_sub, ext | excl, nbhd | adj[w] | {w}, root)

    for v in range(n):
        extend((v,), {u for u in adj[v] if u > v}, adj[v] | {v}, v)
    return counts


__all__ = ["N_ORBITS", "orbit_counts"]
