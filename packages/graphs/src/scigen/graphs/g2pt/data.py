"""Training sequences for G2PT: a map-style dataset that re-tokenises on the fly.

Item ``i`` is graph ``i mod N`` under a node permutation and ordering tie-break drawn from a
generator seeded with ``(seed, i)``, so ``len = N·copies`` distinct augmentations exist, each a pure
function of its index (exact resume in :func:`scigen.core.train.fit`) and nothing is held in memory.
Items are right-padded with ``<pad>`` to ``length`` so the default collate stacks them; the loss
trims each batch to its longest row.
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx
import numpy as np
import torch
from torch.utils.data import Dataset

from scigen.graphs.g2pt.tokenizer import Vocab, encode


class SequenceDataset(Dataset):
    def __init__(self, graphs: Sequence[nx.Graph], vocab: Vocab, *, ordering: str, copies: int, seed: int,
                 length: int, targets: torch.Tensor | None = None, node_ids: str = "random"):
        self.graphs = graphs if isinstance(graphs, Sequence) else list(graphs)  # a GraphStore stays on disk
        self.vocab, self.ordering, self.copies, self.seed = vocab, ordering, copies, seed
        self.node_ids = node_ids
        self.length, self.targets = length, targets

    def __len__(self) -> int:
        return len(self.graphs) * self.copies

    def __getitem__(self, i: int):
        g = self.graphs[i % len(self.graphs)]
        seq = encode(g, self.vocab, ordering=self.ordering, rng=np.random.default_rng((self.seed, i)),
                     node_ids=self.node_ids)
        ids = torch.full((self.length,), self.vocab.pad, dtype=torch.long)
        ids[: len(seq)] = torch.tensor(seq[: self.length])
        if self.targets is None:
            return ids
        return ids, self.targets[i % len(self.graphs)]


def pad(seqs: Sequence[torch.Tensor], pad_id: int) -> torch.Tensor:
    """Right-pad 1-D id tensors with ``pad_id`` into ``[len(seqs), longest]``."""
    width = max(len(s) for s in seqs)
    out = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    for k, s in enumerate(seqs):
        out[k, : len(s)] = s
    return out
