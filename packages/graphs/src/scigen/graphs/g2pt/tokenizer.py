"""G2PT's graph ↔ token-sequence map (Chen et al., ICML 2025, §3.1 and Alg. 1/5).

A graph with ``n`` nodes and ``m`` edges becomes (the released code's separator format)::

    <boc> NODE_t0 IDX_0 <sepc> NODE_t1 IDX_1 ... <eoc> <bog> IDX_a IDX_b EDGE_t <sepg> ... <eog>

after a uniformly random node permutation (the augmentation): node ``i`` of the permuted graph is
``IDX_i``, so the node block carries the node types in the new order. Length ``3n + 1`` for nodes
and ``4m + 1`` for edges (``2`` when ``m = 0``). Isolated nodes are listed in the node block and so
survive decoding (the released decoder builds graphs from the edge list and drops them).

Edge orderings (:func:`edge_order`):

* ``"deg"`` — Alg. 1, degree-based edge removal: repeatedly take a node of minimum current degree
  among nodes with degree > 0 (ties uniformly at random), remove its edge to a neighbour of
  minimum current degree (ties at random), record ``(source, neighbour)``; finally reverse the list
  (so the dense core comes first and the periphery last).
* ``"bfs"`` — Alg. 5: BFS from ``IDX_0`` (then from the lowest unvisited node of each further
  component) visiting neighbours in index order; a tree edge ``(u, v)`` is emitted when ``v`` is
  discovered, any other edge the first time it is seen.
* ``"uniform"`` — the ablation: a uniformly random order and orientation.

Node identifiers (``node_ids`` of :func:`encode`):

* ``"random"`` (the paper's) — ``IDX_i`` is node ``i`` of the random permutation, so an edge's
  endpoints are arbitrary labels the model must look up in the context.
* ``"first_seen"`` (ours, a switch) — after the ordering is drawn, nodes are renumbered by their
  first appearance in the edge sequence (isolated nodes last, in their random order). The
  permutation still randomises the ordering's tie breaks, but labels become canonical: in the
  ``"deg"`` order of a tree every edge after the first is ``(k + 1, j ≤ k)`` — a new leaf joined to
  a node already placed — so the next new label is a counter rather than an arbitrary choice. This
  is the relabelling of sequence models such as GraphRNN (BFS order) applied to G2PT's edge list.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

import networkx as nx
import numpy as np
import torch

from scigen.core.errors import InvalidInputError
from scigen.graphs.validate import check_graphs, edge_type, node_type

SPECIALS = ("<pad>", "<boc>", "<eoc>", "<sepc>", "<bog>", "<eog>", "<sepg>")
ORDERINGS = ("deg", "bfs", "uniform")
NODE_IDS = ("random", "first_seen")


@dataclass
class Vocab:
    """Token ids: specials, then ``IDX_0..IDX_{max_nodes-1}``, node types, edge types."""

    max_nodes: int
    node_types: list[str]
    edge_types: list[str]
    tokens: list[str] = field(init=False)

    def __post_init__(self) -> None:
        if self.max_nodes < 1:
            raise InvalidInputError(f"max_nodes: expected >= 1, got {self.max_nodes}")
        if not self.node_types or not self.edge_types:
            raise InvalidInputError("node_types and edge_types must be non-empty lists")
        self.tokens = (list(SPECIALS) + [f"IDX_{i}" for i in range(self.max_nodes)]
                       + [f"NODE_{t}" for t in self.node_types] + [f"EDGE_{t}" for t in self.edge_types])
        self.ids = {t: i for i, t in enumerate(self.tokens)}
        self.idx0 = len(SPECIALS)
        self.node0 = self.idx0 + self.max_nodes
        self.edge0 = self.node0 + len(self.node_types)
        for name in SPECIALS:
            setattr(self, name.strip("<>"), self.ids[name])

    def __len__(self) -> int:
        return len(self.tokens)

    def to_dict(self) -> dict:
        return {"max_nodes": self.max_nodes, "node_types": list(self.node_types), "edge_types": list(self.edge_types)}

    @classmethod
    def from_dict(cls, d: dict) -> Vocab:
        return cls(int(d["max_nodes"]), list(d["node_types"]), list(d["edge_types"]))

    @classmethod
    def from_graphs(cls, graphs: Sequence[nx.Graph], max_nodes: int | None = None) -> Vocab:
        graphs = check_graphs(graphs)
        n = max(g.number_of_nodes() for g in graphs)
        if max_nodes is not None and n > max_nodes:  # never raise the user's setting silently
            i = next(i for i, g in enumerate(graphs) if g.number_of_nodes() == n)
            raise InvalidInputError(f"max_nodes={max_nodes} but graph {i} has {n} nodes; raise max_nodes to at "
                                    f"least {n} (or None: the largest training graph's size)")
        ntypes = sorted({node_type(g, v) for g in graphs for v in g.nodes})
        etypes = sorted({edge_type(g, u, v) for g in graphs for u, v in g.edges}) or ["EDGE"]
        return cls(max(n, max_nodes or 0), ntypes, etypes)

    def max_length(self, max_edges: int | None = None) -> int:
        """Longest sequence for ``max_nodes`` nodes and ``max_edges`` edges (default: complete graph)."""
        n = self.max_nodes
        m = n * (n - 1) // 2 if max_edges is None else max_edges
        return 3 * n + 1 + (4 * m + 1 if m > 0 else 2)


def edge_order(graph: nx.Graph, ordering: str = "deg", rng: np.random.Generator | None = None) -> list[tuple[int, int]]:
    """Edges of ``graph`` (nodes ``0..n-1``) as ``(source, target)`` pairs in the given ordering."""
    if ordering not in ORDERINGS:
        raise InvalidInputError(f"ordering: expected one of {ORDERINGS}, got {ordering!r}")
    rng = rng if rng is not None else np.random.default_rng()
    adj = {v: set(graph.adj[v]) for v in graph.nodes}
    if ordering == "uniform":
        edges = [(u, v) if rng.random() < 0.5 else (v, u) for u, v in graph.edges]
        return [edges[i] for i in rng.permutation(len(edges))]
    if ordering == "bfs":
        seen: set[frozenset] = set()
        visited: set[int] = set()
        out = []
        for start in sorted(adj):
            if start in visited:
                continue
            visited.add(start)
            queue = deque([start])
            while queue:
                u = queue.popleft()
                for v in sorted(adj[u]):
                    e = frozenset((u, v))
                    if e not in seen:
                        seen.add(e)
                        out.append((u, v))
                    if v not in visited:
                        visited.add(v)
                        queue.append(v)
        return out
    deg = {v: len(a) for v, a in adj.items()}
    removed = []
    remaining = graph.number_of_edges()
    while remaining:
        d_min = min(d for d in deg.values() if d > 0)
        sources = sorted(v for v, d in deg.items() if d == d_min)
        src = sources[int(rng.integers(len(sources)))]
        nb_min = min(deg[w] for w in adj[src])
        targets = sorted(w for w in adj[src] if deg[w] == nb_min)
        dst = targets[int(rng.integers(len(targets)))]
        adj[src].discard(dst)
        adj[dst].discard(src)
        deg[src] -= 1
        deg[dst] -= 1
        remaining -= 1
        removed.append((src, dst))
    removed.reverse()
    return removed


def first_seen_labels(edges: Sequence[tuple[int, int]], n: int) -> list[int]:
    """``new[v]``: the rank of node ``v`` by first appearance in ``edges`` (source before target);
    nodes absent from ``edges`` follow in increasing order of their current label."""
    new: dict[int, int] = {}
    for a, b in edges:
        for v in (a, b):
            if v not in new:
                new[v] = len(new)
    for v in range(n):
        if v not in new:
            new[v] = len(new)
    return [new[v] for v in range(n)]


def encode(graph: nx.Graph, vocab: Vocab, *, ordering: str = "deg", rng: np.random.Generator | None = None,
           permute: bool = True, node_ids: str = "random", what: str = "graph") -> list[int]:
    """Token ids of one graph (a random node permutation first when ``permute``; ``node_ids`` as in
    the module docstring)."""
    if node_ids not in NODE_IDS:
        raise InvalidInputError(f"node_ids: expected one of {NODE_IDS}, got {node_ids!r}")
    rng = rng if rng is not None else np.random.default_rng()
    nodes = list(graph.nodes)
    n = len(nodes)
    if n > vocab.max_nodes:
        raise InvalidInputError(f"{what} has {n} nodes but the vocabulary holds at most {vocab.max_nodes} "
                                "(graphs larger than the trained vocabulary cannot be tokenised)")
    perm = rng.permutation(n) if permute else np.arange(n)
    new = {nodes[i]: int(perm[i]) for i in range(n)}
    types = [None] * n
    for v in nodes:
        t = f"NODE_{node_type(graph, v)}"
        if t not in vocab.ids:
            raise InvalidInputError(f"{what}: unknown node type {t[5:]!r}; known: {vocab.node_types}")
        types[new[v]] = vocab.ids[t]
    h = nx.Graph()
    h.add_nodes_from(range(n))
    etype = {}
    for u, v in graph.edges:
        t = f"EDGE_{edge_type(graph, u, v)}"
        if t not in vocab.ids:
            raise InvalidInputError(f"{what}: unknown edge type {t[5:]!r}; known: {vocab.edge_types}")
        a, b = new[u], new[v]
        h.add_edge(a, b)
        etype[frozenset((a, b))] = vocab.ids[t]
    edges = edge_order(h, ordering, rng)
    if node_ids == "first_seen":
        lab = first_seen_labels(edges, n)
        edges = [(lab[a], lab[b]) for a, b in edges]
        etype = {frozenset(lab[v] for v in e): t for e, t in etype.items()}
        relabelled = [None] * n
        for v in range(n):
            relabelled[lab[v]] = types[v]
        types = relabelled
    ids = [vocab.boc]
    for i in range(n):
        if i:
            ids.append(vocab.sepc)
        ids += [types[i], vocab.idx0 + i]
    ids += [vocab.eoc, vocab.bog]
    for k, (a, b) in enumerate(edges):
        if k:
            ids.append(vocab.sepg)
        ids += [vocab.idx0 + a, vocab.idx0 + b, etype[frozenset((a, b))]]
    ids.append(vocab.eog)
    return ids


def decode(ids: Sequence[int] | torch.Tensor, vocab: Vocab, *, strict: bool = False) -> nx.Graph | None:
    """Graph of a token sequence (anything after ``<eog>`` is ignored).

    Returns ``None`` for a malformed sequence (``strict=True`` raises ``InvalidInputError`` with the
    reason instead). Nodes are ``0..n-1`` with their types; isolated nodes are kept.
    """
    toks = [int(t) for t in (ids.tolist() if isinstance(ids, torch.Tensor) else ids)]

    def fail(msg: str):
        if strict:
            raise InvalidInputError(f"cannot decode sequence: {msg}")
        return None

    idx_hi = vocab.idx0 + vocab.max_nodes
    is_idx = lambda t: vocab.idx0 <= t < idx_hi  # noqa: E731
    is_node = lambda t: vocab.node0 <= t < vocab.edge0  # noqa: E731
    is_edge = lambda t: vocab.edge0 <= t < len(vocab)  # noqa: E731
    if not toks or toks[0] != vocab.boc:
        return fail("does not start with <boc>")
    g = nx.Graph()
    pos = 1
    while True:
        if pos + 1 >= len(toks) or not is_node(toks[pos]) or not is_idx(toks[pos + 1]):
            return fail(f"expected a node type and an index at position {pos}")
        i = toks[pos + 1] - vocab.idx0
        if i in g:
            return fail(f"node IDX_{i} listed twice")
        g.add_node(i, type=vocab.node_types[toks[pos] - vocab.node0])
        pos += 2
        if pos >= len(toks):
            return fail("ends inside the node block")
        if toks[pos] == vocab.eoc:
            pos += 1
            break
        if toks[pos] != vocab.sepc:
            return fail(f"expected <sepc> or <eoc> at position {pos}")
        pos += 1
    if pos >= len(toks) or toks[pos] != vocab.bog:
        return fail(f"expected <bog> at position {pos}")
    pos += 1
    if pos < len(toks) and toks[pos] == vocab.eog:
        return nx.convert_node_labels_to_integers(g, ordering="sorted")
    while True:
        if pos + 2 >= len(toks) or not (is_idx(toks[pos]) and is_idx(toks[pos + 1]) and is_edge(toks[pos + 2])):
            return fail(f"expected an edge (index, index, type) at position {pos}")
        a, b = toks[pos] - vocab.idx0, toks[pos + 1] - vocab.idx0
        if a not in g or b not in g or a == b or g.has_edge(a, b):
            return fail(f"edge ({a}, {b}) refers to a missing node, is a self-loop or repeats an edge")
        g.add_edge(a, b, type=vocab.edge_types[toks[pos + 2] - vocab.edge0])
        pos += 3
        if pos >= len(toks):
            return fail("ends inside the edge block (no <eog>)")
        if toks[pos] == vocab.eog:
            break
        if toks[pos] != vocab.sepg:
            return fail(f"expected <sepg> or <eog> at position {pos}")
        pos += 1
    if sorted(g.nodes) != list(range(g.number_of_nodes())):
        g = nx.convert_node_labels_to_integers(g, ordering="sorted")
    return g


def encode_dataset(graphs: Sequence[nx.Graph], vocab: Vocab, *, ordering: str = "deg", copies: int = 1,
                   seed: int = 0, length: int | None = None, node_ids: str = "random") -> torch.Tensor:
    """``LongTensor [len(graphs)·copies, L]``: ``copies`` random permutations (and tie breaks) of every
    graph, right-padded with ``<pad>`` to ``length`` (default: the longest sequence).

    Every graph that cannot be tokenised (too large, unknown type) is reported in one error.
    """
    graphs = check_graphs(graphs)
    if copies < 1:
        raise InvalidInputError(f"copies: expected >= 1, got {copies}")
    rng = np.random.default_rng(seed)
    seqs, bad = [], []
    for i, g in enumerate(graphs):
        try:
            for _ in range(copies):
                seqs.append(encode(g, vocab, ordering=ordering, rng=rng, node_ids=node_ids, what=f"graphs[{i}]"))
        except InvalidInputError as exc:
            bad.append(str(exc))
    if bad:
        raise InvalidInputError(f"{len(bad)} of {len(graphs)} graphs cannot be tokenised:\n  " + "\n  ".join(bad[:20]))
    width = max(len(s) for s in seqs) if length is None else length
    if max(len(s) for s in seqs) > width:
        raise InvalidInputError(f"a sequence of length {max(len(s) for s in seqs)} exceeds length={width}")
    out = torch.full((len(seqs), width), vocab.pad, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.tensor(s)
    return out
