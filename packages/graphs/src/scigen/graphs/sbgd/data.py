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
    #: ``[K]`` the graph (item of the batch) each block comes from
    graph: Tensor | None = None

    def to(self, device) -> BlockBatch:
        return BlockBatch(*(None if getattr(self, f.name) is None else getattr(self, f.name).to(device)
                            for f in dataclasses.fields(self)))


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
    """Partitioned, encoded training graphs (the partition is a function of the graph and ``seed``).

    In memory (a list of graphs) every graph is partitioned and encoded once, at construction. ``lazy``
    (default: for a :class:`~scigen.graphs.data.store.GraphStore`, graphs on disk) keeps only the graphs and
    partitions and encodes graph ``i`` when item ``i`` is asked for: the same item, memory for one batch."""

    def __init__(self, graphs: Sequence[nx.Graph], *, block_size: int, width: int, method: str,
                 node_types: Sequence[str], full_graph: bool, seed: int = 0, lazy: bool | None = None) -> None:
        self.lazy = bool(getattr(graphs, "checked_graphs", False)) if lazy is None else bool(lazy)
        self.block_size, self.width, self.method, self.seed = block_size, width, method, seed
        self.node_types, self.full_graph = list(node_types), full_graph
        if self.lazy:
            self.graphs, self.partitions, self.items = graphs, None, None
            return
        self.partitions = [self._partition(g) for g in graphs]
        self.items = [encode_blocks(g, p, width, node_types) for g, p in zip(graphs, self.partitions, strict=True)]

    def _partition(self, g: nx.Graph) -> list[list]:
        return [list(g.nodes)] if self.full_graph else partition(g, self.block_size, self.method, seed=self.seed)

    def block_sizes(self):
        """The block sizes of each graph's partition, graph by graph (lazy: partitioned again, one at a time)."""
        if not self.lazy:
            yield from ([len(b) for b in p] for p in self.partitions)
            return
        for g in self.graphs:
            yield [len(b) for b in self._partition(g)]

    def __len__(self) -> int:
        return len(self.graphs) if self.lazy else len(self.items)

    def __getitem__(self, index: int) -> dict:
        if not self.lazy:
            return self.items[index]
        g = self.graphs[index]
        return encode_blocks(g, self._partition(g), self.width, self.node_types)


def collate(items: Sequence[dict]) -> BlockBatch:
    """Stack the blocks of several graphs; pair indices are shifted to batch rows."""
    offsets, total = [], 0
    for it in items:
        offsets.append(total)
        total += it["x"].shape[0]
    cat = {k: torch.cat([it[k] for it in items]) for k in ("x", "node_mask", "context", "stats", "count", "possible")}
    i = torch.cat([it["i"] + o for it, o in zip(items, offsets, strict=True)])
    j = torch.cat([it["j"] + o for it, o in zip(items, offsets, strict=True)])
    graph = torch.cat([torch.full((it["x"].shape[0],), g, dtype=torch.int64) for g, it in enumerate(items)])
    return BlockBatch(cat["x"], cat["node_mask"], cat["context"], cat["stats"], i, j, cat["count"], cat["possible"],
                      graph)
