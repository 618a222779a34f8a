"""iTransformer (Liu et al., ICLR 2024, "Inverted Transformers"): every variable is one token.

Per window: normalise each variable by its own mean/std over time (the paper's non-stationary
normalisation), embed each variable's whole context ``Linear(C → d)`` as one token, a Transformer
encoder over the ``N`` variate tokens (attention mixes variables, the feed-forward acts per token;
no positions, so permuting variables permutes outputs), project ``Linear(d → H)``, de-normalise.
Ours: PyTorch's ``TransformerEncoderLayer`` (pre-norm). :meth:`ITransformer.forward_with_tokens`
returns the tokens ``[B, N, 1, d]`` D3U conditions on.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

__all__ = ["ITransformer"]


class ITransformer(nn.Module):
    """``(X [B, C, N]) -> Ŷ [B, H, N]``; every width a constructor argument."""

    def __init__(self, n_vars: int, context: int, horizon: int, *, d_model: int = 128, n_heads: int = 8,
                 e_layers: int = 2, d_ff: int = 256, dropout: float = 0.1):
        super().__init__()
        self.embed = nn.Linear(context, d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, d_ff, dropout, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, e_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(d_model, horizon)

    def forward_with_tokens(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """``(Ŷ [B, H, N], tokens [B, N, 1, d_model])``."""
        mu = x.mean(1, keepdim=True).detach()
        sd = torch.sqrt(x.var(1, keepdim=True, unbiased=False) + 1e-5).detach()
        h = self.drop(self.embed(((x - mu) / sd).transpose(1, 2)))  # [B, N, d]
        h = self.norm(self.encoder(h))
        y = self.head(h).transpose(1, 2)  # [B, H, N]
        return y * sd + mu, h[:, :, None]

    def forward(self, x: Tensor) -> Tensor:
        return self.forward_with_tokens(x)[0]
