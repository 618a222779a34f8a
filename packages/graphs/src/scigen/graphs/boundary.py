"""What the graph systems (G2PT, SBGD, AGDiff) accept and return: one reader, one output switch, one writer.

Inputs (:func:`as_graphs`): networkx graphs, PyG ``Data`` / ``Batch`` / ``Dataset`` (e.g. a ``TUDataset``;
converted with :func:`scigen.graphs.convert.from_pyg`), SMILES strings (``smiles=True``), a
:class:`~scigen.graphs.data.TUData`, or a path (``str`` / ``os.PathLike``): a TU folder (``<DS>_A.txt`` ...,
read by :func:`scigen.graphs.data.tu.read_tu`) or anything :func:`scigen.graphs.io.read_graphs` reads. A string
is always a path: one that does not exist is an error naming it (never a list of one-character SMILES).
A :class:`~scigen.graphs.data.store.GraphStore` (or the path of one) passes through as it is: graphs on disk,
built one at a time (data larger than memory). One-hot PyG ``x`` rows (TUDataset's node labels) are read as node types and ``anomaly`` as
``G.graph["anomaly"]``; continuous ``x`` is left aside with a warning (``pyg_node_types="auto"``, G2PT and SBGD) or
refused (``True``, AGDiff, whose detector needs its categorical node features).

Outputs: :func:`to_output` (networkx as they are, or PyG ``Data`` indexing a given type vocabulary) and
:func:`write_samples` (``.smi`` / ``.smiles`` SMILES lines, ``.graphml`` a new folder of GraphML files built
beside and renamed into place by :func:`scigen.core.files.atomic_dir`, anything else the typed edge-list
format of :mod:`scigen.graphs.io`; every write atomic).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import networkx as nx

from scigen.core.errors import InvalidInputError
from scigen.core.files import atomic_dir, atomic_write_text
from scigen.graphs.validate import check_graphs

__all__ = ["OUTPUTS", "Output", "as_graphs", "is_pyg", "to_output", "write_samples"]

OUTPUTS = ("networkx", "pyg")
Output = Literal["networkx", "pyg"]


def is_pyg(obj: object) -> bool:
    """True for objects of PyG classes (or user subclasses of them), without importing PyG."""
    return any(c.__module__.split(".")[0] == "torch_geometric" for c in type(obj).__mro__)


def _pyg_items(data: Any) -> list:
    if hasattr(data, "to_data_list"):  # a Batch
        return data.to_data_list()
    if hasattr(data, "edge_index") and hasattr(data, "num_nodes"):  # one Data
        return [data]
    return [data[i] for i in range(len(data))]  # a Dataset (indexing yields Data)


def _node_types_from_x(d: Any, g: nx.Graph, where: str, strict: bool = True) -> bool:
    """One-hot ``d.x`` rows become node types, ``d.anomaly`` the graph's anomaly label (in place). Other ``x``
    (continuous attributes) is an error when ``strict``, else left aside; returns whether ``x`` was left aside."""
    import torch

    x = getattr(d, "x", None)
    ignored = False
    if x is not None:
        x = torch.as_tensor(x)
        if x.ndim != 2 or x.shape[0] != g.number_of_nodes():
            raise InvalidInputError(f"{where}.x: expected [num_nodes={g.number_of_nodes()}, F], got {tuple(x.shape)}")
        if not (bool(((x == 0) | (x == 1)).all()) and bool((x.sum(1) == 1).all())):
            if strict:
                raise InvalidInputError(f"{where}.x: categorical node features are read (one-hot rows, as "
                                        "TUDataset's node labels); continuous node attributes are not supported")
            x, ignored = None, True
    if x is not None:
        for v, t in enumerate(x.argmax(1).tolist()):
            g.nodes[v]["type"] = str(t)
    y = getattr(d, "anomaly", None)
    if y is not None:
        g.graph["anomaly"] = int(torch.as_tensor(y).reshape(-1)[0])
    return ignored


def _from_pyg(items: Sequence, what: str, node_types: bool | str) -> list[nx.Graph]:
    from scigen.graphs.convert import from_pyg

    out, bad, ignored = [], [], 0
    for i, d in enumerate(items):
        try:
            g = from_pyg(d)
            if node_types:
                ignored += _node_types_from_x(d, g, f"{what}[{i}]", strict=node_types is True)
            out.append(g)
        except (InvalidInputError, AttributeError, TypeError) as exc:
            bad.append(str(exc) if str(exc).startswith(f"{what}[{i}]") else f"{what}[{i}]: {exc}")
    if bad:
        raise InvalidInputError(f"{what}: {len(bad)} PyG graphs cannot be read:\n  " + "\n  ".join(bad[:20]))
    if ignored:
        import warnings

        warnings.warn(f"{what}: {ignored} of {len(out)} PyG graphs have continuous node features x (not one-hot "
                      "node labels); they are left aside: the graphs are read as untyped structure", stacklevel=3)
    return out


def _read_path(p: Path, what: str) -> list[nx.Graph]:
    if not p.exists():
        raise InvalidInputError(f"{what}: no such file or folder {str(p)!r} (a string is read as a path; "
                                "pass SMILES as a list of strings)")
    tu = sorted(p.glob("*_A.txt")) if p.is_dir() else []
    if tu:
        from scigen.graphs.data.tu import read_tu

        return read_tu(p, tu[0].name[: -len("_A.txt")]).graphs
    from scigen.graphs.io import read_graphs

    return check_graphs(read_graphs(p), what)


def as_graphs(data: Any, what: str = "data", *, smiles: bool = True, kekulize: bool = True,
              pyg_node_types: bool | Literal["auto"] = "auto") -> list[nx.Graph]:
    """``data`` as a checked list of undirected simple networkx graphs (see the module docstring).

    ``smiles``: accept a list of SMILES strings (molecules, converted with ``kekulize``); ``False`` refuses
    them with a message saying so. ``pyg_node_types``: read PyG one-hot ``x`` (TUDataset's node labels) as node
    types; ``"auto"`` (default) leaves other ``x`` (continuous attributes) aside with a warning, ``True`` refuses it,
    ``False`` never reads ``x``."""
    from scigen.graphs.data.store import GraphStore, is_graph_store
    from scigen.graphs.data.tu import TUData

    if isinstance(data, GraphStore):  # on disk, one graph built per access (scigen.graphs.data.store)
        return data
    if is_graph_store(data):
        return GraphStore(data)
    if isinstance(data, (str, os.PathLike)):
        return _read_path(Path(data), what)
    if data is None:
        raise InvalidInputError(f"{what}: expected graphs, SMILES, PyG data, a TUData or a path, got None")
    if isinstance(data, TUData):
        return check_graphs(data.graphs, what)
    if isinstance(data, nx.Graph):
        return check_graphs([data], what)
    if is_pyg(data):
        data = _pyg_items(data)
    try:
        items = list(data)
    except TypeError:
        raise InvalidInputError(f"{what}: expected a list of graphs, SMILES, PyG data, a TUData or a path, "
                                f"got {type(data).__name__}") from None
    if not items:
        raise InvalidInputError(f"{what}: the dataset is empty (expected graphs or SMILES)")
    if all(isinstance(x, str) for x in items):
        if not smiles:
            raise InvalidInputError(f"{what}: this model reads graphs, not SMILES strings (pass networkx or PyG "
                                    "graphs, or a path)")
        from scigen.graphs.convert import smiles_to_graphs

        return smiles_to_graphs(items, kekulize=kekulize, source=what)
    if any(is_pyg(x) for x in items):
        return _from_pyg(items, what, pyg_node_types)
    return check_graphs(items, what)


def to_output(graphs: list[nx.Graph | None], output: str, node_types: Sequence[str] | None = None,
              edge_types: Sequence[str] | None = None) -> list:
    """``graphs`` as networkx (as they are) or PyG ``Data`` whose type indices follow ``node_types`` /
    ``edge_types`` (a model's vocabulary, so every sample indexes the same types; ``None`` stays ``None``)."""
    if output not in OUTPUTS:
        raise InvalidInputError(f"output: expected one of {', '.join(OUTPUTS)}, got {output!r}")
    if output == "networkx":
        return graphs
    from scigen.graphs.convert import to_pyg

    return [None if g is None else to_pyg(g, node_types, edge_types) for g in graphs]


def write_samples(graphs: Sequence[nx.Graph | None], path: str | os.PathLike[str],
                  to_smiles: Callable[[list[nx.Graph]], list[str | None]] | None = None) -> Path:
    """Write the decodable ``graphs`` to ``path`` by its suffix (see the module docstring); ``.smi`` needs
    ``to_smiles`` (a model of molecules), other models refuse that suffix."""
    from scigen.graphs.io import write_edgelist, write_graphml

    p = Path(path)
    if p.is_dir() and p.suffix != ".graphml":  # .graphml: atomic_dir refuses any existing path itself
        raise InvalidInputError(f"{p}: a folder of that name exists; the samples go to a file (.smi, edge list) "
                                "or to a new folder named *.graphml")
    graphs = [g for g in graphs if g is not None]
    if p.suffix in (".smi", ".smiles"):
        if to_smiles is None:
            raise InvalidInputError(f"{p}: SMILES output needs a molecule model; write .graphml or an edge list")
        return atomic_write_text(p, "\n".join(s or "" for s in to_smiles(graphs)) + "\n")
    if p.suffix == ".graphml":
        with atomic_dir(p) as tmp:
            for i, g in enumerate(graphs):
                write_graphml(g, tmp / f"{i:06d}.graphml")
        return p
    return write_edgelist(graphs, p)
