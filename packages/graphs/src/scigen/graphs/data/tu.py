"""TU Dortmund graph-classification benchmarks in their text format (TUDataset; Morris et al. 2020,
arXiv:2007.08663, https://chrsmrrs.github.io/datasets/).

A dataset ``DS`` is a folder of comma-separated files (the format README shipped with each dataset):
``DS_A.txt`` (m lines ``row, col``: 1-based node ids of the block-diagonal adjacency, both directions of
an undirected edge listed), ``DS_graph_indicator.txt`` (n lines: 1-based graph id of node i),
``DS_graph_labels.txt`` (N lines) and the optional ``DS_node_labels.txt``, ``DS_node_attributes.txt``,
``DS_edge_labels.txt``, ``DS_edge_attributes.txt`` (same order as ``DS_A.txt``) and
``DS_graph_attributes.txt``.

:func:`load_tu` finds the folder through the catalog (``scigen.datasets.path(name)``: the cache, with a
hand-placed ``DS.zip`` extracted on first use, or a message saying exactly what to fetch and where to
put it) or under an explicit ``root``. It returns a :class:`TUData`: networkx graphs (nodes ``0..n-1``
with ``label``/``type``/``attributes``; edges with ``label``/``type``/``attributes``; ``G.graph["label"]``
the raw class label, ``G.graph["y"]`` its index) and :meth:`TUData.to_pyg`, which gives the same
``Data`` objects as PyG's ``TUDataset`` on the same raw files: ``x`` = one-hot node labels (per label
column, shifted by the column minimum, width max+1; attributes first when ``use_node_attr``),
``edge_index`` without self-loops, coalesced (sorted by (row, col), duplicates summed), ``edge_attr``
= one-hot edge labels (attributes first when ``use_edge_attr``), ``y`` = index of the graph label
among the sorted distinct labels (or ``DS_graph_attributes`` for regression).

Every malformed line is reported as ``file:line`` with what was expected; a missing file is named.
"""

from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import numpy as np

from scigen.core.errors import InvalidInputError

__all__ = ["TUData", "TUFormatError", "load_tu", "read_tu"]

_OPTIONAL = ("node_labels", "node_attributes", "edge_labels", "edge_attributes", "graph_labels",
             "graph_attributes")


_BLANK_LINE = re.compile(r"\n[ \t\r]*\n")


class TUFormatError(InvalidInputError):
    """A TU dataset file that is missing or does not follow the format (names the file and line)."""


