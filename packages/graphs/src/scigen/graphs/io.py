"""Graph files: GraphML (one graph per file, or a folder of them) and a typed multi-graph edge list.

Edge-list format (text, one record per line, ``#`` comments)::

    graph                 # starts a new graph (optional for a single graph)
    node 0 C              # node id and optional type; lists isolated nodes too
    edge 0 1 SINGLE       # endpoints and optional type

Plain ``u v`` lines (the classic networkx edge list) are read as untyped edges of one graph.
Writers go through a temporary file and ``os.replace`` (atomic). Errors name the file and line.
"""

from __future__ import annotations

import os
from pathlib import Path

import networkx as nx

from scigen.core.errors import InvalidInputError
from scigen.core.files import atomic_path, atomic_write_text
from scigen.graphs.validate import NODE_TYPE, check_graph, check_graphs, edge_type, node_type


def write_graphml(graph: nx.Graph, path: str | os.PathLike[str]) -> Path:
    """Write one graph to GraphML (types become string attributes)."""
    check_graph(graph)
    path = Path(path)
    with atomic_path(path) as tmp:
        nx.write_graphml(graph, tmp)
    return path


def read_graphml(path: str | os.PathLike[str]) -> list[nx.Graph]:
    """Read a GraphML file, or every ``*.graphml`` in a folder (sorted by name), as undirected graphs.

    Node ids are relabelled ``0..n-1`` in file order; a directed GraphML is rejected.
    """
    p = Path(path)
    files = sorted(p.glob("*.graphml")) if p.is_dir() else [p]
    if not files or not files[0].is_file():
        raise InvalidInputError(f"{p}: no GraphML file found")
    out = []
    for f in files:
        try:
            g = nx.read_graphml(f)
        except Exception as exc:  # lxml / ElementTree raise several types
            raise InvalidInputError(f"{f}: not a readable GraphML file ({exc})") from exc
        if g.is_directed():
            raise InvalidInputError(f"{f}: the graph is directed; expected an undirected graph")
        out.append(nx.convert_node_labels_to_integers(nx.Graph(g)))
    return out


def write_edgelist(graphs: nx.Graph | list[nx.Graph], path: str | os.PathLike[str]) -> Path:
    """Write graphs in the typed multi-graph edge-list format above (isolated nodes kept)."""
    graphs = check_graphs(graphs)
    lines = ["# scigen graphs edge list: 'graph' / 'node ID TYPE' / 'edge U V TYPE'"]
    for g in graphs:
        index = {v: i for i, v in enumerate(g.nodes)}
        lines.append("graph")
        lines += [f"node {index[v]} {node_type(g, v)}" for v in g.nodes]
        lines += [f"edge {index[u]} {index[v]} {edge_type(g, u, v)}" for u, v in g.edges]
    return atomic_write_text(path, "\n".join(lines) + "\n")


def read_text(path: str | os.PathLike[str], what: str = "file") -> str:
    """The UTF-8 text of ``path``; a missing file, a folder or a binary file (a PNG, a pickle) is an
    ``InvalidInputError`` naming the file."""
    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"{p}: no such {what}" + (" (got a folder)" if p.is_dir() else ""))
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{p}: not a text file ({exc.reason} at byte {exc.start}); the {what} must be "
                                "UTF-8 text (binary data such as an image or a pickle cannot be read)") from None


class _Builder:
    """One graph of an edge-list file being read: remembers where each node and edge was first given, so
    that a node declared twice with different types, or an edge repeated with another type, is refused
    (never silently overwritten)."""

    def __init__(self) -> None:
        self.graph = nx.Graph()
        self.node_line: dict[int, int] = {}
        self.edge_line: dict[tuple[int, int], int] = {}

    def node(self, v: int, kind: str | None, no: int) -> None:
        if v in self.node_line and self.graph.nodes[v].get(NODE_TYPE) != kind:
            raise ValueError(f"node {v} declared again with another type (first on line {self.node_line[v]})")
        self.node_line.setdefault(v, no)
        self.graph.add_node(v, **({NODE_TYPE: kind} if kind is not None else {}))

    def edge(self, u: int, v: int, kind: str | None, no: int) -> None:
        if u == v:
            raise ValueError("self-loop")
        key = (min(u, v), max(u, v))
        if key in self.edge_line and self.graph.edges[u, v].get("type") != kind:
            raise ValueError(f"edge {u} {v} given again with another type (first on line {self.edge_line[key]})")
        self.edge_line.setdefault(key, no)
        self.graph.add_edge(u, v, **({"type": kind} if kind is not None else {}))


