"""Embeddings of a scalar time ``t ∈ [0, 1]`` (``t = 0`` data, ``t = 1`` noise) into a vector.

* :class:`SinusoidalTimeEmbedding` — the transformer position encoding of Vaswani et al. (2017,
  §3.5) applied to ``scale · t``, as in DDPM (Ho et al. 2020, App. B). The default ``scale = 1000``
  maps ``[0, 1]`` onto the ``[0, 1000]`` range of the discrete DDPM step index, so the frequency
  bank ``max_period^{-k/half}`` resolves both coarse and fine differences of ``t``.
* :class:`GaussianFourierProjection` — random Fourier features (Tancik et al. 2020, Eq. 5) as used
  for noise levels in score SDEs (Song et al. 2021, App. C.1): fixed frequencies
  ``W ~ N(0, scale²)`` and features ``[sin(2π t W), cos(2π t W)]``. For ``t ∈ [0, 1]`` the default
  ``scale = 16`` gives ``2π·16·Δt`` radians of phase difference, so ``Δt ≈ 0.01`` is resolvable.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from scigen.core.errors import InvalidInputError
from scigen.core.nn._checks import check_times

__all__ = ["GaussianFourierProjection", "SinusoidalTimeEmbedding"]


class SinusoidalTimeEmbedding(nn.Module):
    """``t [B] -> [B, dim]``: ``[cos(s·t·ω_k), sin(s·t·ω_k)]`` with ``ω_k = max_period^{-k/half}``.

    Args:
        dim: output size (an odd ``dim`` gets one trailing zero feature).
        scale: ``s``, multiplies ``t`` before the frequency bank (default 1000, the DDPM step range).
        max_period: the longest period of the bank (default 10 000, Vaswani et al.).
    """

    def __init__(self, dim: int, *, scale: float = 1000.0, max_period: float = 10_000.0) -> None:
        super().__init__()
        if dim < 2:
            raise InvalidInputError(f"dim must be >= 2, got {dim}")
        self.dim, self.scale = int(dim), float(scale)
        half = dim // 2
        freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32) / half)
        self.register_buffer("freqs", freqs, persistent=False)

    def forward(self, t: Tensor) -> Tensor:
        t = check_times(t)
        args = (self.scale * t.float())[:, None] * self.freqs.to(t.device)[None]
        emb = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
        if self.dim % 2:
            emb = torch.nn.functional.pad(emb, (0, 1))
        return emb


class GaussianFourierProjection(nn.Module):
    """``t [B] -> [B, dim]``: ``[sin(2π t W), cos(2π t W)]`` with fixed ``W ~ N(0, scale²)`` of size ``dim/2``.

    ``W`` is drawn once at construction from a generator seeded with ``seed`` and stored as a
    (non-trainable) buffer, so it is saved with the weights.
    """

    def __init__(self, dim: int, *, scale: float = 16.0, seed: int = 0) -> None:
        super().__init__()
        if dim < 2 or dim % 2:
            raise InvalidInputError(f"dim must be an even number >= 2, got {dim}")
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("W", torch.randn(dim // 2, generator=g) * scale)

    def forward(self, t: Tensor) -> Tensor:
        t = check_times(t)
        proj = 2 * math.pi * t.float()[:, None] * self.W[None]
        return torch.cat([torch.sin(proj), torch.cos(proj)], dim=-1)
