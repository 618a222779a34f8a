"""Pre-LayerNorm transformer block with optional adaLN-Zero conditioning.

Without conditioning: ``x ← x + Attn(LN(x)); x ← x + MLP(LN(x))`` (pre-LN, Xiong et al. 2020).
With ``cond_dim``: the DiT block (Peebles & Xie 2023, §3.2, Fig. 3): the LayerNorms have no affine
parameters and each sub-block is ``x ← x + gate · f(LN(x)·(1 + scale) + shift)`` with
``(shift, scale, gate)`` from a zero-initialised map of ``cond`` — the block is the identity at
initialisation. There are no positional encodings, so the block is permutation-equivariant over
tokens (permuting ``x`` and ``mask`` permutes the output).
"""

from __future__ import annotations

from torch import Tensor, nn

from scigen.core.nn._checks import check_cond
from scigen.core.nn.attention import SelfAttention
from scigen.core.nn.dropout import KeyedDropout
from scigen.core.nn.modulation import AdaLNZero, modulate

__all__ = ["TransformerBlock"]


class TransformerBlock(nn.Module):
    """``x [B, N, dim], cond [B, cond_dim] | None, mask [B, N] | None -> [B, N, dim]``.

    ``mask`` is boolean, True = valid token (see :class:`~scigen.core.nn.attention.SelfAttention`).
    """

    def __init__(
        self, dim: int, n_heads: int, *, mlp_ratio: float = 4.0, cond_dim: int | None = None,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.cond_dim = cond_dim
        affine = cond_dim is None
        self.norm1 = nn.LayerNorm(dim, elementwise_affine=affine)
        self.attn = SelfAttention(dim, n_heads, dropout=dropout)
        self.norm2 = nn.LayerNorm(dim, elementwise_affine=affine)
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(approximate="tanh"), KeyedDropout(dropout),
                                 nn.Linear(hidden, dim))
        self.ada = AdaLNZero(cond_dim, dim, n_blocks=2) if cond_dim else None

    def forward(self, x: Tensor, cond: Tensor | None = None, mask: Tensor | None = None) -> Tensor:
        cond = check_cond(cond, x.shape[0] if x.ndim else 0, self.cond_dim)
        if self.ada is None:
            x = x + self.attn(self.norm1(x), mask)
            return x + self.mlp(self.norm2(x))
        if cond is None:
            raise ValueError(f"cond of shape [B, {self.cond_dim}] is required: the block was built with cond_dim")
        sh1, sc1, g1, sh2, sc2, g2 = self.ada(cond)
        x = x + g1[:, None] * self.attn(modulate(self.norm1(x), sh1, sc1), mask)
        return x + g2[:, None] * self.mlp(modulate(self.norm2(x), sh2, sc2))
