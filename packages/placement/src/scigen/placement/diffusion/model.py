"""The ChipDiffusion denoiser (Lee et al., ICML 2025, §4.2 and App. A, "AttGNN"): eps prediction.

Per object the input is (x_t [2], size [2], port flag [1]) embedded linearly plus sinusoidal features
of the four spatial inputs. The trunk repeats ``n_blocks`` times:

1. a residual GNN block: ``gnn_layers`` GATv2 layers (Brody et al. 2022) on the netlist graph with the
   pin offsets as 4-d edge features, each preceded by GroupNorm(1) and fed the sizes again, FiLM
   time conditioning on the last one;
2. a residual MLP;
3. an attention block: GATv2 -> FiLM -> ReLU plus a linear map of the raw (size, x_t) inputs, then
   global multi-head self-attention over all objects (``scaled_dot_product_attention``) and a
   feed-forward network, residual;
4. a residual MLP.

The output is a linear map to 2 numbers per object (the noise ``eps``). A batch ``x [B, V, 2]`` of
placements of one circuit is run as one disjoint graph of B copies (the paper's batch of copies).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch_geometric.nn import GATv2Conv

from scigen.core.nn import FiLM, SelfAttention, SinusoidalTimeEmbedding

__all__ = ["AttGNN", "GraphInputs"]


class GraphInputs:
    """The conditioning of one circuit: sizes [V, 2], port mask [V], edges [2, E], edge_attr [E, 4]."""

    def __init__(self, size: Tensor, is_port: Tensor, edge_index: Tensor, edge_attr: Tensor) -> None:
        self.size, self.is_port = size.float(), is_port.bool()
        self.edge_index, self.edge_attr = edge_index.long(), edge_attr.float()

    @classmethod
    def from_graph(cls, g) -> GraphInputs:
        return cls(g.x, g.is_ports, g.edge_index, g.edge_attr)

    def to(self, device) -> GraphInputs:
        return GraphInputs(self.size.to(device), self.is_port.to(device), self.edge_index.to(device),
                           self.edge_attr.to(device))

    def batched_edges(self, b: int) -> tuple[Tensor, Tensor]:
        v = self.size.shape[0]
        off = (torch.arange(b, device=self.edge_index.device) * v).repeat_interleave(self.edge_index.shape[1])
        return self.edge_index.repeat(1, b) + off, self.edge_attr.repeat(b, 1)


def _sinusoid(x: Tensor, n: int) -> Tensor:
    """[..., k] -> [..., k·n]: cos/sin at frequencies ``exp(log(100)·j/(n/2))``, j < n/2."""
    half = n // 2
    freqs = torch.exp(math.log(100.0) * torch.arange(half, device=x.device, dtype=x.dtype) / half)
    a = x[..., None] * freqs
    return torch.cat([a.cos(), a.sin()], -1).flatten(-2)


class _MLP(nn.Module):
    def __init__(self, d: int, mult: int = 4) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.net = nn.Sequential(nn.Linear(d, mult * d), nn.GELU(), nn.Linear(mult * d, d))

    def forward(self, h: Tensor) -> Tensor:
        return h + self.net(self.norm(h))


class _ResGNN(nn.Module):
    def __init__(self, d: int, cond: int, layers: int, heads: int) -> None:
        super().__init__()
        self.norms = nn.ModuleList([nn.GroupNorm(1, d) for _ in range(layers)])
        self.convs = nn.ModuleList([GATv2Conv(d + 2, d // heads, heads=heads, edge_dim=4, concat=True)
                                    for _ in range(layers)])
        self.film = FiLM(cond, d)
        self.out = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d))

    def forward(self, h: Tensor, size: Tensor, ei: Tensor, ea: Tensor, c: Tensor, b: int) -> Tensor:
        z = h
        for k, (norm, conv) in enumerate(zip(self.norms, self.convs, strict=True)):
            z = conv(torch.cat([norm(z), size], -1), ei, ea)
            if k == len(self.convs) - 1:
                z = self.film(z.reshape(b, -1, z.shape[-1]), c).reshape(z.shape)
            z = torch.relu(z)
        return h + self.out(z)


class _AttBlock(nn.Module):
    def __init__(self, d: int, cond: int, heads: int, att_heads: int) -> None:
        super().__init__()
        self.norm = nn.GroupNorm(1, d)
        self.conv = GATv2Conv(d + 2, d // heads, heads=heads, edge_dim=4, concat=True)
        self.film = FiLM(cond, d)
        self.raw = nn.Linear(4, d)
        self.att_norm = nn.LayerNorm(d)
        self.att = SelfAttention(d, att_heads)
        self.ff_norm = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))
        self.out = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d))

    def forward(self, h, size, raw, ei, ea, c, b):
        z = self.conv(torch.cat([self.norm(h), size], -1), ei, ea)
        z = torch.relu(self.film(z.reshape(b, -1, z.shape[-1]), c)) + self.raw(raw).reshape(b, -1, z.shape[-1])
        z = z + self.att(self.att_norm(z))
        z = z + self.ff(self.ff_norm(z))
        return h + self.out(z.reshape(h.shape))


class AttGNN(nn.Module):
    """``forward(x [B, V, 2], t [B], graph: GraphInputs) -> eps [B, V, 2]`` (module docstring)."""

    def __init__(self, hidden: int = 256, n_blocks: int = 3, gnn_layers: int = 2, heads: int = 4,
                 att_heads: int = 4, time_dim: int = 32, enc_dim: int = 32) -> None:
        super().__init__()
        if hidden % heads or hidden % att_heads:
            raise ValueError(f"hidden ({hidden}) must be divisible by heads ({heads}) and att_heads ({att_heads})")
        self.enc_dim = enc_dim
        self.time = nn.Sequential(SinusoidalTimeEmbedding(time_dim, scale=1.0), nn.Linear(time_dim, hidden),
                                  nn.SiLU(), nn.Linear(hidden, hidden))
        self.inp = nn.Linear(5, hidden)
        self.inp_sin = nn.Linear(4 * enc_dim, hidden)
        self.gnn = nn.ModuleList([_ResGNN(hidden, hidden, gnn_layers, heads) for _ in range(n_blocks)])
        self.mlp1 = nn.ModuleList([_MLP(hidden) for _ in range(n_blocks)])
        self.attn = nn.ModuleList([_AttBlock(hidden, hidden, heads, att_heads) for _ in range(n_blocks)])
        self.mlp2 = nn.ModuleList([_MLP(hidden) for _ in range(n_blocks)])
        self.head = nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, 2))

    def forward(self, x: Tensor, t: Tensor, graph: GraphInputs) -> Tensor:
        b, v, _ = x.shape
        size = graph.size.to(x.dtype).expand(b, v, 2)
        port = graph.is_port.to(x.dtype).expand(b, v)[..., None]
        spatial = torch.cat([x, size], -1)
        h = self.inp(torch.cat([spatial, port], -1)) + self.inp_sin(_sinusoid(spatial, self.enc_dim))
        h = h.reshape(b * v, -1)
        c = self.time(t.reshape(-1).expand(b))
        s = size.reshape(b * v, 2)
        raw = spatial.reshape(b * v, 4)
        ei, ea = graph.batched_edges(b)
        for gnn, m1, att, m2 in zip(self.gnn, self.mlp1, self.attn, self.mlp2, strict=True):
            h = m1(gnn(h, s, ei, ea, c, b))
            h = m2(att(h, s, raw, ei, ea, c, b))
        return self.head(h).reshape(b, v, 2)
