"""PatchTST (Nie et al., ICLR 2023, "A Time Series is Worth 64 Words"): channel-independent patch transformer.

Per variable (channel independence, §3.1): RevIN → patches of ``patch_len`` every ``stride`` steps
(:func:`~scigen.timeseries.forecasters.patching.patchify`) → linear patch embedding + learned
positions → a Transformer encoder shared by all variables → flatten head ``Linear(n_patches·d → H)``
→ RevIN inverse. ``norm="layer"`` (ours, the default): PyTorch's ``TransformerEncoderLayer`` (LayerNorm,
pre-norm, ReLU) and a final LayerNorm; ``norm="batch"``: the paper's encoder layer (§3.1: "BatchNorm"; the
official ``TSTEncoderLayer`` defaults) — post-norm residual blocks ``BN(h + MHA(h))``, ``BN(h + FFN(h))``
with ``BatchNorm1d`` over ``d_model`` (statistics over the batch and the patches) and a GELU feed-forward,
no final norm (the official residual attention is not reproduced). :meth:`PatchTST.forward_with_tokens`
also returns the per-variable encoder tokens ``[B, N, n_patches, d]`` that D3U conditions on.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from scigen.timeseries.forecasters.patching import n_patches, patchify
from scigen.timeseries.forecasters.revin import RevIN

__all__ = ["BatchNormEncoderLayer", "PatchTST"]

NORMS = ("layer", "batch")


class _TokenBatchNorm(nn.Module):
    """``BatchNorm1d`` over the feature axis of ``[B, L, d]`` tokens (statistics over the batch and positions)."""

    def __init__(self, d_model: int):
        super().__init__()
        self.bn = nn.BatchNorm1d(d_model)

    def forward(self, h: Tensor) -> Tensor:
        return self.bn(h.transpose(1, 2)).transpose(1, 2)


class BatchNormEncoderLayer(nn.Module):
    """PatchTST's encoder layer (Nie et al. 2023, §3.1): ``h = BN(h + Drop(MHA(h)))``, ``h = BN(h + Drop(FFN(h)))``
    with ``FFN = Linear(d → d_ff) → GELU → Dropout → Linear(d_ff → d)`` (post-norm)."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, n_heads, dropout=dropout, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Dropout(dropout), nn.Linear(d_ff, d_model))
        self.norm_attn, self.norm_ff = _TokenBatchNorm(d_model), _TokenBatchNorm(d_model)
        self.drop_attn, self.drop_ff = nn.Dropout(dropout), nn.Dropout(dropout)

    def forward(self, h: Tensor) -> Tensor:
        h = self.norm_attn(h + self.drop_attn(self.attn(h, h, h, need_weights=False)[0]))
        return self.norm_ff(h + self.drop_ff(self.ff(h)))


class PatchTST(nn.Module):
    """``(X [B, C, N]) -> Ŷ [B, H, N]``; every width a constructor argument."""

    def __init__(self, n_vars: int, context: int, horizon: int, *, d_model: int = 128, n_heads: int = 8,
                 e_layers: int = 3, d_ff: int = 256, dropout: float = 0.1, patch_len: int = 16, stride: int = 8,
                 norm: str = "layer"):
        super().__init__()
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
        self.norm_kind = norm
        self.patch_len, self.stride, self.horizon = patch_len, stride, horizon
        self.n_patches = n_patches(context, patch_len, stride)
        self.revin = RevIN(n_vars)
        self.embed = nn.Linear(patch_len, d_model)
        self.pos = nn.Parameter(torch.empty(self.n_patches, d_model).uniform_(-0.02, 0.02))
        if norm == "layer":
            layer = nn.TransformerEncoderLayer(d_model, n_heads, d_ff, dropout, batch_first=True, norm_first=True)
            self.encoder = nn.TransformerEncoder(layer, e_layers, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(d_model)
        else:
            self.encoder = nn.Sequential(*(BatchNormEncoderLayer(d_model, n_heads, d_ff, dropout)
                                           for _ in range(e_layers)))
            self.norm = nn.Identity()
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(self.n_patches * d_model, horizon)

    def forward_with_tokens(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """``(Ŷ [B, H, N], tokens [B, N, n_patches, d_model])``."""
        B, _, N = x.shape
        z, stats = self.revin.normalize(x)
        p = patchify(z.transpose(1, 2).reshape(B * N, -1), self.patch_len, self.stride)  # [B·N, P, patch_len]
        h = self.norm(self.encoder(self.drop(self.embed(p) + self.pos)))  # [B·N, P, d]
        y = self.head(self.drop(h.flatten(1))).view(B, N, self.horizon).transpose(1, 2)
        return self.revin.denormalize(y, stats), h.view(B, N, self.n_patches, -1)

    def forward(self, x: Tensor) -> Tensor:
        return self.forward_with_tokens(x)[0]
