"""Node orbit counts of graphlets with up to 4 nodes (the 15 orbits of ORCA, Hočevar & Demšar 2014).

Orbit numbering (Pržulj 2007, as in ORCA's ``node 4`` output used by GraphRNN/GRAN/SPECTRE):

===== ==============================  =====================================
orbit graphlet                        node role (degree inside the graphlet)
===== ==============================  =====================================
0     edge                            either end (= the node degree)
1, 2  path on 3 nodes                 end (1), middle (2)
3     triangle                        any
4, 5  path on 4 nodes                 end (1), inner (2)
6, 7  star on 4 nodes (claw)          leaf (1), centre (3)
8     4-cycle                         any
9-11  paw (triangle with a tail)      tail end (1), triangle deg-2 (2), joint (3)
12,13 diamond (K4 minus an edge)      degree 2 (12), degree 3 (13)
14    K4                              any
===== ==============================  =====================================

Counts are over **induced** connected subgraphs.

Method (the idea behind ORCA, written out as sparse-matrix algebra): for every node ``v`` and every
orbit ``o`` we first count **non-induced** copies ``N_o(v)`` — edge subsets forming graphlet ``o``
with ``v`` in role ``o`` — by closed formulas in the adjacency matrix ``A``, the degrees ``d``, the
common-neighbour counts ``C = A²`` and triangles ``T = diag(A³)/2``:

* ``N1 = Σ_{u∼v}(d_u−1)``, ``N2 = C(d_v, 2)``, ``N3 = T_v``;
* ``N4 = (A²(d−1))_v − d_v(d_v−1) − 2T_v`` (paths v–u–w–x),
  ``N5 = Σ_{u∼v}[(d_v−1)(d_u−1) − C_vu]``;
* ``N6 = Σ_{u∼v} C(d_u−1, 2)``, ``N7 = C(d_v, 3)``, ``N8 = Σ_{w≠v} C(C_vw, 2)``;
* ``N9 = Σ_{u∼v}(T_u − C_vu)``, ``N10 = Σ_{u∼v} C_vu(d_u−2)``, ``N11 = T_v(d_v−2)``;
* ``N12 = ½ Σ_{u,w∼v, u∼w}(C_uw − 1)``, ``N13 = Σ_{u∼v} C(C_vu, 2)``, ``N14 = ⅓ Σ_{triangles t∋v}``
  (common neighbours of ``t``).

An induced graphlet ``o'`` at ``v`` contains ``M[o, o']`` non-induced copies of role ``o`` at ``v``,
so ``N = M·I``; ``M`` is computed at import by enumerating the edge subsets of each graphlet, is
unit upper-triangular (graphlets ordered by edge count), and ``I = M⁻¹N`` exactly in integers.
Cost: a few sparse products plus one boolean row-AND per edge and per triangle (dense ``n × n``
adjacency for ``N14``) — about a millisecond for a 64-node graph.
"""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import scipy.sparse as sp

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
# one graphlet per class, as an edge list on nodes 0..k-1
_GRAPHLETS = [
    [(0, 1), (1, 2)], [(0, 1), (1, 2), (0, 2)],
    [(0, 1), (1, 2), (2, 3)], [(0, 1), (0, 2), (0, 3)], [(0, 1), (1, 2), (2, 3), (3, 0)],
    [(0, 1), (1, 2), (0, 2), (2, 3)], [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)],
    [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)],
]


def _roles(edges: list[tuple[int, int]], k: int) -> list[int] | None:
    """Orbit of each node 0..k-1 in the spanning graph ``edges`` (``None`` if not connected)."""
    deg = [sum(v in e for e in edges) for v in range(k)]
    if not nx.is_connected(nx.Graph(edges)) or len({v for e in edges for v in e}) != k:
        return None
    table = _CLASSES.get(tuple(sorted(deg)))
    return None if table is None else [table[x] for x in deg]


def _containment() -> tuple[np.ndarray, np.ndarray]:
    """``M[o, o']`` (orbits 1..14) = non-induced copies of role ``o`` at a node of induced role ``o'``."""
    m = np.zeros((N_ORBITS, N_ORBITS), dtype=np.int64)
    m[0, 0] = 1
    for edges in _GRAPHLETS:
        k = 1 + max(v for e in edges for v in e)
        outer = _roles(edges, k)
        for r in range(k):
            column = np.zeros(N_ORBITS, dtype=np.int64)
            for size in range(k - 1, len(edges) + 1):
                for subset in itertools.combinations(edges, size):
                    roles = _roles(list(subset), k)
                    if roles is not None:
                        column[roles[r]] += 1
            m[:, outer[r]] = column  # same for every node of the same orbit
    inv = np.rint(np.linalg.inv(m.astype(np.float64))).astype(np.int64)
    if not (m @ inv == np.eye(N_ORBITS, dtype=np.int64)).all():  # pragma: no cover - a bug in the tables
        raise AssertionError("orbit containment matrix is not unimodular")
    return m, inv


