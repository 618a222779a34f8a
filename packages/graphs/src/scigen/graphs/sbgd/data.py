"""Training data in block space: each graph partitioned, each block padded to ``b`` slots.

One item per training graph (its ``k`` blocks, their clean statistics and the block-pair edge
counts); :func:`collate` stacks the blocks of a batch of graphs into ``[K, b, b + F]``, so the
memory of a training step is ``O(K · b²)`` — linear in the graph size for a fixed ``b``. The
full-graph baseline is the same code with one block per graph padded to the largest graph.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import networkx as nx
import torch
from torch import Tensor

from scigen.graphs.sbgd.blocks import decompose
from scigen.graphs.sbgd.model import block_stats
from scigen.graphs.sbgd.partitioning import partition
from scigen.graphs.validate import node_type


@dataclasses.dataclass
class BlockBatch:
    """Blocks of one batch: ``x [K, W, W + F]`` (±1 encoding), ``node_mask [K, W]``, ``context [K, 2]``,
    ``stats [K, 4 + F]``, block pairs ``i, j`` (rows of the batch) with edge ``count`` and ``possible``
    node pairs ``n_i · n_j``."""

    x: Tensor
    node_mask: Tensor
    context: Tensor
    stats: Tensor
    i: Tensor
    j: Tensor
    count: Tensor
    possible: Tensor

    def to(self, device) -> BlockBatch:
        return BlockBatch(*(getattr(self, f.name).to(device) for f in dataclasses.fields(self)))


def encode_blocks(graph: nx.Graph, blocks: Sequence[Sequence], width: int, node_types: Sequence[str]) -> dict:
    """The tensors of one graph's blocks (see :class:`BlockBatch`; pairs with local block indices)."""
    parts = decompose(graph, blocks)
    k, f = len(blocks), len(node_types)
    tindex = {t: i for i, t in enumerate(node_types)}
    x = torch.zeros(k, width, width + f)
    mask = torch.zeros(k, width, dtype=torch.bool)
    adj01 = torch.zeros(k, width, width)
    types01 = torch.zeros(k, width, f)
    for bi, (blk, sub) in enumerate(zip(parts.blocks, parts.subgraphs, strict=True)):
        n = len(blk)
        mask[bi, :n] = True
        pos = {v: i for i, v in enumerate(blk)}
        for u, v in sub.edges:
            adj01[bi, pos[u], pos[v]] = adj01[bi, pos[v], pos[u]] = 1.0
        for v in blk:
            types01[bi, pos[v], tindex[node_type(graph, v)]] = 1.0
        a = 2 * adj01[bi, :n, :n] - 1
        a.fill_diagonal_(0.0)
        x[bi, :n, :n] = a
        x[bi, :n, width:] = 2 * types01[bi, :n] - 1
    inv_k = torch.full((k,), 1.0 / k)
    sizes = mask.sum(1).float()
    context = torch.stack([sizes / width, inv_k], dim=-1)
    stats = block_stats(adj01, types01, mask, inv_k)
    ii, jj, cnt, poss = [], [], [], []
    for a in range(k):
        for b in range(a + 1, k):
            ii.append(a)
            jj.append(b)
            cnt.append(len(parts.inter.get((a, b), ())))
            poss.append(len(blocks[a]) * len(blocks[b]))
    return {"x": x, "node_mask": mask, "context": context, "stats": stats, "i": torch.tensor(ii, dtype=torch.long),
            "j": torch.tensor(jj, dtype=torch.long), "count": torch.tensor(cnt, dtype=torch.float32),
            "possible": torch.tensor(poss, dtype=torch.float32)}


class BlockDataset(torch.utils.data.Dataset):
    """Partitioned, encoded training graphs (the partition is fixed once, at construction)."""

    def __init__(self, graphs: Sequence[nx.Graph], *, block_size: int, width: int, method: str,
                 node_types: Sequence[str], full_graph: bool, seed: int = 0) -> None:
        self.partitions = [[list(g.nodes)] if full_graph else partition(g, block_size, method, seed=seed)
                           for g in graphs]
        self.items = [encode_blocks(g, p, width, node_types) for g, p in zip(graphs, self.partitions, strict=True)]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> dict:
        return self.items[index]


def collate(items: Sequence[dict]) -> BlockBatch:
    """Stack the blocks of several graphs; pair indices are shifted to batch rows."""
    offsets, total = [], 0
    for it in items:
        offsets.append(total)
        total += it["x"].shape[0]
    cat = {k: torch.cat([it[k] for it in items]) for k in ("x", "node_mask", "context", "stats", "count", "possible")}
    i = torch.cat([it["i"] + o for it, o in zip(items, offsets, strict=True)])
    j = torch.cat([it["j"] + o for it, o in zip(items, offsets, strict=True)])
    return BlockBatch(cat["x"], cat["node_mask"], cat["context"], cat["stats"], i, j, cat["count"], cat["possible"])
