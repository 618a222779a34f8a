"""The G2PT network: a GPT-2-style decoder (Radford et al. 2019; G2PT §3.2 and Table 7).

Pre-LayerNorm blocks without biases, GELU MLP with 4× expansion, causal
``scaled_dot_product_attention``, learned absolute positions, the LM head tied to the token
embedding, GPT-2 initialisation (std 0.02, residual projections scaled by ``1/sqrt(2L)``), no
dropout. Sizes: ``small`` 6 layers / 6 heads / 384, ``base`` 12 / 12 / 768, ``large`` 24 / 16 / 1024
(G2PT Table 7) and ``tiny`` 2 / 2 / 64 for CPU tests and demos.

``forward(ids, cache=None, start=0)`` returns ``(logits [B, T, V], hidden [B, T, d], new_cache)``;
with ``cache`` from the previous call, ``ids`` holds the next token(s) at positions ``start..``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

SIZES: dict[str, tuple[int, int, int]] = {
    "tiny": (2, 2, 64),
    "small": (6, 6, 384),
    "base": (12, 12, 768),
    "large": (24, 16, 1024),
}


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model: int, n_head: int):
        super().__init__()
        if d_model % n_head:
            raise ValueError(f"d_model={d_model} must be divisible by n_head={n_head}")
        self.n_head = n_head
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x: Tensor, cache: tuple[Tensor, Tensor] | None) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.n_head, d // self.n_head).transpose(1, 2) for z in (q, k, v))
        if cache is not None:
            k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
        if cache is None or t == 1:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=cache is None and t > 1)
        else:  # several new tokens after a cache: mask keys beyond each query's position
            past = k.shape[2] - t
            mask = torch.ones(t, k.shape[2], dtype=torch.bool, device=x.device).tril(past)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.proj(y.transpose(1, 2).reshape(b, t, d)), (k, v)


class Block(nn.Module):
    def __init__(self, d_model: int, n_head: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model, bias=False)
        self.attn = CausalSelfAttention(d_model, n_head)
        self.ln2 = nn.LayerNorm(d_model, bias=False)
        self.fc = nn.Linear(d_model, 4 * d_model, bias=False)
        self.out = nn.Linear(4 * d_model, d_model, bias=False)

    def forward(self, x: Tensor, cache=None):
        a, new = self.attn(self.ln1(x), cache)
        x = x + a
        return x + self.out(F.gelu(self.fc(self.ln2(x)))), new


class G2PTNet(nn.Module):
    """Decoder-only transformer over G2PT tokens (see module docstring)."""

    def __init__(self, vocab_size: int, block_size: int, n_layer: int, n_head: int, d_model: int):
        super().__init__()
        self.vocab_size, self.block_size = vocab_size, block_size
        self.wte = nn.Embedding(vocab_size, d_model)
        self.wpe = nn.Embedding(block_size, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_head) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(d_model, bias=False)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight  # tied
        self.apply(self._init)
        for name, p in self.named_parameters():
            if name.endswith(("attn.proj.weight", "out.weight")):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * n_layer))

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, 0.0, 0.02)

    def forward(self, ids: Tensor, cache: list | None = None, start: int = 0):
        b, t = ids.shape
        if start + t > self.block_size:
            raise ValueError(f"sequence of {start + t} tokens exceeds block_size={self.block_size}")
        pos = torch.arange(start, start + t, device=ids.device)
        x = self.wte(ids) + self.wpe(pos)
        new_cache = []
        for i, blk in enumerate(self.blocks):
            x, kv = blk(x, None if cache is None else cache[i])
            new_cache.append(kv)
        h = self.ln_f(x)
        return self.lm_head(h), h, new_cache


def next_token_loss(net: G2PTNet, ids: Tensor, pad: int) -> Tensor:
    """Mean next-token cross-entropy over non-pad targets (G2PT eq. 1); batches trimmed to the longest row."""
    width = int((ids != pad).sum(1).max())
    ids = ids[:, :width]
    logits, _, _ = net(ids[:, :-1])
    target = ids[:, 1:]
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1), ignore_index=pad)


class PropertyHead(nn.Module):
    """G2PT property prediction (§4.2): the last non-pad token's hidden state → MLP → ``n_targets``."""

    def __init__(self, net: G2PTNet, n_targets: int = 1, hidden: int = 128):
        super().__init__()
        self.net = net
        d = net.wte.weight.shape[1]
        self.head = nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, n_targets))

    def forward(self, ids: Tensor, pad: int) -> Tensor:
        lengths = (ids != pad).sum(1)
        ids = ids[:, : int(lengths.max())]
        _, h, _ = self.net(ids)
        last = h[torch.arange(ids.shape[0], device=ids.device), lengths - 1]
        return self.head(last)
