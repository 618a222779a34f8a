"""Seeded generators of the synthetic graph families used by SPECTRE / DiGress / G2PT.

* planar: Delaunay triangulation of 64 uniform points in the unit square (Martinkus et al. 2022,
  SPECTRE §5);
* SBM: 2–5 blocks of 20–40 nodes each, ``p_in = 0.3``, ``p_out = 0.005`` (SPECTRE §5);
* tree: uniformly random labelled trees on 64 nodes (Prüfer sequences; Bergmeister et al. 2024);
* lobster: ``networkx.random_lobster(55, 0.7, 0.7)`` resampled until ``10 <= n <= 100``
  (GRAN / G2PT's on-the-fly lobster set);
* community: GraphRNN's community-small: two Erdős–Rényi(p=0.3) communities of equal size with
  inter-community edges with probability 0.05 (at least one) (You et al. 2018).

Every generator takes ``seed`` and returns a list of ``networkx.Graph`` with nodes ``0..n-1``; the
same seed gives the same graphs. :func:`spectre_split` makes the 128/32/40 train/val/test split.
"""

from __future__ import annotations

from collections.abc import Callable

import networkx as nx
import numpy as np
import torch

from scigen.core.errors import InvalidInputError, UnknownNameError


def _positive(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidInputError(f"{name}: expected a positive int, got {value!r}")
    return int(value)


def planar_graphs(n_graphs: int = 200, n_nodes: int = 64, *, seed: int = 0) -> list[nx.Graph]:
    """Delaunay triangulations of ``n_nodes`` uniform points in ``[0, 1]²`` (connected, planar)."""
    from scipy.spatial import Delaunay

    n_graphs, n_nodes = _positive("n_graphs", n_graphs), _positive("n_nodes", n_nodes)
    if n_nodes < 3:
        raise InvalidInputError(f"n_nodes: a Delaunay triangulation needs >= 3 points, got {n_nodes}")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_graphs):
        pts = rng.random((n_nodes, 2))
        tri = Delaunay(pts)
        g = nx.Graph()
        g.add_nodes_from(range(n_nodes))
        for a, b, c in tri.simplices:
            g.add_edges_from([(int(a), int(b)), (int(b), int(c)), (int(a), int(c))])
        out.append(g)
    return out


def sbm_graphs(n_graphs: int = 200, *, min_blocks: int = 2, max_blocks: int = 5, min_size: int = 20,
               max_size: int = 40, p_in: float = 0.3, p_out: float = 0.005, seed: int = 0) -> list[nx.Graph]:
    """Stochastic block model graphs (block count and sizes uniform in the given inclusive ranges).

    Node attribute ``"block"`` holds the planted block of every node.
    """
    n_graphs = _positive("n_graphs", n_graphs)
    if not (1 <= min_blocks <= max_blocks) or not (1 <= min_size <= max_size):
        raise InvalidInputError(f"block ranges must satisfy 1 <= min <= max, got blocks {min_blocks}..{max_blocks}, "
                                f"sizes {min_size}..{max_size}")
    if not (0 <= p_out <= 1 and 0 <= p_in <= 1):
        raise InvalidInputError(f"p_in, p_out: expected probabilities in [0, 1], got {p_in}, {p_out}")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_graphs):
        k = int(rng.integers(min_blocks, max_blocks + 1))
        sizes = [int(s) for s in rng.integers(min_size, max_size + 1, size=k)]
        probs = [[p_in if i == j else p_out for j in range(k)] for i in range(k)]
        out.append(_sbm_graph(sizes, probs, rng))
    return out


def _sbm_graph(sizes: list[int], probs: list[list[float]], rng: np.random.Generator) -> nx.Graph:
    """One stochastic block model graph as a plain ``nx.Graph`` with node attribute ``"block"``."""
    g = nx.stochastic_block_model(sizes, probs, seed=int(rng.integers(2**31)))
    h = nx.Graph()
    for v, d in g.nodes(data=True):
        h.add_node(v, block=int(d["block"]))
    h.add_edges_from(g.edges())
    return h


def sized_sbm_graphs(n_graphs: int = 200, *, min_nodes: int = 100, max_nodes: int = 200, community_size: int = 25,
                     p_in: float = 0.3, seed: int = 0) -> list[nx.Graph]:
    """Stochastic block model graphs of ``n`` nodes (uniform in ``[min_nodes, max_nodes]``) whatever their size:
    ``k = max(1, round(n / community_size))`` near-equal communities, ``p_in`` inside, and between communities
    ``p_out = min(1, 1 / max(n - community_size, 1))`` (about one edge from each node to the other
    communities), so the graphs grow by adding communities of the same make-up (SBGD's scaling benchmark:
    train small, generate large). Node attribute ``"block"`` holds each node's community.
    """
    n_graphs = _positive("n_graphs", n_graphs)
    if not 1 <= min_nodes <= max_nodes:
        raise InvalidInputError(f"min_nodes/max_nodes: expected 1 <= min <= max, got {min_nodes}, {max_nodes}")
    community_size = _positive("community_size", community_size)
    if not 0 <= p_in <= 1:
        raise InvalidInputError(f"p_in: expected a probability in [0, 1], got {p_in}")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_graphs):
        n = int(rng.integers(min_nodes, max_nodes + 1))
        k = max(1, round(n / community_size))
        sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
        p_out = min(1.0, 1.0 / max(n - community_size, 1))
        probs = [[p_in if i == j else p_out for j in range(k)] for i in range(k)]
        out.append(_sbm_graph(sizes, probs, rng))
    return out


