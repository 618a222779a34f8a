"""Conversions between networkx graphs (the package's native type), PyG ``Data``, RDKit molecules
and DGL graphs.

Conventions: nodes carry a string attribute ``"type"`` (element symbol with charge for atoms:
``"C"``, ``"N+"``, ``"O-"``), edges carry ``"type"`` (``"SINGLE"``, ``"DOUBLE"``, ``"TRIPLE"``,
``"AROMATIC"`` for bonds). Untyped graphs read as type ``"NODE"`` / ``"EDGE"``.

PyG: ``Data(x=LongTensor[n] node-type index, edge_index=LongTensor[2, 2m] with both directions,
edge_attr=LongTensor[2m] edge-type index, num_nodes=n)`` plus the vocabularies ``node_types`` and
``edge_types`` (lists of str) so the indices can be read back. DGL is optional: :func:`to_dgl` and
:func:`from_dgl` import it only when called.
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx
import torch

from scigen.core.errors import InvalidInputError
from scigen.graphs.validate import DEFAULT_EDGE_TYPE, DEFAULT_NODE_TYPE, check_graph, edge_type, node_type

BOND_TYPES = ("SINGLE", "DOUBLE", "TRIPLE", "AROMATIC")


# ------------------------------------------------------------------------------------------ PyG
def to_pyg(graph: nx.Graph, node_types: Sequence[str] | None = None, edge_types: Sequence[str] | None = None):
    """A ``torch_geometric.data.Data`` for ``graph`` (nodes renumbered ``0..n-1`` in node order).

    ``node_types`` / ``edge_types`` fix the index of each type (default: sorted types present). An
    unknown type raises ``InvalidInputError`` naming it.
    """
    from torch_geometric.data import Data

    check_graph(graph)
    nodes = list(graph.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    ntypes = [node_type(graph, v) for v in nodes]
    etypes = [edge_type(graph, u, v) for u, v in graph.edges]
    nvocab = list(node_types) if node_types is not None else sorted(set(ntypes))
    evocab = list(edge_types) if edge_types is not None else sorted(set(etypes) or {DEFAULT_EDGE_TYPE})
    nmap, emap = {t: i for i, t in enumerate(nvocab)}, {t: i for i, t in enumerate(evocab)}
    bad_n = sorted(set(ntypes) - set(nmap))
    bad_e = sorted(set(etypes) - set(emap))
    if bad_n or bad_e:
        raise InvalidInputError(f"graph has unknown node types {bad_n} / edge types {bad_e}; "
                                f"known node types {nvocab}, edge types {evocab}")
    src, dst, attr = [], [], []
    for (u, v), t in zip(graph.edges, etypes, strict=True):
        a, b = index[u], index[v]
        src += [a, b]
        dst += [b, a]
        attr += [emap[t], emap[t]]
    return Data(x=torch.tensor([nmap[t] for t in ntypes], dtype=torch.long),
                edge_index=torch.tensor([src, dst], dtype=torch.long).reshape(2, -1),
                edge_attr=torch.tensor(attr, dtype=torch.long), num_nodes=len(nodes),
                node_types=nvocab, edge_types=evocab)


def from_pyg(data, node_types: Sequence[str] | None = None, edge_types: Sequence[str] | None = None) -> nx.Graph:
    """Inverse of :func:`to_pyg`. ``edge_index`` must hold both directions of every edge.

    ``edge_index`` must be an integer tensor ``[2, E]`` with indices in ``0..num_nodes-1``; a ``Data``
    without one, with float indices or indices out of range is refused (never truncated or grown).

    Without vocabularies (neither argument nor ``data.node_types``) the graph is untyped. A ``Data``
    whose ``edge_index`` is not symmetric (a directed graph) raises ``InvalidInputError``.
    """
    ei = getattr(data, "edge_index", None)
    if not isinstance(ei, torch.Tensor):
        raise InvalidInputError("data has no edge_index (expected a LongTensor [2, E]; a graph without edges "
                                "has torch.zeros(2, 0, dtype=torch.long))" if ei is None else
                                f"data.edge_index: expected a LongTensor [2, E], got {type(ei).__name__}")
    if ei.dtype.is_floating_point or ei.dtype.is_complex or ei.dtype == torch.bool:
        raise InvalidInputError(f"data.edge_index: expected integer node indices, got dtype {ei.dtype}")
    if ei.ndim != 2 or ei.shape[0] != 2:
        raise InvalidInputError(f"data.edge_index: expected shape [2, E], got {tuple(ei.shape)}")
    if data.num_nodes is None:
        raise InvalidInputError("data: neither num_nodes nor x is set, so the number of nodes is unknown")
    n = int(data.num_nodes)
    ei = ei.long()
    if ei.numel() and (int(ei.min()) < 0 or int(ei.max()) >= n):
        bad = int(ei.min()) if int(ei.min()) < 0 else int(ei.max())
        raise InvalidInputError(f"data.edge_index: node {bad} is out of range 0..{n - 1} (num_nodes={n})")
    nvocab = node_types if node_types is not None else getattr(data, "node_types", None)
    evocab = edge_types if edge_types is not None else getattr(data, "edge_types", None)
    attr = getattr(data, "edge_attr", None)
    pairs = {}
    for k, (a, b) in enumerate(ei.t().tolist()):
        if a == b:
            raise InvalidInputError(f"data.edge_index: self-loop at node {a}; expected a simple graph")
        t = DEFAULT_EDGE_TYPE
        if attr is not None and evocab is not None:
            t = evocab[int(attr[k].reshape(-1).argmax()) if attr[k].numel() > 1 else int(attr[k])]
        pairs[(a, b)] = t
    missing = [(a, b) for (a, b) in pairs if (b, a) not in pairs]
    if missing:
        raise InvalidInputError(f"data.edge_index is not symmetric (e.g. {missing[:3]} lack their reverse): "
                                "expected an undirected graph with both directions stored")
    g = nx.Graph()
    x = getattr(data, "x", None)
    for i in range(n):
        if nvocab is not None and x is not None:
            xi = x[i]
            idx = int(xi.argmax()) if xi.numel() > 1 else int(xi)
            g.add_node(i, type=str(nvocab[idx]))
        else:
            g.add_node(i)
    for (a, b), t in pairs.items():
        if a < b:
            g.add_edge(a, b, type=t) if evocab is not None else g.add_edge(a, b)
    return g


# ----------------------------------------------------------------------------------------- RDKit
def _atom_type(atom) -> str:
    q = atom.GetFormalCharge()
    return atom.GetSymbol() + ("" if q == 0 else ("+" if q > 0 else "-") * abs(q) if abs(q) <= 1 else f"{q:+d}")


def _parse_atom_type(t: str) -> tuple[str, int]:
    if t.endswith(("+", "-")):
        sym = t.rstrip("+-")
        n = len(t) - len(sym)
        return sym, n if t.endswith("+") else -n
    for i in range(1, len(t)):
        if t[i] in "+-":
            return t[:i], int(t[i:])
    return t, 0


def mol_to_graph(mol, *, kekulize: bool = True) -> nx.Graph:
    """RDKit ``Mol`` → typed ``nx.Graph`` (heavy atoms; hydrogens stay implicit).

    ``kekulize=True`` writes aromatic rings as alternating SINGLE/DOUBLE bonds so that implicit
    hydrogens (e.g. pyrrole ``[nH]``) are recoverable from valence alone.
    """
    from rdkit import Chem

    if mol is None:
        raise InvalidInputError("mol: got None (an RDKit parse failure?)")
    mol = Chem.Mol(mol)
    if kekulize:
        Chem.Kekulize(mol, clearAromaticFlags=True)
    g = nx.Graph()
    for atom in mol.GetAtoms():
        g.add_node(atom.GetIdx(), type=_atom_type(atom))
    for bond in mol.GetBonds():
        g.add_edge(bond.GetBeginAtomIdx(), bond.GetEndAtomIdx(), type=str(bond.GetBondType()))
    return g


def graph_to_mol(graph: nx.Graph, *, sanitize: bool = True):
    """Typed ``nx.Graph`` → RDKit ``Mol`` (``None`` when ``sanitize`` fails, i.e. an invalid molecule).

    Unknown bond types raise ``InvalidInputError``; node types must be element symbols with an
    optional charge suffix (``"N+"``, ``"O-"``, ``"Fe+2"``).
    """
    from rdkit import Chem

    check_graph(graph)
    rw = Chem.RWMol()
    index = {}
    ptable = Chem.GetPeriodicTable()
    for v in graph.nodes:
        sym, q = _parse_atom_type(node_type(graph, v))
        try:
            z = ptable.GetAtomicNumber(sym)
        except RuntimeError:
            z = 0
        if z <= 0:
            raise InvalidInputError(f"graph node {v!r}: unknown element in node type {node_type(graph, v)!r}")
        atom = Chem.Atom(z)
        atom.SetFormalCharge(q)
        index[v] = rw.AddAtom(atom)
    for u, v in graph.edges:
        t = edge_type(graph, u, v)
        if t not in BOND_TYPES:
            raise InvalidInputError(f"graph edge ({u!r}, {v!r}): unknown bond type {t!r}; expected one of {BOND_TYPES}")
        rw.AddBond(index[u], index[v], getattr(Chem.BondType, t))
        if t == "AROMATIC":
            rw.GetBondBetweenAtoms(index[u], index[v]).SetIsAromatic(True)
            rw.GetAtomWithIdx(index[u]).SetIsAromatic(True)
            rw.GetAtomWithIdx(index[v]).SetIsAromatic(True)
    mol = rw.GetMol()
    if sanitize:
        try:
            Chem.SanitizeMol(mol)
        except Exception:  # RDKit raises several unrelated types for chemically invalid graphs
            return None
    return mol


def graph_to_smiles(graph: nx.Graph, *, largest_fragment: bool = False) -> str | None:
    """Canonical SMILES of a typed graph, ``None`` when it is not a valid molecule."""
    from rdkit import Chem

    mol = graph_to_mol(graph)
    if mol is None:
        return None
    if largest_fragment:
        frags = Chem.GetMolFrags(mol, asMols=True, sanitizeFrags=False)
        mol = max(frags, key=lambda m: m.GetNumAtoms())
    return Chem.MolToSmiles(mol)


def smiles_to_graphs(smiles: Sequence[str], *, kekulize: bool = True, source: str = "smiles") -> list[nx.Graph]:
    """Parse SMILES to typed graphs; every unparsable entry is reported (1-based line numbers)."""
    from rdkit import Chem, RDLogger

    if isinstance(smiles, str):
        smiles = [smiles]
    smiles = list(smiles)
    if not smiles:
        raise InvalidInputError(f"{source}: the dataset is empty (expected at least one SMILES)")
    RDLogger.DisableLog("rdApp.*")
    try:
        graphs, bad = [], []
        for line, s in enumerate(smiles, start=1):
            mol = Chem.MolFromSmiles(s) if isinstance(s, str) and s.strip() else None
            if mol is None or mol.GetNumAtoms() == 0:
                bad.append(f"line {line}: {s!r}")
                continue
            graphs.append(mol_to_graph(mol, kekulize=kekulize))
    finally:
        RDLogger.EnableLog("rdApp.*")
    if bad:
        shown = "\n  ".join(bad[:20]) + (f"\n  ... and {len(bad) - 20} more" if len(bad) > 20 else "")
        raise InvalidInputError(f"{source}: {len(bad)} invalid SMILES:\n  {shown}")
    return graphs


# ------------------------------------------------------------------------------------------- DGL
def to_dgl(graph: nx.Graph, node_types: Sequence[str] | None = None, edge_types: Sequence[str] | None = None):
    """A ``dgl.DGLGraph`` with both edge directions, ``ndata["type"]`` and ``edata["type"]`` indices.

    Imports DGL only here; raises ``ImportError`` with the install hint when it is missing.
    """
    try:
        import dgl
    except ImportError as exc:  # pragma: no cover - exercised only without dgl
        raise ImportError("to_dgl needs DGL: pip install dgl") from exc
    data = to_pyg(graph, node_types, edge_types)
    g = dgl.graph((data.edge_index[0], data.edge_index[1]), num_nodes=data.num_nodes)
    g.ndata["type"] = data.x
    g.edata["type"] = data.edge_attr
    return g


def from_dgl(g, node_types: Sequence[str] | None = None, edge_types: Sequence[str] | None = None) -> nx.Graph:
    """Inverse of :func:`to_dgl` (``g`` must store both directions of every edge)."""
    from torch_geometric.data import Data

    src, dst = g.edges()
    data = Data(x=g.ndata.get("type"), edge_index=torch.stack([src.long(), dst.long()]),
                edge_attr=g.edata.get("type"), num_nodes=g.num_nodes())
    return from_pyg(data, node_types, edge_types)


__all__ = ["BOND_TYPES", "DEFAULT_NODE_TYPE", "to_pyg", "from_pyg", "mol_to_graph", "graph_to_mol", "graph_to_smiles",
           "smiles_to_graphs", "to_dgl", "from_dgl"]
