"""Validity of generated graphs per family, isomorphism-aware uniqueness / novelty and V.U.N.

Definitions follow SPECTRE/DiGress (``spectre_utils.py``):

* planar: connected and planar; tree: ``networkx.is_tree``; lobster: a tree that becomes a path
  after removing leaves twice;
* SBM (without graph-tool): blocks are recovered by Louvain modularity maximisation (networkx,
  fixed seed) instead of graph-tool's ``minimize_blockmodel_dl``; then SPECTRE's test: strict mode
  requires 2–5 blocks of 20–40 nodes; the Wald statistics
  ``W = (p̂ − p)² / (p̂(1 − p̂) + 1e−6)`` of every intra (p = 0.3) and inter (p = 0.005) block
  probability give p-values ``1 − χ²₁.cdf(W)`` whose mean must exceed 0.9.
* uniqueness: 1 − (#samples isomorphic to an earlier sample) / #samples;
* novelty: fraction of samples isomorphic to no training graph;
* V.U.N.: fraction of samples that are the first of their isomorphism class, novel and valid.

Isomorphism compares node and edge ``"type"`` attributes when present (molecular graphs); the
placeholder types of untyped graphs (``"NODE"`` / ``"EDGE"``, what G2PT and SBGD samples carry) count as
no type, so a sample of a generic family is compared with untyped training graphs by structure alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import networkx as nx
import numpy as np

from scigen.core.errors import InvalidInputError, UnknownNameError
from scigen.graphs.validate import DEFAULT_EDGE_TYPE, DEFAULT_NODE_TYPE


def is_planar_graph(g: nx.Graph) -> bool:
    return g.number_of_nodes() > 0 and nx.is_connected(g) and nx.check_planarity(g)[0]


def is_tree_graph(g: nx.Graph) -> bool:
    return g.number_of_nodes() > 0 and nx.is_tree(g)


def is_lobster_graph(g: nx.Graph) -> bool:
    if not is_tree_graph(g):
        return False
    h = g.copy()
    for _ in range(2):
        h.remove_nodes_from([v for v, d in h.degree() if d == 1])
    if h.number_of_nodes() <= 1:
        return True
    degrees = [d for _, d in h.degree()]
    return degrees.count(1) == 2 and degrees.count(2) == h.number_of_nodes() - 2


def sbm_blocks(g: nx.Graph, seed: int = 0) -> list[set]:
    """Recovered blocks (Louvain communities, ``resolution = 1``, fixed ``seed``)."""
    return [set(c) for c in nx.community.louvain_communities(g, seed=seed)]


def sbm_p_value(g: nx.Graph, *, p_intra: float = 0.3, p_inter: float = 0.005, strict: bool = True,
                seed: int = 0) -> float:
    """Mean Wald-test p-value of the block probabilities (0.0 when strict size checks fail)."""
    from scipy.stats import chi2

    if g.number_of_nodes() == 0 or g.number_of_edges() == 0:
        return 0.0
    blocks = sbm_blocks(g, seed)
    sizes = np.array([len(b) for b in blocks], dtype=np.float64)
    k = len(blocks)
    if strict and (k < 2 or k > 5 or (sizes < 20).any() or (sizes > 40).any()):
        return 0.0
    label = {v: i for i, b in enumerate(blocks) for v in b}
    e = np.zeros((k, k))
    for u, v in g.edges:
        a, b = label[u], label[v]
        e[a, b] += 1
        e[b, a] += 1  # intra edges are counted twice, as in graph-tool's e_rr
    est_intra = np.diag(e) / (sizes * (sizes - 1) + 1e-6)
    est_inter = e / (np.outer(sizes, sizes) + 1e-6)
    w = (est_inter - p_inter) ** 2 / (est_inter * (1 - est_inter) + 1e-6)
    np.fill_diagonal(w, (est_intra - p_intra) ** 2 / (est_intra * (1 - est_intra) + 1e-6))
    return float((1 - chi2.cdf(np.abs(w), 1)).mean())


def is_sbm_graph(g: nx.Graph, *, p_intra: float = 0.3, p_inter: float = 0.005, seed: int = 0) -> bool:
    return sbm_p_value(g, p_intra=p_intra, p_inter=p_inter, strict=True, seed=seed) > 0.9


VALIDITY: dict[str, Callable[[nx.Graph], bool]] = {
    "planar": is_planar_graph,
    "tree": is_tree_graph,
    "lobster": is_lobster_graph,
    "sbm": is_sbm_graph,
    "community": lambda g: g.number_of_nodes() > 0,
    "any": lambda g: g.number_of_nodes() > 0,
}


def validity_fn(family: str) -> Callable[[nx.Graph], bool]:
    if family not in VALIDITY:
        raise UnknownNameError(f"unknown graph family {family!r} for validity; valid: {', '.join(VALIDITY)}")
    return VALIDITY[family]


def _node_type(d: dict) -> str:
    return str(d.get("type", DEFAULT_NODE_TYPE))


def _edge_type(d: dict) -> str:
    return str(d.get("type", DEFAULT_EDGE_TYPE))


def _typed(g: nx.Graph) -> bool:
    """Whether any node or edge has a type other than the untyped placeholders ``"NODE"`` / ``"EDGE"``."""
    return (any(_node_type(d) != DEFAULT_NODE_TYPE for _, d in g.nodes(data=True))
            or any(_edge_type(d) != DEFAULT_EDGE_TYPE for *_, d in g.edges(data=True)))


def _iso(a: nx.Graph, b: nx.Graph) -> bool:
    if _typed(a) or _typed(b):
        return nx.is_isomorphic(a, b, node_match=lambda x, y: _node_type(x) == _node_type(y),
                                edge_match=lambda x, y: _edge_type(x) == _edge_type(y))
    return nx.is_isomorphic(a, b)


def _key(g: nx.Graph) -> str:
    import warnings

    attr = None
    if _typed(g):
        attr = "_t"
        h = nx.Graph()
        h.add_nodes_from((v, {attr: _node_type(d)}) for v, d in g.nodes(data=True))
        h.add_edges_from((u, v, {attr: _edge_type(d)}) for u, v, d in g.edges(data=True))
        g = h
    with warnings.catch_warnings():  # networkx 3.5 warns that untyped hashes changed; only equality matters here
        warnings.simplefilter("ignore", UserWarning)
        return nx.weisfeiler_lehman_graph_hash(g, node_attr=attr, edge_attr=attr, iterations=3)


class IsoIndex:
    """A set of graphs up to isomorphism (WL-hash buckets, exact check inside a bucket)."""

    def __init__(self, graphs: Sequence[nx.Graph] = ()):
        self._buckets: dict[str, list[nx.Graph]] = {}
        for g in graphs:
            self.add(g)

    def __contains__(self, g: nx.Graph) -> bool:
        return any(_iso(g, h) for h in self._buckets.get(_key(g), ()))

    def add(self, g: nx.Graph) -> None:
        self._buckets.setdefault(_key(g), []).append(g)


def uniqueness(gen: Sequence[nx.Graph]) -> float:
    if len(gen) == 0:
        raise InvalidInputError("gen: the set of generated graphs is empty")
    seen, dup = IsoIndex(), 0
    for g in gen:
        if g in seen:
            dup += 1
        else:
            seen.add(g)
    return 1.0 - dup / len(gen)


def novelty(gen: Sequence[nx.Graph], train: Sequence[nx.Graph]) -> float:
    if len(gen) == 0:
        raise InvalidInputError("gen: the set of generated graphs is empty")
    index = IsoIndex(train)
    return sum(g not in index for g in gen) / len(gen)


def vun(gen: Sequence[nx.Graph], train: Sequence[nx.Graph], family: str | Callable[[nx.Graph], bool]) -> dict[str, float]:
    """``{"validity", "uniqueness", "novelty", "VUN"}`` as fractions of ``len(gen)`` in [0, 1].

    validity, uniqueness and novelty are each over all samples (as the standalone functions);
    VUN counts samples that are valid, novel and the first of their isomorphism class.
    """
    if len(gen) == 0:
        raise InvalidInputError("gen: the set of generated graphs is empty")
    valid = validity_fn(family) if isinstance(family, str) else family
    train_index, seen = IsoIndex(train), IsoIndex()
    n_valid = n_unique = n_novel = n_vun = 0
    for g in gen:
        ok = bool(valid(g)) if g.number_of_nodes() else False
        novel = g not in train_index
        n_valid += ok
        n_novel += novel
        if g in seen:
            continue
        seen.add(g)
        n_unique += 1
        n_vun += ok and novel
    n = len(gen)
    return {"validity": n_valid / n, "uniqueness": n_unique / n, "novelty": n_novel / n, "VUN": n_vun / n}
