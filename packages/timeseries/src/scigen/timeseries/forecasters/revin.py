"""Reversible instance normalisation (RevIN, Kim et al., ICLR 2022, Eq. 1-3), as PatchTST uses it.

Each window is normalised per variable by its own mean and standard deviation (over time), an
optional learned per-variable affine map is applied, and the forecast is mapped back by the inverse.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

__all__ = ["RevIN"]


class RevIN(nn.Module):
    """``normalize(x [B, L, N])`` stores the statistics; ``denormalize(y [B, H, N])`` inverts them."""

    def __init__(self, n_vars: int, affine: bool = True, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(n_vars)) if affine else None
        self.bias = nn.Parameter(torch.zeros(n_vars)) if affine else None

    def normalize(self, x: Tensor) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """``((x − μ)/σ·w + b, (μ, σ))`` with ``μ, σ`` over time per window and variable."""
        mu = x.mean(1, keepdim=True).detach()
        sd = torch.sqrt(x.var(1, keepdim=True, unbiased=False) + self.eps).detach()
        z = (x - mu) / sd
        if self.weight is not None:
            z = z * self.weight + self.bias
        return z, (mu, sd)

    def denormalize(self, y: Tensor, stats: tuple[Tensor, Tensor]) -> Tensor:
        """The inverse map of :meth:`normalize` with the stored ``(μ, σ)``."""
        mu, sd = stats
        if self.weight is not None:
            y = (y - self.bias) / (self.weight + self.eps * self.eps)
        return y * sd + mu
