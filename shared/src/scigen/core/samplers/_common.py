"""Small shared pieces of the solvers: schedule quantities at a time row, broadcasting, noise.

Solvers keep the time grid in float64 ``[n+1, Bt]`` (one row per time; ``Bt = B`` for per-sample
grids, ``Bt = 1`` for a shared grid, which broadcasts) and
evaluate the path's coefficients in float64; :func:`bc` casts a ``[B]`` coefficient to ``x``'s
dtype and reshapes it to ``[B, 1, ..., 1]`` just before it multiplies ``x``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core import streams

__all__ = ["bc", "final_is_clean", "half_log_snr", "mt", "noise_like", "sched", "velocity"]


def bc(c: Tensor, x: Tensor) -> Tensor:
    """``c`` of shape ``[B]`` cast to ``x.dtype`` and viewed as ``[B, 1, ..., 1]`` (``x.ndim`` dims)."""
    return c.to(dtype=x.dtype, device=x.device).reshape((-1,) + (1,) * (x.ndim - 1))


def mt(t: Tensor, x: Tensor) -> Tensor:
    """The time row ``t`` ([Bt], float64) as the model sees it: ``[B]`` in ``x``'s dtype."""
    return t.to(dtype=x.dtype).expand(x.shape[0])


def sched(path, t: Tensor, derivatives: bool = False):
    """``(alpha, sigma)`` — and ``(d_alpha, d_sigma)`` when asked — of ``path`` at ``t`` ([B], float64)."""
    a, s = path.alpha(t), path.sigma(t)
    if not derivatives:
        return a, s
    return a, s, path.d_alpha(t), path.d_sigma(t)


def half_log_snr(path, t: Tensor) -> Tensor:
    """``lambda(t) = log(alpha/sigma)`` = half the path's ``log_snr`` (``+inf`` where ``sigma = 0``)."""
    return 0.5 * path.log_snr(t)


def final_is_clean(path, times: Tensor) -> bool:
    """True when the last row of ``times`` has ``sigma = 0`` (an exact-data end point)."""
    return bool((path.sigma(times[-1]) == 0).all())


def noise_like(x: Tensor, generator: torch.Generator | None) -> Tensor:
    """A standard normal draw shaped like ``x`` (from ``generator`` when given)."""
    return streams.randn(x.shape, generator=generator, device=x.device, dtype=x.dtype)


def velocity(x: Tensor, x0: Tensor, a, s, da, ds) -> Tensor:
    """Probability-flow velocity ``dx/dt = alpha'·x0 + sigma'·eps`` with ``eps = (x − alpha·x0)/sigma``.

    ``a, s, da, ds`` are ``[B]`` coefficients at the current time; needs ``sigma > 0``.
    """
    eps = (x - bc(a, x) * x0) / bc(s, x)
    return bc(da, x) * x0 + bc(ds, x) * eps
