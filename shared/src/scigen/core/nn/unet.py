"""A small time-conditioned U-Net for 1-D signals and 2-D fields (e.g. 64–128 px weather grids).

The layout follows the DDPM U-Net (Ho et al. 2020, App. B; Ronneberger et al. 2015): an encoder of
residual blocks with stride-2 downsampling, a bottleneck with self-attention, and a decoder with
nearest-neighbour upsampling and skip connections concatenated from the encoder. Each residual block
is ``x + Conv(SiLU(FiLM(GN(Conv(SiLU(GN(x)))), emb)))`` where ``emb`` embeds ``t ∈ [0, 1]``
(``t = 0`` data, ``t = 1`` noise) with :class:`SinusoidalTimeEmbedding` plus an optional
conditioning vector. Attention runs only at the coarsest resolution (for 128² input and three
levels that is 32² = 1024 tokens). The output convolution is zero-initialised, so the untrained
network returns zeros.

Spatial sizes must be divisible by ``2 ** (len(channel_mults) - 1)``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from scigen.core.errors import InvalidInputError
from scigen.core.nn._checks import check_cond, check_tensor, check_time
from scigen.core.nn.attention import SelfAttention
from scigen.core.nn.dropout import KeyedDropout
from scigen.core.nn.embeddings import SinusoidalTimeEmbedding
from scigen.core.nn.modulation import FiLM

__all__ = ["UNet"]


def _conv(dims: int):
    return {1: nn.Conv1d, 2: nn.Conv2d}[dims]


def _norm(channels: int, groups: int) -> nn.GroupNorm:
    g = min(groups, channels)
    while channels % g:
        g -= 1
    return nn.GroupNorm(g, channels)


class _ResBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, emb_dim: int, dims: int, groups: int, dropout: float) -> None:
        super().__init__()
        Conv = _conv(dims)
        self.norm1, self.conv1 = _norm(c_in, groups), Conv(c_in, c_out, 3, padding=1)
        self.norm2, self.conv2 = _norm(c_out, groups), Conv(c_out, c_out, 3, padding=1)
        self.film = FiLM(emb_dim, c_out, dim=1)
        self.drop = KeyedDropout(dropout)
        self.skip = Conv(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, x: Tensor, emb: Tensor) -> Tensor:
        h = self.conv1(F.silu(self.norm1(x)))
        h = self.conv2(self.drop(F.silu(self.film(self.norm2(h), emb))))
        return self.skip(x) + h


class _SpatialAttention(nn.Module):
    def __init__(self, channels: int, n_heads: int, groups: int) -> None:
        super().__init__()
        self.norm = _norm(channels, groups)
        self.attn = SelfAttention(channels, n_heads)

    def forward(self, x: Tensor) -> Tensor:
        tokens = self.norm(x).flatten(2).transpose(1, 2)  # [B, L, C]
        return x + self.attn(tokens).transpose(1, 2).reshape(x.shape)


class UNet(nn.Module):
    """``(x [B, C, L] or [B, C, H, W], t [B], cond [B, cond_dim] | None) -> [B, out_channels, ...]``.

    Args:
        in_channels, out_channels: channels of input and output (``out_channels`` defaults to
            ``in_channels``, i.e. a model function predicting ``eps``/``x0``/``v``).
        dims: 1 for sequences ``[B, C, L]``, 2 for images/fields ``[B, C, H, W]``.
        base_channels: channels at full resolution; level ``i`` has ``base · channel_mults[i]``.
        channel_mults: one entry per resolution level; each level after the first halves the size.
        n_res_blocks: residual blocks per level in the encoder (the decoder has one more).
        attention: self-attention in the bottleneck (coarsest level).
        cond_dim: size of an optional global conditioning vector added to the time embedding.
    """

    def __init__(
        self, in_channels: int, out_channels: int | None = None, *, dims: int = 2, base_channels: int = 32,
        channel_mults: tuple[int, ...] = (1, 2, 2), n_res_blocks: int = 1, attention: bool = True,
        n_heads: int = 4, groups: int = 8, cond_dim: int | None = None, dropout: float = 0.0,
    ) -> None:
        super().__init__()
        if dims not in (1, 2):
            raise InvalidInputError(f"dims must be 1 or 2, got {dims}")
        if not channel_mults:
            raise InvalidInputError("channel_mults must have at least one level")
        Conv = _conv(dims)
        self.dims, self.in_channels, self.cond_dim = dims, in_channels, cond_dim
        self.factor = 2 ** (len(channel_mults) - 1)
        emb_dim = 4 * base_channels
        self.time_embed = nn.Sequential(
            SinusoidalTimeEmbedding(base_channels), nn.Linear(base_channels, emb_dim), nn.SiLU(),
            nn.Linear(emb_dim, emb_dim),
        )
        self.cond_embed = nn.Linear(cond_dim, emb_dim) if cond_dim else None
        self.inp = Conv(in_channels, base_channels, 3, padding=1)

        self.down = nn.ModuleList()
        skips, ch = [base_channels], base_channels
        for level, mult in enumerate(channel_mults):
            for _ in range(n_res_blocks):
                self.down.append(_ResBlock(ch, base_channels * mult, emb_dim, dims, groups, dropout))
                ch = base_channels * mult
                skips.append(ch)
            if level < len(channel_mults) - 1:
                self.down.append(Conv(ch, ch, 3, stride=2, padding=1))
                skips.append(ch)

        self.mid1 = _ResBlock(ch, ch, emb_dim, dims, groups, dropout)
        self.mid_attn = _SpatialAttention(ch, n_heads, groups) if attention else nn.Identity()
        self.mid2 = _ResBlock(ch, ch, emb_dim, dims, groups, dropout)

        self.up = nn.ModuleList()
        for level, mult in reversed(list(enumerate(channel_mults))):
            for _ in range(n_res_blocks + 1):
                self.up.append(_ResBlock(ch + skips.pop(), base_channels * mult, emb_dim, dims, groups, dropout))
                ch = base_channels * mult
            if level > 0:
                self.up.append(nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"), Conv(ch, ch, 3, padding=1)))

        self.out = nn.Sequential(_norm(ch, groups), nn.SiLU(), Conv(ch, out_channels or in_channels, 3, padding=1))
        nn.init.zeros_(self.out[-1].weight)
        nn.init.zeros_(self.out[-1].bias)

    def forward(self, x: Tensor, t: Tensor, cond: Tensor | None = None) -> Tensor:
        check_tensor(x, "x", ndim=self.dims + 2)
        if x.shape[1] != self.in_channels:
            raise InvalidInputError(f"x must have {self.in_channels} channels on axis 1, got shape {tuple(x.shape)}")
        if any(s % self.factor for s in x.shape[2:]):
            raise InvalidInputError(
                f"x's spatial sizes {tuple(x.shape[2:])} must be divisible by {self.factor} "
                f"(2 ** (len(channel_mults) - 1)); pad or crop the input"
            )
        t = check_time(t, x.shape[0]).to(x.device)
        emb = self.time_embed(t).to(x.dtype)
        cond = check_cond(cond, x.shape[0], self.cond_dim)
        if cond is not None:
            emb = emb + self.cond_embed(cond)

        h = self.inp(x)
        hs = [h]
        for layer in self.down:
            h = layer(h, emb) if isinstance(layer, _ResBlock) else layer(h)
            hs.append(h)
        h = self.mid2(self.mid_attn(self.mid1(h, emb)), emb)
        for layer in self.up:
            h = layer(torch.cat([h, hs.pop()], dim=1), emb) if isinstance(layer, _ResBlock) else layer(h)
        return self.out(h)
