"""What G2PT checks at its boundary beyond the graph systems' shared reader: :func:`check_vocab` refuses graphs
a trained vocabulary cannot encode. Reading (``as_graphs``), the output switch and the sample writer are
:mod:`scigen.graphs.boundary`, shared with SBGD and AGDiff (``as_graphs`` stays importable from here).
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx

from scigen.core.errors import InvalidInputError
from scigen.graphs.boundary import as_graphs
from scigen.graphs.g2pt.tokenizer import Vocab
from scigen.graphs.validate import edge_type, node_type

__all__ = ["as_graphs", "check_vocab"]


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
