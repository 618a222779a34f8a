"""Reference forecasts the benchmark and tests compare against (standardised windows ``X [W, C, N]``).

* :func:`seasonal_naive` — ``Ŷ_{t+h} = y_{t+h−m⌈h/m⌉}``: the last observed season repeated (Hyndman &
  Athanasopoulos, *Forecasting: Principles and Practice*, §5.2);
* :func:`residual_std` / :func:`gaussian_around` — a point forecast with a constant residual variance:
  ``Ŷ + σ_{h,n}·z`` with ``σ_{h,n}`` the residuals' root mean square per horizon step and variable,
  fitted on held-out (validation) windows. The homoscedastic baseline D3U must beat.
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core.errors import InvalidInputError

__all__ = ["gaussian_around", "residual_std", "seasonal_naive"]


def seasonal_naive(x: Tensor, horizon: int, period: int) -> Tensor:
    """``[W, C, N]`` contexts -> ``[W, horizon, N]``: step ``h`` (1-based) copies ``x[C − m⌈h/m⌉ + (h − 1) mod m]``."""
    C = x.shape[1]
    if not 1 <= period <= C:
        raise InvalidInputError(f"period must lie in [1, context length {C}], got {period}")
    idx = torch.tensor([C - period + (h % period) for h in range(horizon)], device=x.device)
    return x[:, idx]


def residual_std(y_hat: Tensor, y: Tensor) -> Tensor:
    """Root-mean-square residual ``sqrt(mean_W (y − ŷ)²)`` per horizon step and variable -> ``[H, N]``."""
    if y_hat.shape != y.shape:
        raise InvalidInputError(f"point forecasts {tuple(y_hat.shape)} and targets {tuple(y.shape)} differ in shape")
    return ((y - y_hat) ** 2).mean(0).sqrt()


def gaussian_around(y_hat: Tensor, std: Tensor, n: int, generator: torch.Generator | None = None) -> Tensor:
    """``n`` draws of ``N(ŷ, std²)`` -> ``[n, *y_hat.shape]`` (``std`` broadcast over windows)."""
    z = torch.randn((n, *y_hat.shape), generator=generator, device=y_hat.device, dtype=y_hat.dtype)
    return y_hat + std * z
