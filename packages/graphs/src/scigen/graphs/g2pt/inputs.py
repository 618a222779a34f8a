"""What G2PT accepts at its boundary (outputs: :mod:`~scigen.graphs.g2pt.outputs`).

Inputs (:func:`as_graphs`): networkx graphs, PyG ``Data`` / ``Batch`` / ``Dataset`` (e.g. a
``TUDataset``; converted with :func:`scigen.graphs.convert.from_pyg`), SMILES strings, or a path
(``str`` / ``os.PathLike``) to a file or folder that :func:`scigen.graphs.io.read_graphs` reads. A
string is always a path: one that does not exist is an error naming it (it is never read as a list of
one-character SMILES). :func:`check_vocab` refuses graphs a trained vocabulary cannot encode.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import networkx as nx

from scigen.core.errors import InvalidInputError
from scigen.graphs.g2pt.tokenizer import Vocab
from scigen.graphs.validate import check_graphs, edge_type, node_type


def _is_pyg(obj: object) -> bool:
    """True for objects of PyG classes (or user subclasses of them), without importing PyG."""
    return any(c.__module__.split(".")[0] == "torch_geometric" for c in type(obj).__mro__)


def _pyg_items(data: Any) -> list:
    if hasattr(data, "to_data_list"):  # a Batch
        return data.to_data_list()
    if hasattr(data, "edge_index") and hasattr(data, "num_nodes"):  # one Data
        return [data]
    return [data[i] for i in range(len(data))]  # a Dataset (indexing yields Data)


def _from_pyg(items: Sequence, what: str) -> list[nx.Graph]:
    from scigen.graphs.convert import from_pyg

    out, bad = [], []
    for i, d in enumerate(items):
        try:
            out.append(from_pyg(d))
        except (InvalidInputError, AttributeError, TypeError) as exc:
            bad.append(f"{what}[{i}]: {exc}")
    if bad:
        raise InvalidInputError(f"{what}: {len(bad)} PyG graphs cannot be read:\n  " + "\n  ".join(bad[:20]))
    return out


def as_graphs(data: Any, what: str = "data", *, kekulize: bool = True) -> list[nx.Graph]:
    """``data`` as a checked list of undirected simple networkx graphs (see the module docstring)."""
    if isinstance(data, (str, os.PathLike)):
        p = Path(data)
        if not p.exists():
            raise InvalidInputError(f"{what}: no such file or folder {str(p)!r} (a string is read as a path; "
                                    "pass SMILES as a list of strings)")
        from scigen.graphs.io import read_graphs

        return read_graphs(p)
    if data is None:
        raise InvalidInputError(f"{what}: expected graphs, SMILES, PyG data or a path, got None")
    if isinstance(data, nx.Graph):
        return check_graphs([data], what)
    if _is_pyg(data):
        data = _pyg_items(data)
    try:
        items = list(data)
    except TypeError:
        raise InvalidInputError(f"{what}: expected a list of graphs, SMILES, PyG data or a path, "
                                f"got {type(data).__name__}") from None
    if not items:
        raise InvalidInputError(f"{what}: the dataset is empty (expected graphs or SMILES)")
    if all(isinstance(x, str) for x in items):
        from scigen.graphs.convert import smiles_to_graphs

        return smiles_to_graphs(items, kekulize=kekulize, source=what)
    if any(_is_pyg(x) for x in items):
        return _from_pyg(items, what)
    return check_graphs(items, what)


def check_vocab(graphs: Sequence[nx.Graph], vocab: Vocab, what: str = "data") -> None:
    """Refuse graphs larger than the vocabulary's ``max_nodes`` or with node / edge types it lacks
    (before training, naming the graphs)."""
    big = [f"{what}[{i}] has {g.number_of_nodes()} nodes" for i, g in enumerate(graphs)
           if g.number_of_nodes() > vocab.max_nodes]
    if big:
        raise InvalidInputError(f"graphs larger than the trained vocabulary (max_nodes={vocab.max_nodes}): "
                                + "; ".join(big[:10]))
    known_n, known_e = set(vocab.node_types), set(vocab.edge_types)
    bad = []
    for i, g in enumerate(graphs):
        n = sorted({node_type(g, v) for v in g.nodes} - known_n)
        e = sorted({edge_type(g, u, v) for u, v in g.edges} - known_e)
        if n or e:
            bad.append(f"{what}[{i}]: unknown node types {n} / edge types {e}")
    if bad:
        raise InvalidInputError(f"{what}: {len(bad)} graphs have types the trained vocabulary lacks (node types "
                                f"{vocab.node_types}, edge types {vocab.edge_types}):\n  " + "\n  ".join(bad[:10]))
