"""A time-conditioned residual MLP: the default network for vector data (toy 2-D, latent codes).

Each residual block is ``h + W₂ SiLU(W₁ SiLU(FiLM(LN(h), c)))`` (pre-norm residual block, He et al.
2016 "identity mappings"; FiLM of Perez et al. 2018), with ``c`` the embedding of ``t`` (plus an
optional conditioning vector). Because FiLM is zero-initialised, every block ignores ``t`` at
initialisation and learns to use it.
"""

from __future__ import annotations

from torch import Tensor, nn

from scigen.core.nn._checks import check_cond, check_tensor, check_time
from scigen.core.nn.dropout import KeyedDropout
from scigen.core.nn.embeddings import SinusoidalTimeEmbedding
from scigen.core.nn.modulation import FiLM

__all__ = ["ResidualBlock", "ResidualMLP"]


class ResidualBlock(nn.Module):
    """``h [B, width] -> h + MLP(FiLM(LN(h), c))`` with ``c [B, cond_dim]``."""

    def __init__(self, width: int, cond_dim: int, *, expansion: int = 2, dropout: float = 0.0) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.film = FiLM(cond_dim, width)
        self.mlp = nn.Sequential(
            nn.SiLU(), nn.Linear(width, expansion * width), nn.SiLU(), KeyedDropout(dropout),
            nn.Linear(expansion * width, width),
        )

    def forward(self, h: Tensor, c: Tensor) -> Tensor:
        return h + self.mlp(self.film(self.norm(h), c))


class ResidualMLP(nn.Module):
    """``(x [B, in_dim], t [B], cond [B, cond_dim] | None) -> [B, out_dim]``.

    One time for every row (a scalar ``t``, or ``t.expand(B)``: stride 0, as the engine's samplers pass it)
    is embedded once and broadcast: the same numbers as a ``[B]`` copy, without the ``B``-fold time
    embedding and FiLM projections (about a third of a forward at depth 4).

    Args:
        in_dim: size of ``x``. ``out_dim`` defaults to ``in_dim`` (a model function
            ``model_fn(x, t)`` in the engine's sense).
        width: hidden size; ``depth``: number of residual blocks.
        time_dim: size of the sinusoidal embedding of ``t ∈ [0, 1]`` (``t = 0`` data, ``t = 1`` noise).
        cond_dim: size of an optional extra conditioning vector, added to the time embedding.
    """

    def __init__(
        self, in_dim: int, out_dim: int | None = None, *, width: int = 128, depth: int = 3,
        time_dim: int = 64, cond_dim: int | None = None, dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.in_dim, self.out_dim, self.cond_dim = in_dim, out_dim or in_dim, cond_dim
        self.time_embed = nn.Sequential(
            SinusoidalTimeEmbedding(time_dim), nn.Linear(time_dim, width), nn.SiLU(), nn.Linear(width, width)
        )
        self.cond_embed = nn.Linear(cond_dim, width) if cond_dim else None
        self.inp = nn.Linear(in_dim, width)
        self.blocks = nn.ModuleList(ResidualBlock(width, width, dropout=dropout) for _ in range(depth))
        self.out = nn.Sequential(nn.LayerNorm(width), nn.SiLU(), nn.Linear(width, self.out_dim))

    def forward(self, x: Tensor, t: Tensor, cond: Tensor | None = None) -> Tensor:
        check_tensor(x, "x", ndim=2, last=self.in_dim)
        # one time for the whole batch (a scalar, or a stride-0 expand): embedded and projected once, broadcast
        t = check_time(t, x.shape[0], keep_scalar=True).to(x.device)
        c = self.time_embed(t).to(x.dtype)
        cond = check_cond(cond, x.shape[0], self.cond_dim)
        if cond is not None:
            c = c + self.cond_embed(cond)
        h = self.inp(x)
        for block in self.blocks:
            h = block(h, c)
        return self.out(h)
