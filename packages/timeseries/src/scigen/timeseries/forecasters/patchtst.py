"""PatchTST (Nie et al., ICLR 2023, "A Time Series is Worth 64 Words"): channel-independent patch transformer.

Per variable (channel independence, §3.1): RevIN → patches of ``patch_len`` every ``stride`` steps
(:func:`~scigen.timeseries.forecasters.patching.patchify`) → linear patch embedding + learned
positions → a Transformer encoder shared by all variables → flatten head ``Linear(n_patches·d → H)``
→ RevIN inverse. Ours: the encoder is PyTorch's ``TransformerEncoderLayer`` (LayerNorm, pre-norm)
where the paper uses BatchNorm. :meth:`PatchTST.forward_with_tokens` also returns the per-variable
encoder tokens ``[B, N, n_patches, d]`` that D3U conditions on.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from scigen.timeseries.forecasters.patching import n_patches, patchify
from scigen.timeseries.forecasters.revin import RevIN

__all__ = ["PatchTST"]


class PatchTST(nn.Module):
    """``(X [B, C, N]) -> Ŷ [B, H, N]``; every width a constructor argument."""

    def __init__(self, n_vars: int, context: int, horizon: int, *, d_model: int = 128, n_heads: int = 8,
                 e_layers: int = 3, d_ff: int = 256, dropout: float = 0.1, patch_len: int = 16, stride: int = 8):
        super().__init__()
        self.patch_len, self.stride, self.horizon = patch_len, stride, horizon
        self.n_patches = n_patches(context, patch_len, stride)
        self.revin = RevIN(n_vars)
        self.embed = nn.Linear(patch_len, d_model)
        self.pos = nn.Parameter(torch.empty(self.n_patches, d_model).uniform_(-0.02, 0.02))
        layer = nn.TransformerEncoderLayer(d_model, n_heads, d_ff, dropout, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, e_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
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