_M, _M_INV = _containment()


def _adjacency(graph: nx.Graph) -> sp.csr_matrix:
    nodes = list(graph.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    pairs = np.array([(index[u], index[v]) for u, v in graph.edges if u != v], dtype=np.int64).reshape(-1, 2)
    n = len(nodes)
    rows = np.concatenate([pairs[:, 0], pairs[:, 1]])
    cols = np.concatenate([pairs[:, 1], pairs[:, 0]])
    a = sp.csr_matrix((np.ones(len(rows), dtype=np.int64), (rows, cols)), shape=(n, n))
    a.data[:] = 1  # collapse duplicates (multi-edges are not expected here, but never count twice)
    return a


def _k4_per_node(a: sp.csr_matrix, chunk: int = 2048) -> np.ndarray:
    """K4s through each node: ``(1/3)·Σ_{triangles t ∋ v} |common neighbours of t|`` (each K4 at ``v``
    holds three triangles through ``v``, each with the fourth node as a common neighbour)."""
    n = a.shape[0]
    out = np.zeros(n, dtype=np.int64)
    dense = a.toarray().astype(bool)
    upper = sp.triu(a, k=1).tocoo()
    eu, ew = upper.row, upper.col
    later = np.arange(n)[None, :]
    for s in range(0, len(eu), chunk):
        u, w = eu[s:s + chunk], ew[s:s + chunk]
        both = dense[u] & dense[w] & (later > w[:, None])    # triangles u < w < x
        i, x = np.nonzero(both)
        for t in range(0, len(i), chunk):
            tu, tw, tx = u[i[t:t + chunk]], w[i[t:t + chunk]], x[t:t + chunk]
            cn = (dense[tu] & dense[tw] & dense[tx]).sum(1)
            out += np.bincount(np.concatenate([tu, tw, tx]), weights=np.tile(cn, 3), minlength=n).astype(np.int64)
    return out // 3


def orbit_counts(graph: nx.Graph) -> np.ndarray:
    """``int64 [n, 15]``: row ``i`` counts, for the ``i``-th node of ``graph.nodes``, how many induced
    graphlets (2–4 nodes) touch it in each orbit (table and method in the module docstring).
    Self-loops are ignored."""
    n = graph.number_of_nodes()
    if n == 0:
        return np.zeros((0, N_ORBITS), dtype=np.int64)
    a = _adjacency(graph)
    d = np.asarray(a.sum(1)).ravel()
    c = (a @ a).tocsr()                      # common neighbours (diagonal = degree)
    c_edge = c.multiply(a).tocsr()           # C_vu on edges only
    tri = np.asarray(c_edge.sum(1)).ravel() // 2
    sum_c_edge = np.asarray(c_edge.sum(1)).ravel()  # = 2 T_v

    def over_nbrs(x: np.ndarray) -> np.ndarray:  # Σ_{u∼v} x_u
        return a @ x

    def choose2(x):
        return x * (x - 1) // 2

    nn_ = np.zeros((N_ORBITS, n), dtype=np.int64)
    nn_[0] = d
    nn_[1] = over_nbrs(d - 1)
    nn_[2] = choose2(d)
    nn_[3] = tri
    nn_[4] = a @ (a @ (d - 1)) - d * (d - 1) - 2 * tri
    nn_[5] = (d - 1) * over_nbrs(d - 1) - sum_c_edge
    nn_[6] = over_nbrs(choose2(d - 1))
    nn_[7] = d * (d - 1) * (d - 2) // 6
    off = c.copy()
    off.setdiag(0)
    off.eliminate_zeros()
    off.data = choose2(off.data)
    nn_[8] = np.asarray(off.sum(1)).ravel()
    nn_[9] = over_nbrs(tri) - sum_c_edge
    nn_[10] = c_edge @ (d - 2)
    nn_[11] = tri * (d - 2)
    m = c_edge - a                           # A ∘ (A² − 1)
    nn_[12] = np.asarray((a @ m).multiply(a).sum(1)).ravel() // 2
    ce = c_edge.copy()
    ce.data = choose2(ce.data)
    nn_[13] = np.asarray(ce.sum(1)).ravel()
    nn_[14] = _k4_per_node(a)
    return (_M_INV @ nn_).T.copy()


__all__ = ["N_ORBITS", "orbit_counts"]
