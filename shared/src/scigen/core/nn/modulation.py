"""Feature-wise conditioning, zero-initialised so that a conditioned block starts as the identity.

* :class:`FiLM` — feature-wise linear modulation (Perez et al. 2018, Eq. 1) in the residual form
  ``x · (1 + γ(c)) + β(c)``; ``γ, β`` come from a zero-initialised linear map, so at
  initialisation ``FiLM(x, c) = x`` exactly.
* :class:`AdaLNZero` — adaptive LayerNorm-Zero of DiT (Peebles & Xie 2023, §3.2): a
  zero-initialised linear map of ``c`` gives, per modulated sub-block, a shift, a scale and a gate;
  the block computes ``x + gate · f(LN(x) · (1 + scale) + shift)``, which is ``x`` at initialisation.
"""

from __future__ import annotations

from torch import Tensor, nn

from scigen.core.errors import InvalidInputError
from scigen.core.nn._checks import check_tensor

__all__ = ["AdaLNZero", "FiLM", "modulate"]


def _expand(p: Tensor, x: Tensor, dim: int) -> Tensor:
    """View ``p [B, F]`` so that it broadcasts against ``x`` with features on axis ``dim``."""
    dim = dim % x.ndim
    shape = [1] * x.ndim
    shape[0], shape[dim] = p.shape[0], p.shape[1]
    return p.reshape(shape)


def modulate(x: Tensor, shift: Tensor, scale: Tensor, dim: int = -1) -> Tensor:
    """``x · (1 + scale) + shift`` with ``shift, scale [B, F]`` broadcast over ``x``'s feature axis ``dim``."""
    return x * (1 + _expand(scale, x, dim)) + _expand(shift, x, dim)


class FiLM(nn.Module):
    """``x · (1 + γ(c)) + β(c)``; identity at initialisation.

    Args:
        cond_dim: size of the conditioning vector ``c [B, cond_dim]`` (or ``[1, cond_dim]``: one
            conditioning broadcast over the batch).
        num_features: size of the modulated feature axis of ``x``.
        dim: which axis of ``x`` holds the features (``-1`` for ``[B, ..., F]``, ``1`` for
            channels-first images ``[B, C, H, W]``).
    """

    def __init__(self, cond_dim: int, num_features: int, *, dim: int = -1) -> None:
        super().__init__()
        self.num_features, self.dim = int(num_features), dim
        self.proj = nn.Sequential(nn.SiLU(), nn.Linear(cond_dim, 2 * num_features))
        nn.init.zeros_(self.proj[1].weight)
        nn.init.zeros_(self.proj[1].bias)

    def forward(self, x: Tensor, cond: Tensor) -> Tensor:
        check_tensor(cond, "cond", ndim=2)
        if cond.shape[0] not in (1, x.shape[0]) or x.shape[self.dim] != self.num_features:
            raise InvalidInputError(
                f"FiLM expects x with batch {cond.shape[0]} and {self.num_features} features on axis "
                f"{self.dim}, got x of shape {tuple(x.shape)} and cond of shape {tuple(cond.shape)}"
            )
        gamma, beta = self.proj(cond).chunk(2, dim=-1)
        return modulate(x, beta, gamma, self.dim)


class AdaLNZero(nn.Module):
    """``c [B, cond_dim] -> chunks`` of ``(shift, scale, gate)`` triples, each ``[B, num_features]``.

    Returns a tuple of ``3 · n_blocks`` tensors ordered ``(shift_1, scale_1, gate_1, shift_2, ...)``,
    all exactly zero at initialisation (the linear map is zero-initialised), so
    ``x + gate · f(modulate(LN(x), shift, scale))`` is the identity in ``x`` at init.
    """

    def __init__(self, cond_dim: int, num_features: int, *, n_blocks: int = 1) -> None:
        super().__init__()
        self.n_chunks = 3 * int(n_blocks)
        self.proj = nn.Sequential(nn.SiLU(), nn.Linear(cond_dim, self.n_chunks * num_features))
        nn.init.zeros_(self.proj[1].weight)
        nn.init.zeros_(self.proj[1].bias)

    def forward(self, cond: Tensor) -> tuple[Tensor, ...]:
        check_tensor(cond, "cond", ndim=2, last=self.proj[1].in_features)
        return tuple(self.proj(cond).chunk(self.n_chunks, dim=-1))
