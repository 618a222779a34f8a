"""A grammar mask for G2PT sampling: only tokens that keep the sequence a well-formed, decodable
graph within ``max_len`` tokens get non-zero probability.

The released G2PT sampler has no end token and drops sequences that fail to decode; with this mask
every sample ends with ``<eog>`` within ``max_len`` and decodes to a simple graph:

* node block: ``<boc>`` → node type → ``IDX_k`` with ``k`` the next free index → ``<sepc>`` (while
  fewer than ``max_nodes`` nodes and the length budget allows one more node) or ``<eoc>``;
* edge block: ``<bog>`` → ``IDX_a`` (an existing node with a free partner) or ``<eog>``;
  ``IDX_b`` (an existing node ≠ a not yet joined to a) → edge type → ``<sepg>`` (while an edge
  is still possible and the budget allows one) or ``<eog>``; then only ``<pad>``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from scigen.core.errors import InvalidInputError
from scigen.graphs.g2pt.tokenizer import Vocab

START, NODE_TYPE, NODE_IDX, AFTER_NODE, BOG, EDGE_FIRST, EDGE_SRC, EDGE_DST, EDGE_TYPE, AFTER_EDGE, DONE = range(11)


class _Row:
    __slots__ = ("phase", "n", "adj", "deg", "m", "src", "length")

    def __init__(self, max_nodes: int):
        self.phase, self.n, self.m, self.src, self.length = START, 0, 0, -1, 0
        self.adj = np.zeros((max_nodes, max_nodes), dtype=bool)
        self.deg = np.zeros(max_nodes, dtype=np.int64)


class GrammarMask:
    """Per-row grammar state for a batch of ``batch`` sequences of at most ``max_len`` tokens."""

    def __init__(self, vocab: Vocab, batch: int, max_len: int):
        if max_len < 8:
            raise InvalidInputError(f"max_len: a graph needs at least 8 tokens, got {max_len}")
        self.vocab, self.max_len = vocab, int(max_len)
        self.rows = [_Row(vocab.max_nodes) for _ in range(batch)]
        v = len(vocab)
        self._node_types = np.zeros(v, dtype=bool)
        self._node_types[vocab.node0:vocab.edge0] = True
        self._edge_types = np.zeros(v, dtype=bool)
        self._edge_types[vocab.edge0:] = True

    @property
    def done(self) -> torch.Tensor:
        return torch.tensor([r.phase == DONE for r in self.rows])

    def _allowed(self, r: _Row) -> np.ndarray:
        vb = self.vocab
        a = np.zeros(len(vb), dtype=bool)
        room = self.max_len - r.length
        if r.phase == START:
            a[vb.boc] = True
        elif r.phase == NODE_TYPE:
            a |= self._node_types
        elif r.phase == NODE_IDX:
            a[vb.idx0 + r.n] = True
        elif r.phase == AFTER_NODE:
            a[vb.eoc] = True
            if r.n < vb.max_nodes and room >= 3 + 3:
                a[vb.sepc] = True
        elif r.phase == BOG:
            a[vb.bog] = True
        elif r.phase in (EDGE_FIRST, EDGE_SRC):
            if r.phase == EDGE_FIRST:
                a[vb.eog] = True
            if room >= 3 + 1:
                free = np.nonzero(r.deg[: r.n] < r.n - 1)[0]
                a[vb.idx0 + free] = True
        elif r.phase == EDGE_DST:
            ok = ~r.adj[r.src, : r.n]
            ok[r.src] = False
            a[vb.idx0 + np.nonzero(ok)[0]] = True
        elif r.phase == EDGE_TYPE:
            a |= self._edge_types
        elif r.phase == AFTER_EDGE:
            a[vb.eog] = True
            if r.m < r.n * (r.n - 1) // 2 and room >= 4 + 1:
                a[vb.sepg] = True
        else:
            a[vb.pad] = True
        return a

    def mask(self) -> torch.Tensor:
        """``bool [batch, vocab]``: True where a token is allowed next."""
        return torch.from_numpy(np.stack([self._allowed(r) for r in self.rows]))

    def step(self, tokens: Sequence[int] | torch.Tensor) -> None:
        """Advance every row by its token; raises ``InvalidInputError`` for a token the grammar forbids."""
        toks = tokens.tolist() if isinstance(tokens, torch.Tensor) else list(tokens)
        vb = self.vocab
        for i, (r, t) in enumerate(zip(self.rows, toks, strict=True)):
            t = int(t)
            if not self._allowed(r)[t]:
                raise InvalidInputError(f"row {i}: token {vb.tokens[t]!r} is not allowed at position {r.length} "
                                        f"(grammar phase {r.phase})")
            r.length += 1
            if r.phase == START:
                r.phase = NODE_TYPE
            elif r.phase == NODE_TYPE:
                r.phase = NODE_IDX
            elif r.phase == NODE_IDX:
                r.n += 1
                r.phase = AFTER_NODE
            elif r.phase == AFTER_NODE:
                r.phase = NODE_TYPE if t == vb.sepc else BOG
            elif r.phase == BOG:
                r.phase = EDGE_FIRST
            elif r.phase in (EDGE_FIRST, EDGE_SRC):
                if t == vb.eog:
                    r.phase = DONE
                else:
                    r.src, r.phase = t - vb.idx0, EDGE_DST
            elif r.phase == EDGE_DST:
                b = t - vb.idx0
                r.adj[r.src, b] = r.adj[b, r.src] = True
                r.deg[r.src] += 1
                r.deg[b] += 1
                r.m += 1
                r.phase = EDGE_TYPE
            elif r.phase == EDGE_TYPE:
                r.phase = AFTER_EDGE
            elif r.phase == AFTER_EDGE:
                r.phase = EDGE_SRC if t == vb.sepg else DONE