def tree_graphs(n_graphs: int = 200, n_nodes: int = 64, *, seed: int = 0) -> list[nx.Graph]:
    """Uniform random labelled trees on ``n_nodes`` nodes (a uniform Prüfer sequence each)."""
    n_graphs, n_nodes = _positive("n_graphs", n_graphs), _positive("n_nodes", n_nodes)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_graphs):
        if n_nodes <= 2:
            g = nx.path_graph(n_nodes)
        else:
            g = nx.from_prufer_sequence([int(x) for x in rng.integers(0, n_nodes, size=n_nodes - 2)])
        out.append(nx.convert_node_labels_to_integers(g))
    return out


def lobster_graphs(n_graphs: int = 200, *, mean_backbone: int = 55, p1: float = 0.7, p2: float = 0.7,
                   min_nodes: int = 10, max_nodes: int = 100, seed: int = 0) -> list[nx.Graph]:
    """Random lobsters (``networkx.random_lobster``), resampled until ``min_nodes <= n <= max_nodes``."""
    n_graphs = _positive("n_graphs", n_graphs)
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n_graphs:
        make = getattr(nx, "random_lobster_graph", None) or nx.random_lobster
        g = make(mean_backbone, p1, p2, seed=int(rng.integers(2**31)))
        if min_nodes <= g.number_of_nodes() <= max_nodes:
            out.append(nx.convert_node_labels_to_integers(nx.Graph(g)))
    return out


def community_graphs(n_graphs: int = 200, *, min_nodes: int = 12, max_nodes: int = 20, p_in: float = 0.3,
                     p_inter: float = 0.05, seed: int = 0) -> list[nx.Graph]:
    """GraphRNN community-small: two ER(``p_in``) halves joined by ``p_inter`` edges (>= 1)."""
    n_graphs = _positive("n_graphs", n_graphs)
    if not 2 <= min_nodes <= max_nodes:
        raise InvalidInputError(f"min_nodes/max_nodes: expected 2 <= min <= max, got {min_nodes}, {max_nodes}")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_graphs):
        n = int(rng.integers(min_nodes, max_nodes + 1))
        half = n // 2
        sizes = [half, n - half]
        g = nx.Graph()
        offset = 0
        for c, s in enumerate(sizes):
            for i in range(s):
                g.add_node(offset + i, block=c)
            upper = np.triu(rng.random((s, s)) < p_in, 1)
            g.add_edges_from((offset + int(i), offset + int(j)) for i, j in zip(*np.nonzero(upper), strict=True))
            offset += s
        cross = rng.random((sizes[0], sizes[1])) < p_inter
        if not cross.any():
            cross[rng.integers(sizes[0]), rng.integers(sizes[1])] = True
        g.add_edges_from((int(i), sizes[0] + int(j)) for i, j in zip(*np.nonzero(cross), strict=True))
        out.append(g)
    return out


def erdos_renyi_like(reference: list[nx.Graph], n_graphs: int | None = None, *, seed: int = 0) -> list[nx.Graph]:
    """Erdős–Rényi baseline matched in size and density: for each sample, draw a reference graph,
    keep its node count ``n`` and use ``p = 2m / (n(n-1))`` of that graph."""
    if not reference:
        raise InvalidInputError("reference: the dataset is empty (expected at least one graph)")
    rng = np.random.default_rng(seed)
    n_graphs = len(reference) if n_graphs is None else _positive("n_graphs", n_graphs)
    out = []
    for _ in range(n_graphs):
        r = reference[int(rng.integers(len(reference)))]
        n, m = r.number_of_nodes(), r.number_of_edges()
        p = 2 * m / (n * (n - 1)) if n > 1 else 0.0
        out.append(nx.gnp_random_graph(n, p, seed=int(rng.integers(2**31))))
    return out


GENERATORS: dict[str, Callable[..., list[nx.Graph]]] = {
    "planar": planar_graphs,
    "sbm": sbm_graphs,
    "tree": tree_graphs,
    "lobster": lobster_graphs,
    "community": community_graphs,
}


def generate(name: str, n_graphs: int = 200, *, seed: int = 0, **options) -> list[nx.Graph]:
    """``generate("planar", 200, seed=0)``: one of :data:`GENERATORS` by name."""
    if name not in GENERATORS:
        raise UnknownNameError(f"unknown graph family {name!r}; valid: {', '.join(GENERATORS)}")
    return GENERATORS[name](n_graphs, seed=seed, **options)


def spectre_split(graphs: list, *, seed: int = 1234) -> tuple[list, list, list]:
    """SPECTRE's split of a dataset: test = 20 % (rounded), train = 80 % of the rest, val = the rest.

    For 200 graphs this is train 128 / val 32 / test 40. The order comes from
    ``torch.randperm(N, generator=torch.Generator().manual_seed(seed))``: the first ``n_test``
    indices are the test set, the next ``n_train`` the training set and the remainder validation
    (the SPECTRE/DiGress convention). Returns ``(train, val, test)``.
    """
    n = len(graphs)
    if n < 3:
        raise InvalidInputError(f"graphs: need at least 3 graphs to split, got {n}")
    n_test = int(round(n * 0.2))
    n_train = int(round((n - n_test) * 0.8))
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()
    test = [graphs[i] for i in perm[:n_test]]
    train = [graphs[i] for i in perm[n_test:n_test + n_train]]
    val = [graphs[i] for i in perm[n_test + n_train:]]
    return train, val, test
