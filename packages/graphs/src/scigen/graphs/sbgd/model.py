"""SBGD's networks: the shared block score model and the inter-block (stochastic block) model.

Block state (one padded block of ``b`` slots, ``F`` node types): ``x = [A | X]`` of shape
``[b, b + F]``; ``A`` the adjacency with entries ``±1`` on valid off-diagonal pairs (``+1`` = edge)
and ``0`` on the diagonal and padding, ``X`` the one-hot node types mapped to ``±1`` (``0`` on
padding). :func:`project` is the orthogonal projection onto that subspace (symmetric, zero-diagonal,
masked); training noise and every sampler state live in it (the engine's ``project=``).

:class:`BlockScoreNet` is GDSS-style (Jo et al. ICML 2022, §3.2, eq. 6–7): a node score network
``s_X(X_t, A_t, t)`` (dense GCN layers on the noisy adjacency) and a separate adjacency score
network ``s_A(X_t, A_t, t)`` (its own GCN stack, then a symmetric edge MLP on ``h_i ⊙ h_j``,
``h_i + h_j``, ``A_t[i, j]`` and the two-hop weight ``(A_t²)[i, j]``) — ours in the details. Both
see the block context (block size / ``b``, ``1 / k``) and the time embedding; the output is the
``eps`` prediction (projected). Memory per block: ``O(b² · edge_hidden)``.

:class:`InterBlockNet` is ours: a block embedding ``e_i = MLP(stats_i)`` from each block's clean
statistics (size, density, mean degree, type shares, ``1 / k``) and the pair density
``p_ij = σ(MLP([e_i ⊙ e_j, e_i + e_j]))`` (symmetric); edges between blocks ``i, j`` are
``Bernoulli(p_ij)`` per node pair (the SBM of Holland et al. 1983 with learned block-pair
densities).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from scigen.graphs.dense import pair_mask

N_STATS_BASE = 4  # size / b, density, mean degree / b, 1 / k (plus F type shares)
N_CONTEXT = 2  # size / b, 1 / k
INV_K_COLUMN = 3  # the 1 / k column of block_stats


def project(x: Tensor, node_mask: Tensor) -> Tensor:
    """Orthogonal projection of ``[B, b, b + F]`` onto symmetric zero-diagonal masked ``A`` and masked ``X``."""
    b = node_mask.shape[1]
    a, feats = x[..., :b], x[..., b:]
    a = 0.5 * (a + a.transpose(1, 2)) * pair_mask(node_mask).to(x.dtype)
    feats = feats * node_mask[..., None].to(x.dtype)
    return torch.cat([a, feats], dim=-1)


def loss_mask(node_mask: Tensor, n_features: int) -> Tensor:
    """``[B, b, b + F]`` True where an entry of the state is free (valid pairs and valid node features)."""
    return torch.cat([pair_mask(node_mask), node_mask[..., None].expand(-1, -1, n_features)], dim=-1)


def time_embedding(t: Tensor, dim: int) -> Tensor:
    """Sinusoidal embedding of ``t ∈ [0, 1]`` (Vaswani et al. 2017 frequencies on ``1000·t``)."""
    half = dim // 2
    freqs = torch.exp(-math.log(10_000.0) * torch.arange(half, device=t.device, dtype=torch.float32) / max(half, 1))
    ang = 1000.0 * t.float()[:, None] * freqs[None]
    emb = torch.cat([ang.sin(), ang.cos()], dim=-1)
    return emb if emb.shape[-1] == dim else torch.cat([emb, torch.zeros_like(emb[:, :1])], dim=-1)


class DenseGCN(nn.Module):
    """GCN layers on a dense real-valued adjacency: ``h ← h + SiLU(W_s h + W_n (Â h) + c)`` with
    ``Â = A_t / n_valid`` (mean aggregation over the block's valid nodes)."""

    def __init__(self, d_in: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.inp = nn.Linear(d_in, hidden)
        self.self_w = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(layers))
        self.nbr_w = nn.ModuleList(nn.Linear(hidden, hidden, bias=False) for _ in range(layers))
        self.cond = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(layers))
        self.norm = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(layers))

    def forward(self, feats: Tensor, adj: Tensor, cond: Tensor, node_mask: Tensor) -> Tensor:
        m = node_mask[..., None].to(feats.dtype)
        n = m.sum(1, keepdim=True).clamp_min(1.0)
        h = self.inp(feats) * m
        for sw, nw, cw, ln in zip(self.self_w, self.nbr_w, self.cond, self.norm, strict=True):
            agg = torch.bmm(adj, h) / n
            h = h + torch.nn.functional.silu(ln(sw(h) + nw(agg) + cw(cond)[:, None, :])) * m
        return h