def read_edgelist(path: str | os.PathLike[str]) -> list[nx.Graph]:
    """Read the typed edge-list format (or plain ``u v`` lines) into a list of graphs.

    Every malformed line is reported in one error with its 1-based line number: a non-integer node
    id, a self-loop, a node declared twice with different types, an edge repeated with another type.
    """
    p = Path(path)
    text = read_text(p, "edge-list file")
    graphs: list[_Builder] = []
    bad: list[str] = []
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if parts[0] == "graph" or not graphs:
            graphs.append(_Builder())
            if parts[0] == "graph":
                continue
        current = graphs[-1]
        try:
            if parts[0] == "node" and len(parts) in (2, 3):
                current.node(int(parts[1]), parts[2] if len(parts) == 3 else None, no)
            elif parts[0] == "edge" and len(parts) in (3, 4):
                current.edge(int(parts[1]), int(parts[2]), parts[3] if len(parts) == 4 else None, no)
            elif len(parts) in (2, 3) and parts[0].lstrip("-").isdigit():
                current.edge(int(parts[0]), int(parts[1]), None, no)
            else:
                raise ValueError("expected 'graph', 'node ID [TYPE]', 'edge U V [TYPE]' or 'U V'")
        except ValueError as exc:
            bad.append(f"line {no}: {raw.strip()!r} ({exc})")
    if bad:
        raise InvalidInputError(f"{p}: {len(bad)} malformed lines:\n  " + "\n  ".join(bad[:20]))
    out = [b.graph for b in graphs if b.graph.number_of_nodes() > 0]
    if not out:
        raise InvalidInputError(f"{p}: the file holds no graph (the dataset is empty)")
    return [nx.convert_node_labels_to_integers(g, ordering="sorted") for g in out]


def read_smiles(path: str | os.PathLike[str]) -> list[str]:
    """Read one SMILES per line (first whitespace-separated field; blank lines and ``#`` comments skipped).

    Every SMILES RDKit cannot parse is reported with its 1-based line number in one error.
    """
    from rdkit import Chem, RDLogger

    p = Path(path)
    text = read_text(p, "SMILES file")
    out, bad = [], []
    RDLogger.DisableLog("rdApp.*")
    try:
        for line_no, line in enumerate(text.splitlines(), start=1):
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            s = s.split()[0]
            if s.upper() == "SMILES" and not out and not bad:
                continue  # a header row
            if Chem.MolFromSmiles(s) is None:
                bad.append(f"line {line_no}: {s!r}")
            else:
                out.append(s)
    finally:
        RDLogger.EnableLog("rdApp.*")
    if bad:
        shown = "\n  ".join(bad[:20]) + (f"\n  ... and {len(bad) - 20} more" if len(bad) > 20 else "")
        raise InvalidInputError(f"{p}: {len(bad)} invalid SMILES:\n  {shown}")
    if not out:
        raise InvalidInputError(f"{p}: the file holds no SMILES (the dataset is empty)")
    return out


def read_graphs(path: str | os.PathLike[str]) -> list[nx.Graph]:
    """Read graphs by file type: ``.graphml`` (or a folder of them), ``.smi``/``.smiles`` (molecules),
    anything else as the edge-list format."""
    p = Path(path)
    if p.is_dir() or p.suffix == ".graphml":
        return read_graphml(p)
    if p.suffix in (".smi", ".smiles") or p.name.endswith(".smiles.txt"):
        from scigen.graphs.convert import smiles_to_graphs

        return smiles_to_graphs(read_smiles(p), source=str(p))
    return read_edgelist(p)