def _read(path: Path, kind: type) -> np.ndarray:
    """Rows of comma-separated numbers as an (rows, cols) array; ``kind`` is ``int`` or ``float``."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TUFormatError(f"{path}: not a text file ({exc.reason} at byte {exc.start})") from exc
    body = text.rstrip()
    if not body.strip():
        raise TUFormatError(f"{path}: the file is empty")
    if not _BLANK_LINE.search(body):  # fast path; the line-by-line reader below names the bad line
        try:
            arr = np.loadtxt(io.StringIO(body), delimiter=",", dtype=np.int64 if kind is int else np.float64,
                             comments=None, ndmin=2)
            if kind is int or np.isfinite(arr).all():
                return arr
        except ValueError:
            pass
    lines = body.splitlines()
    what = "integers" if kind is int else "numbers"
    rows, width = [], None
    for no, line in enumerate(lines, start=1):
        parts = [p.strip() for p in line.split(",")]
        try:
            row = [kind(p) for p in parts]
        except ValueError:
            row = None
        if row is None or (width is not None and len(row) != width) or (kind is float and not np.isfinite(row).all()):
            expected = f"{width} comma-separated {what}" if width else f"comma-separated {what}"
            raise TUFormatError(f"{path}:{no}: expected {expected}, got {line.strip()[:60]!r}")
        width = len(row)
        rows.append(row)
    return np.asarray(rows, dtype=np.int64 if kind is int else np.float64)


@dataclass
class TUData:
    """One TU dataset: networkx ``graphs`` plus the raw (0-based) arrays :meth:`to_pyg` is built from."""

    name: str
    folder: Path
    graphs: list[nx.Graph]
    edges: np.ndarray                      # (m, 2) 0-based global node ids, file order
    graph_index: np.ndarray                # (n,) 0-based graph of each node
    node_labels: np.ndarray | None = None  # (n, k) int
    node_attributes: np.ndarray | None = None
    edge_labels: np.ndarray | None = None
    edge_attributes: np.ndarray | None = None
    graph_labels: np.ndarray | None = None  # (N,) raw class labels
    graph_attributes: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.graphs)

    @property
    def classes(self) -> np.ndarray:
        """The distinct raw graph labels, sorted; ``y`` indexes into this."""
        return np.unique(self.graph_labels) if self.graph_labels is not None else np.empty(0, np.int64)

    @property
    def y(self) -> np.ndarray:
        """Class index of every graph (position of its label in :attr:`classes`)."""
        if self.graph_labels is None:
            raise InvalidInputError(f"{self.name}: has no {self.name}_graph_labels.txt, so no class labels")
        return np.searchsorted(self.classes, self.graph_labels)

    def to_pyg(self, *, use_node_attr: bool = False, use_edge_attr: bool = False) -> list:
        """``torch_geometric.data.Data`` per graph, as PyG's ``TUDataset(root, name, use_node_attr,
        use_edge_attr)`` builds them from the same files (see the module docstring)."""
        import torch
        from torch_geometric.data import Data

        def onehot(labels):
            if labels is None:
                return None
            shifted = labels - labels.min(axis=0)
            return np.concatenate([np.eye(int(c.max()) + 1)[c] for c in shifted.T], axis=1)

        def features(attrs, labels, use_attr):
            parts = [a for a in (attrs, onehot(labels)) if a is not None and a.size]
            if not parts:
                return None
            full = np.concatenate(parts, axis=1)
            return full if use_attr or attrs is None else full[:, attrs.shape[1]:]

        n = self.graph_index.shape[0]
        x = features(self.node_attributes, self.node_labels, use_node_attr)
        ea = features(self.edge_attributes, self.edge_labels, use_edge_attr)
        keep = self.edges[:, 0] != self.edges[:, 1]
        key = self.edges[keep, 0] * n + self.edges[keep, 1]
        uniq, inverse = np.unique(key, return_inverse=True)
        row, col = uniq // n, uniq % n
        if ea is not None:
            summed = np.zeros((uniq.shape[0], ea.shape[1]))
            np.add.at(summed, inverse, ea[keep])
            ea = summed
        if self.graph_attributes is not None:
            y = torch.tensor(self.graph_attributes.squeeze(-1) if self.graph_attributes.shape[1] == 1
                             else self.graph_attributes, dtype=torch.float32)
        else:
            y = torch.tensor(self.y, dtype=torch.long) if self.graph_labels is not None else None
        node_ptr = np.searchsorted(self.graph_index, np.arange(len(self) + 1))
        edge_ptr = np.searchsorted(self.graph_index[row], np.arange(len(self) + 1))
        out = []
        for g in range(len(self)):
            a, b, e0, e1 = node_ptr[g], node_ptr[g + 1], edge_ptr[g], edge_ptr[g + 1]
            d = Data(edge_index=torch.tensor(np.stack([row[e0:e1], col[e0:e1]]) - a, dtype=torch.long))
            if x is not None:
                d.x = torch.tensor(x[a:b], dtype=torch.float32)
            else:
                d.num_nodes = int(b - a)
            if ea is not None:
                d.edge_attr = torch.tensor(ea[e0:e1], dtype=torch.float32)
            if y is not None:
                d.y = y[g:g + 1]
            out.append(d)
        return out


def _optional(folder: Path, name: str, part: str, kind: type, rows: int, what: str) -> np.ndarray | None:
    path = folder / f"{name}_{part}.txt"
    if not path.is_file():
        return None
    arr = _read(path, kind)
    if arr.shape[0] != rows:
        raise TUFormatError(f"{path}: {arr.shape[0]} lines, expected {rows} (one per {what}); "
                            "the files do not belong together")
    return arr


def read_tu(folder: str | os.PathLike, name: str) -> TUData:
    """Read the TU dataset ``name`` from ``folder`` (which holds ``<name>_A.txt`` etc.)."""
    folder = Path(folder)
    needed = [folder / f"{name}_{p}.txt" for p in ("A", "graph_indicator")]
    missing = [str(p) for p in needed if not p.is_file()]
    if missing:
        raise TUFormatError(f"TU dataset {name!r}: missing {', '.join(missing)} (required by the TU format)")
    edges = _read(needed[0], int)
    if edges.shape[1] != 2:
        raise TUFormatError(f"{needed[0]}:1: expected 'row, col' (2 integers), got {edges.shape[1]} values")
    ind = _read(needed[1], int)
    if ind.shape[1] != 1:
        raise TUFormatError(f"{needed[1]}:1: expected one graph id per line, got {ind.shape[1]} values")
    ind = ind[:, 0]
    n, m = ind.shape[0], edges.shape[0]
    bad = np.flatnonzero(np.diff(ind) < 0)
    if bad.size or ind[0] != 1:
        no = int(bad[0]) + 2 if bad.size else 1
        raise TUFormatError(f"{needed[1]}:{no}: graph ids must start at 1 and never decrease, got {int(ind[no - 1])}")
    gaps = np.flatnonzero(np.diff(ind) > 1)
    if gaps.size:
        raise TUFormatError(f"{needed[1]}:{int(gaps[0]) + 2}: graph id jumps from {int(ind[gaps[0]])} to "
                            f"{int(ind[gaps[0] + 1])} (a graph without nodes)")
    out_of_range = np.flatnonzero((edges < 1).any(1) | (edges > n).any(1))
    if out_of_range.size:
        i = int(out_of_range[0])
        raise TUFormatError(f"{needed[0]}:{i + 1}: node id out of range 1..{n} ({needed[1].name} has {n} nodes): "
                            f"{int(edges[i, 0])}, {int(edges[i, 1])}")
    edges = edges - 1
    gi = ind - 1
    across = np.flatnonzero(gi[edges[:, 0]] != gi[edges[:, 1]])
    if across.size:
        i = int(across[0])
        raise TUFormatError(f"{needed[0]}:{i + 1}: edge joins node {edges[i, 0] + 1} of graph {gi[edges[i, 0]] + 1} "
                            f"to node {edges[i, 1] + 1} of graph {gi[edges[i, 1]] + 1}")
    n_graphs = int(gi[-1]) + 1
    sizes = {"node": (n, f"node of {needed[1].name}"), "edge": (m, f"edge line of {needed[0].name}"),
             "graph": (n_graphs, f"graph id in {needed[1].name}")}
    parts = {}
    for p in _OPTIONAL:
        rows, what = sizes[p.split("_")[0]]
        parts[p] = _optional(folder, name, p, float if p.endswith("attributes") else int, rows, what)
    if parts["graph_labels"] is not None:
        if parts["graph_labels"].shape[1] != 1:
            raise TUFormatError(f"{folder / f'{name}_graph_labels.txt'}:1: expected one label per line")
        parts["graph_labels"] = parts["graph_labels"][:, 0]
    data = TUData(name=name, folder=folder, graphs=[], edges=edges, graph_index=gi, **parts)
    data.graphs = _graphs(data)
    return data


def _attrs(labels: np.ndarray | None, attributes: np.ndarray | None, i: int) -> dict:
    """Node/edge ``i``'s ``label`` (int, or a tuple for several label columns), its ``type`` (the label as a
    string, the package's convention) and ``attributes`` (list of float), for those present."""
    out = {}
    if labels is not None:
        row = labels[i]
        out["label"] = int(row[0]) if row.shape[0] == 1 else tuple(int(v) for v in row)
        out["type"] = ",".join(str(int(t)) for t in row)
    if attributes is not None:
        out["attributes"] = attributes[i].tolist()
    return out


