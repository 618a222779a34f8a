"""AGDiff's boundary: graphs in, dense padded tensors out, and the normal/anomaly labels.

Accepted data (:func:`as_graphs`): networkx graphs, a :class:`~scigen.graphs.data.TUData`, PyG
``Data`` / ``Dataset`` (a ``TUDataset``; one-hot ``x`` rows become node types), or a path
(a TU folder ``<DS>_A.txt`` ... or anything :func:`scigen.graphs.io.read_graphs` reads).
Node features are the one-hot node types (attribute ``"type"``, the package's convention; the TU
reader sets it from ``DS_node_labels.txt``); the vocabulary is fixed by the first training data and a
graph with a type outside it — e.g. an unlabelled graph for a model trained on labelled ones — is
refused, naming the graph and the types.

Labels: ``G.graph["anomaly"]`` (1 = anomalous, 0 = normal). :func:`anomaly_labels` reads them,
:func:`label_by_class` sets them from a class label (normal = the majority class unless given, the
GLocalKD / iGAD protocol AGDiff follows).

Packing (:func:`pack`): ``[G, N, F + N + 1]`` = node features ``[N, F]`` ‖ adjacency rows ``[N, N]`` ‖
node mask ``[N, 1]``, zero-padded to ``N`` nodes, so the engine's ``fit`` batches graphs as rows.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import torch
from torch import Tensor

from scigen.core.errors import InvalidInputError
from scigen.graphs.validate import node_type

__all__ = ["PackedGraphs", "anomaly_labels", "as_graphs", "label_by_class", "node_vocab", "pack", "unpack"]


def as_graphs(data: Any, what: str = "data") -> list[nx.Graph]:
    """``data`` as a checked list of networkx graphs: the graph systems' shared reader
    (:func:`scigen.graphs.boundary.as_graphs`) with PyG one-hot ``x`` read as node types; a TU folder's
    graphs are labelled normal / anomalous by class (:func:`label_by_class`)."""
    from scigen.graphs.boundary import as_graphs as read

    graphs = read(data, what, smiles=False, pyg_node_types=True)
    if isinstance(data, (str, os.PathLike)) and Path(data).is_dir() and any(Path(data).glob("*_A.txt")):
        return label_by_class(graphs)
    return graphs


def label_by_class(graphs: Sequence[nx.Graph], normal_class: int | None = None) -> list[nx.Graph]:
    """Set ``G.graph["anomaly"] = (G.graph["label"] != normal_class)`` on every graph (in place; returned).

    ``normal_class=None`` takes the most frequent class label (ties: the smallest label), the rule of
    the GLAD benchmarks AGDiff follows (the minority class is the anomaly)."""
    labels = []
    for i, g in enumerate(graphs):
        if "label" not in g.graph:
            raise InvalidInputError(f"graphs[{i}] has no class label (G.graph['label']) to split normal/anomaly by")
        labels.append(g.graph["label"])
    counts = Counter(labels)
    if normal_class is None:
        normal_class = min(counts, key=lambda c: (-counts[c], c))
    elif normal_class not in counts:
        raise InvalidInputError(f"normal_class={normal_class!r} is not a class of the data (classes {sorted(counts)})")
    for g, y in zip(graphs, labels, strict=True):
        g.graph["anomaly"] = int(y != normal_class)
        g.graph["normal_class"] = normal_class
    return list(graphs)


def anomaly_labels(graphs: Sequence[nx.Graph], what: str = "data", *, required: bool = True) -> np.ndarray | None:
    """``G.graph["anomaly"]`` of every graph as an int array (1 = anomaly); ``None`` when no graph has one
    and ``required`` is False. Graphs with and without labels mixed are refused, naming one."""
    have = [("anomaly" in g.graph) for g in graphs]
    if not any(have):
        if required:
            raise InvalidInputError(f"{what}: the graphs carry no anomaly labels (G.graph['anomaly'] = 0 or 1; for a "
                                    "labelled dataset use scigen.graphs.agdiff.label_by_class)")
        return None
    if not all(have):
        i = have.index(False)
        raise InvalidInputError(f"{what}[{i}] has no G.graph['anomaly'] while other graphs do")
    y = []
    for i, g in enumerate(graphs):  # 0/1, True/False, 0.0/1.0 — never a bare int() of "yes", 0.5 or NaN
        v = g.graph["anomaly"]
        if isinstance(v, (str, bytes)) or not isinstance(v, (int, float, np.integer, np.floating, np.bool_)) \
                or v not in (0, 1):
            raise InvalidInputError(f"{what}[{i}].graph['anomaly'] must be 0 or 1, got {v!r} (1 = anomalous)")
        y.append(int(v))
    return np.asarray(y)


def node_vocab(graphs: Sequence[nx.Graph]) -> list[str]:
    """The sorted node types of ``graphs`` (the one-hot feature columns)."""
    return sorted({node_type(g, v) for g in graphs for v in g.nodes})


def pack(graphs: Sequence[nx.Graph], vocab: Sequence[str], what: str = "data", n_nodes: int | None = None) -> Tensor:
    """Graphs → ``[G, N, F + N + 1]`` float32 (module docstring); ``N`` = the largest graph (or ``n_nodes``)."""
    index = {t: i for i, t in enumerate(vocab)}
    bad = []
    for i, g in enumerate(graphs):
        unknown = sorted({node_type(g, v) for v in g.nodes} - set(index))
        if unknown:
            bad.append(f"{what}[{i}]: node types {unknown[:5]}")
    if bad:
        raise InvalidInputError(f"{what}: {len(bad)} graphs have node types the model was not trained on (its node "
                                f"features are the types {list(vocab)[:10]}{'...' if len(vocab) > 10 else ''}; a "
                                "graph without node labels has type 'NODE'):\n  " + "\n  ".join(bad[:10]))
    n = max(g.number_of_nodes() for g in graphs) if n_nodes is None else n_nodes
    f = len(vocab)
    out = torch.zeros(len(graphs), n, f + n + 1)
    for k, g in enumerate(graphs):
        nodes = list(g.nodes)
        if len(nodes) > n:
            raise InvalidInputError(f"{what}[{k}] has {len(nodes)} nodes, more than the {n} packed")
        pos = {v: i for i, v in enumerate(nodes)}
        types = torch.tensor([index[node_type(g, v)] for v in nodes])
        out[k, torch.arange(len(nodes)), types] = 1.0
        if g.number_of_edges():
            e = torch.tensor([(pos[u], pos[v]) for u, v in g.edges])
            out[k, e[:, 0], f + e[:, 1]] = 1.0
            out[k, e[:, 1], f + e[:, 0]] = 1.0
        out[k, : len(nodes), -1] = 1.0
    return out


class PackedGraphs(torch.utils.data.Dataset):
    """:func:`pack` one graph per item, for graphs on disk (a :class:`~scigen.graphs.data.store.GraphStore`):
    item ``k`` is row ``k`` of ``pack(graphs, vocab)`` (padded to the largest graph), built when asked for."""

    def __init__(self, graphs, vocab: Sequence[str], what: str = "data") -> None:
        unknown = sorted(set(graphs.node_types) - set(vocab))
        if unknown:
            raise InvalidInputError(f"{what}: the store's graphs have node types the model was not trained on "
                                    f"{unknown[:5]} (its node features are the types {list(vocab)[:10]})")
        self.graphs, self.vocab, self.what = graphs, list(vocab), what
        self.n_nodes = int(graphs.n_nodes().max())

    def __len__(self) -> int:
        return len(self.graphs)

    def __getitem__(self, k: int) -> Tensor:
        return pack([self.graphs[k]], self.vocab, f"{self.what}[{k}]", n_nodes=self.n_nodes)[0]


def unpack(batch: Tensor, n_features: int) -> tuple[Tensor, Tensor, Tensor]:
    """``[B, N, F + N + 1]`` → features ``[B, N, F]``, adjacency ``[B, N, N]``, boolean node mask ``[B, N]``."""
    f = n_features
    return batch[..., :f], batch[..., f:-1], batch[..., -1] > 0.5
