"""What G2PT returns and writes: networkx graphs, PyG ``Data`` on request, and sample files.

PyG ``Data`` carry the node / edge type indices of the model's vocabulary (``node_types`` /
``edge_types`` lists attached, see :func:`scigen.graphs.convert.to_pyg`), so every sample of a model
indexes the same types. Files: ``.smi`` / ``.smiles`` (SMILES lines), ``.graphml`` (a new folder of
GraphML files, built beside and renamed into place by :func:`scigen.core.files.atomic_dir`), anything
else the typed edge-list format of :mod:`scigen.graphs.io`; every write is atomic.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import networkx as nx

from scigen.core.errors import InvalidInputError
from scigen.core.files import atomic_dir, atomic_write_text
from scigen.graphs.g2pt.tokenizer import Vocab

OUTPUTS = ("networkx", "pyg")
Output = Literal["networkx", "pyg"]


def to_output(graphs: list[nx.Graph | None], vocab: Vocab, output: str) -> list:
    """``graphs`` as networkx (as they are) or PyG ``Data`` (``None`` stays ``None``)."""
    if output not in OUTPUTS:
        raise InvalidInputError(f"output: expected one of {', '.join(OUTPUTS)}, got {output!r}")
    if output == "networkx":
        return graphs
    from scigen.graphs.convert import to_pyg

    return [None if g is None else to_pyg(g, vocab.node_types, vocab.edge_types) for g in graphs]


def write_samples(graphs: Sequence[nx.Graph | None], path: str | os.PathLike[str],
                  to_smiles: Callable[[list[nx.Graph]], list[str | None]]) -> Path:
    """Write the decodable ``graphs`` to ``path`` by its suffix (see the module docstring)."""
    from scigen.graphs.io import write_edgelist, write_graphml

    p = Path(path)
    if p.is_dir() and p.suffix != ".graphml":  # .graphml: atomic_dir refuses any existing path itself
        raise InvalidInputError(f"{p}: a folder of that name exists; the samples go to a file (.smi, edge list) "
                                "or to a new folder named *.graphml")
    graphs = [g for g in graphs if g is not None]
    if p.suffix in (".smi", ".smiles"):
        return atomic_write_text(p, "\n".join(s or "" for s in to_smiles(graphs)) + "\n")
    if p.suffix == ".graphml":
        with atomic_dir(p) as tmp:
            for i, g in enumerate(graphs):
                write_graphml(g, tmp / f"{i:06d}.graphml")
        return p
    return write_edgelist(graphs, p)