def _graphs(d: TUData) -> list[nx.Graph]:
    ptr = np.searchsorted(d.graph_index, np.arange(int(d.graph_index[-1]) + 2))
    graphs = []
    for g in range(ptr.shape[0] - 1):
        G = nx.Graph(name=f"{d.name}_{g + 1}")
        if d.graph_labels is not None:
            G.graph["label"] = int(d.graph_labels[g])
        if d.graph_attributes is not None:
            G.graph["attributes"] = d.graph_attributes[g].tolist()
        for v in range(ptr[g], ptr[g + 1]):
            G.add_node(int(v - ptr[g]), **_attrs(d.node_labels, d.node_attributes, v))
        graphs.append(G)
    if d.graph_labels is not None:
        for G, y in zip(graphs, d.y, strict=True):
            G.graph["y"] = int(y)
    seen: dict[tuple[int, int, int], int] = {}
    path = d.folder / f"{d.name}_A.txt"
    for i, (u, v) in enumerate(d.edges):
        if u == v:
            continue  # self-loops are dropped, as PyG's TUDataset does
        g = int(d.graph_index[u])
        a, b = int(u - ptr[g]), int(v - ptr[g])
        attrs = _attrs(d.edge_labels, d.edge_attributes, i)
        key = (g, min(a, b), max(a, b))
        if key in seen and attrs and graphs[g].edges[a, b] != attrs:
            raise TUFormatError(f"{path}:{i + 1}: edge {u + 1}, {v + 1} has labels/attributes {attrs} but line "
                                f"{seen[key] + 1} gave the same undirected edge {graphs[g].edges[a, b]}")
        seen.setdefault(key, i)
        graphs[g].add_edge(a, b, **attrs)
    return graphs


def _folder(root: Path, name: str) -> Path:
    for cand in (root, root / name):
        if (cand / f"{name}_A.txt").is_file():
            return cand
    return root / name


def load_tu(name: str, root: str | os.PathLike | None = None) -> TUData:
    """The TU dataset ``name`` (e.g. ``"MUTAG"``, ``"COX2"``) as :class:`TUData`.

    ``root=None``: the catalog's cache (``scigen.datasets.path(name)``; raises
    :class:`scigen.datasets.DataNotAvailableError` with the ``scigen data fetch`` command and the folder to
    place ``<name>.zip`` in when it is missing). Otherwise ``root`` is a folder holding ``<name>_A.txt``
    etc., or holding a ``<name>/`` folder that does (the layout of the extracted zip).
    """
    if not isinstance(name, str) or not name.strip():
        raise InvalidInputError(f"name: expected a TU dataset name such as 'MUTAG', got {name!r}")
    if root is None:
        from scigen.datasets import card, path

        name = card(name).name
        root = path(name)
    root = Path(root)
    if not root.is_dir():
        raise TUFormatError(f"root: {root} is not a directory")
    return read_tu(_folder(root, name), name)
