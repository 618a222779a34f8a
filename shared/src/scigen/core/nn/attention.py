"""Multi-head self-attention on :func:`torch.nn.functional.scaled_dot_product_attention`.

Computes ``softmax(Q Kᵀ / √d_head + M) V`` per head (Vaswani et al. 2017, Eq. 1), where ``M`` is
``-inf`` on padded keys, followed by an output projection. Attention dropout (on the weights) is keyed by
sample under per-sample random streams (:mod:`scigen.core.nn.dropout`), computed explicitly then.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from scigen.core.errors import InvalidInputError
from scigen.core.nn._checks import check_tensor
from scigen.core.nn.dropout import keyed_dropout
from scigen.core.streams import current_streams

__all__ = ["SelfAttention"]


class SelfAttention(nn.Module):
    """``x [B, N, dim], mask [B, N] | None -> [B, N, dim]``.

    ``mask`` is boolean with **True = a valid token** (the engine's convention: True counts). Padded
    keys receive zero attention weight, so the outputs at valid positions do not depend on the
    content of padded positions. Outputs at padded positions are computed (they attend to the valid
    tokens) and should be ignored by the caller. A sample with no valid token at all attends to
    every token, so its output stays finite.
    """

    def __init__(self, dim: int, n_heads: int, *, bias: bool = True, dropout: float = 0.0) -> None:
        super().__init__()
        if dim % n_heads:
            raise InvalidInputError(f"dim ({dim}) must be divisible by n_heads ({n_heads})")
        self.dim, self.n_heads, self.dropout = dim, n_heads, dropout
        self.qkv = nn.Linear(dim, 3 * dim, bias=bias)
        self.proj = nn.Linear(dim, dim, bias=bias)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        check_tensor(x, "x", ndim=3, last=self.dim)
        B, N, D = x.shape
        attn_mask = None
        if mask is not None:
            if not isinstance(mask, Tensor) or mask.dtype != torch.bool or mask.shape != (B, N):
                raise InvalidInputError(
                    f"mask must be a bool tensor of shape [B, N] = [{B}, {N}] (True = valid token), got "
                    f"{getattr(mask, 'dtype', type(mask).__name__)} of shape {tuple(getattr(mask, 'shape', ()))}"
                )
            mask = mask | ~mask.any(dim=-1, keepdim=True)  # all-padding sample: attend everywhere
            attn_mask = mask[:, None, None, :]  # [B, 1, 1, N]: broadcast over heads and queries
        q, k, v = self.qkv(x).reshape(B, N, 3, self.n_heads, D // self.n_heads).permute(2, 0, 3, 1, 4)
        p = self.dropout if self.training else 0.0
        if p > 0.0 and current_streams() is not None:  # per-sample streams: the attention-weight mask keyed by sample
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(D // self.n_heads)
            if attn_mask is not None:
                scores = scores.masked_fill(~attn_mask, float("-inf"))
            out = keyed_dropout(torch.softmax(scores, dim=-1), p) @ v
        else:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=p)
        return self.proj(out.transpose(1, 2).reshape(B, N, D))
