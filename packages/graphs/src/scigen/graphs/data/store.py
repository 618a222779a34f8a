"""Graphs larger than memory: an on-disk store written one graph at a time, read per batch.

:func:`write_graph_store` writes any iterable of networkx graphs (a generator over a huge edge list, a PyG
dataset converted on the fly) into a :mod:`scigen.core.ragged` store: per graph its node types (codes into a
vocabulary gathered while writing), its edges as node positions ``[E, 2]`` with their edge-type codes, and
its integer graph labels (``label``, ``anomaly``) when every graph has them. Each graph is checked as the
in-memory readers check it (:func:`scigen.graphs.validate.check_graph`), errors naming its index.

:class:`GraphStore` is a read-only ``Sequence`` of networkx graphs over the store: ``store[i]`` rebuilds
graph ``i`` from disk (nodes ``0..n-1`` in the written order, ``"type"`` attributes only where a type was
set), so G2PT, SBGD and AGDiff take it (or its path) wherever they take a list of graphs, and their datasets
encode one graph when the engine asks for it. ``subset`` is a view (AGDiff's normal graphs) and
``labels(name)`` / ``n_nodes()`` stream per-graph numbers without building graphs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from scigen.core.errors import InvalidInputError
from scigen.core.ragged import RaggedArrays, is_ragged_store, write_ragged
from scigen.graphs.validate import DEFAULT_EDGE_TYPE, DEFAULT_NODE_TYPE, check_graph, edge_type, node_type

__all__ = ["GraphStore", "is_graph_store", "write_graph_store"]

_KIND = "scigen.graphs/1"
_LABELS = ("label", "anomaly")


def write_graph_store(path: str | os.PathLike[str], graphs: Iterable[nx.Graph], *, overwrite: bool = False) -> Path:
    """Write ``graphs`` to the store ``path`` holding one graph at a time (module docstring); returns ``path``."""
    node_types: dict[str, int] = {}
    edge_types: dict[str, int] = {}
    attrs: dict[str, Any] = {"kind": _KIND}
    labels: list[str] = []
    largest = [0]

    def records():
        for k, g in enumerate(graphs):
            check_graph(g, f"graphs[{k}]")
            if k == 0:
                labels.extend(a for a in _LABELS if a in g.graph)
            missing = [a for a in labels if a not in g.graph]
            if missing or any(a in g.graph for a in _LABELS if a not in labels):
                raise InvalidInputError(f"graphs[{k}]: graph labels {sorted(a for a in _LABELS if a in g.graph)}, the "
                                        f"first graph {labels}: every graph carries the same labels")
            pos = {v: i for i, v in enumerate(g.nodes)}
            types = [node_types.setdefault(node_type(g, v), len(node_types)) for v in g.nodes]
            edges = np.array([(pos[u], pos[v]) for u, v in g.edges], dtype=np.int32).reshape(-1, 2)
            et = [edge_types.setdefault(edge_type(g, u, v), len(edge_types)) for u, v in g.edges]
            y = []
            for a in labels:
                v = g.graph[a]
                if isinstance(v, (str, bytes)) or not hasattr(v, "__index__") and not float(v).is_integer():
                    raise InvalidInputError(f"graphs[{k}].graph[{a!r}] = {v!r}: the store keeps integer labels")
                y.append(int(v))
            largest[0] = max(largest[0], len(types))
            yield {"types": np.asarray(types, np.int32), "edges": edges, "etypes": np.asarray(et, np.int32),
                   "labels": np.asarray(y, np.int64)}
        attrs.update(node_types=list(node_types), edge_types=list(edge_types), labels=labels, max_nodes=largest[0])

    return write_ragged(path, records(), ragged=("types", "edges", "etypes"), attrs=attrs, overwrite=overwrite)


def is_graph_store(path: Any) -> bool:
    """True when ``path`` is a folder written by :func:`write_graph_store`."""
    return is_ragged_store(path, kind=_KIND)


class GraphStore(Sequence):
    """A :func:`write_graph_store` store as a read-only sequence of networkx graphs (module docstring)."""

    #: the graphs were checked when written: the readers' checks pass it through without building every graph
    checked_graphs = True

    def __init__(self, path: str | os.PathLike[str], indices: np.ndarray | None = None) -> None:
        self.arrays = RaggedArrays(path)
        if self.arrays.attrs.get("kind") != _KIND:
            raise InvalidInputError(f"{path}: a ragged store, but not of graphs (write one with "
                                    "scigen.graphs.data.write_graph_store)")
        self.path = Path(path)
        a = self.arrays.attrs
        self.node_types: list[str] = list(a["node_types"])
        self.edge_types: list[str] = list(a["edge_types"])
        self.label_names: list[str] = list(a["labels"])
        self.indices = None if indices is None else np.asarray(indices, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.arrays) if self.indices is None else int(self.indices.shape[0])

    def _record(self, i: int) -> int:
        if not hasattr(i, "__index__") or isinstance(i, bool):
            raise TypeError(f"graph indices are integers, got {type(i).__name__}")
        n = len(self)
        j = int(i) + n if int(i) < 0 else int(i)
        if not 0 <= j < n:
            raise IndexError(f"graph {i} out of range for a store of {n}")
        return j if self.indices is None else int(self.indices[j])

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        r = self.arrays[self._record(i)]
        g = nx.Graph(**{a: int(v) for a, v in zip(self.label_names, r["labels"].tolist(), strict=True)})
        for v, t in enumerate(r["types"].tolist()):
            name = self.node_types[t]
            g.add_node(v, **({} if name == DEFAULT_NODE_TYPE else {"type": name}))
        for (u, v), t in zip(r["edges"].tolist(), r["etypes"].tolist(), strict=True):
            name = self.edge_types[t]
            g.add_edge(u, v, **({} if name == DEFAULT_EDGE_TYPE else {"type": name}))
        return g

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def subset(self, indices: Sequence[int]) -> GraphStore:
        """The graphs ``indices`` of this store (positions in it), as a store view."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        base = np.arange(len(self.arrays)) if self.indices is None else self.indices
        return GraphStore(self.path, base[idx])

    def labels(self, name: str) -> np.ndarray:
        """The integer graph label ``name`` (``"label"``, ``"anomaly"``) of every graph, without building graphs
        (8 bytes per graph in memory)."""
        if name not in self.label_names:
            raise InvalidInputError(f"{self.path}: the graphs carry no {name!r} label (they carry {self.label_names})")
        col = self.label_names.index(name)
        y = np.concatenate([v[:, col] for _, _, v in self.arrays.chunks("labels", 65536)])
        return y if self.indices is None else y[self.indices]

    def n_nodes(self) -> np.ndarray:
        """The node count of every graph, without building graphs."""
        n = self.arrays.lengths("types")
        return n if self.indices is None else n[self.indices]

    def __repr__(self) -> str:
        return (f"GraphStore({str(self.path)!r}, {len(self)} graphs, node types {self.node_types[:8]}"
                f"{'...' if len(self.node_types) > 8 else ''})")