class BlockScoreNet(nn.Module):
    """GDSS-style eps network over padded blocks (module docstring); ``forward(x, t, node_mask, context)``."""

    def __init__(self, block_size: int, n_features: int, hidden: int, layers: int, edge_hidden: int) -> None:
        super().__init__()
        self.block_size, self.n_features, self.hidden = block_size, n_features, hidden
        d_in = n_features + 2  # X_t, row sum of A_t / n, |A_t| row mean
        self.t_mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.c_mlp = nn.Linear(N_CONTEXT, hidden)
        self.node_gcn = DenseGCN(d_in, hidden, layers)
        self.node_out = nn.Linear(hidden, n_features)
        self.adj_gcn = DenseGCN(d_in, hidden, layers)
        self.edge_in = nn.Linear(2 * hidden + 2, edge_hidden)
        self.edge_mlp = nn.Sequential(nn.SiLU(), nn.Linear(edge_hidden, edge_hidden), nn.SiLU(),
                                      nn.Linear(edge_hidden, 1))

    def forward(self, x: Tensor, t: Tensor, *, node_mask: Tensor, context: Tensor) -> Tensor:
        width = x.shape[1]  # blocks of any padded size (the full-graph baseline pads to the target size)
        adj, feats = x[..., :width], x[..., width:]
        m = node_mask.to(x.dtype)
        n = m.sum(1, keepdim=True).clamp_min(1.0)
        deg = adj.sum(-1) / n
        absdeg = adj.abs().sum(-1) / n
        inp = torch.cat([feats, deg[..., None], absdeg[..., None]], dim=-1)
        cond = self.t_mlp(time_embedding(t, self.hidden)) + self.c_mlp(context)
        h_x = self.node_gcn(inp, adj, cond, node_mask)
        eps_x = self.node_out(h_x)
        h = self.adj_gcn(inp, adj, cond, node_mask)
        two_hop = torch.bmm(adj, adj) / n[..., None]
        pair = torch.cat([h[:, :, None, :] * h[:, None, :, :], h[:, :, None, :] + h[:, None, :, :],
                          adj[..., None], two_hop[..., None]], dim=-1)
        eps_a = self.edge_mlp(self.edge_in(pair)).squeeze(-1)
        return project(torch.cat([eps_a, eps_x], dim=-1), node_mask)


def block_stats(adj01: Tensor, types01: Tensor, node_mask: Tensor, inv_k: Tensor) -> Tensor:
    """``[B, 4 + F]`` clean-block statistics for the inter-block model (``adj01`` in {0, 1})."""
    b = node_mask.shape[1]
    m = node_mask.to(adj01.dtype)
    n = m.sum(1)
    edges = adj01.sum((1, 2)) / 2
    pairs = (n * (n - 1) / 2).clamp_min(1.0)
    type_share = (types01 * m[..., None]).sum(1) / n.clamp_min(1.0)[:, None]
    return torch.cat([(n / b)[:, None], (edges / pairs)[:, None], (2 * edges / n.clamp_min(1.0) / b)[:, None],
                      inv_k[:, None], type_share], dim=-1)


class InterBlockNet(nn.Module):
    """Block-pair edge densities from block embeddings (module docstring)."""

    def __init__(self, n_features: int, embedding: int) -> None:
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(N_STATS_BASE + n_features, embedding), nn.SiLU(),
                                   nn.Linear(embedding, embedding))
        self.pair = nn.Sequential(nn.Linear(2 * embedding, embedding), nn.SiLU(), nn.Linear(embedding, 1))
        nn.init.constant_(self.pair[-1].bias, -4.0)  # sparse start: p ≈ 0.018

    def logits(self, stats: Tensor, i: Tensor, j: Tensor) -> Tensor:
        """Logits of ``p_ij`` for block index pairs ``(i[p], j[p])`` into ``stats`` rows."""
        e = self.embed(stats)
        return self.pair(torch.cat([e[i] * e[j], e[i] + e[j]], dim=-1)).squeeze(-1)


class SBGDNet(nn.Module):
    """The two trained parts in one module (what ``fit`` trains and ``save`` stores)."""

    def __init__(self, block_size: int, n_features: int, hidden: int, layers: int, edge_hidden: int,
                 embedding: int) -> None:
        super().__init__()
        self.score = BlockScoreNet(block_size, n_features, hidden, layers, edge_hidden)
        self.inter = InterBlockNet(n_features, embedding)

    def forward(self, x: Tensor, t: Tensor, *, node_mask: Tensor, context: Tensor) -> Tensor:
        return self.score(x, t, node_mask=node_mask, context=context)
