"""Converters for papers written in another time convention.

scigen: ``t ∈ [0, 1]``, ``t = 0`` data, ``t = 1`` noise. Two other conventions are common:

* **reversed continuous time** (flow_matching, torchcfm, Lipman et al. 2023: noise at ``s = 0``,
  data at ``s = 1``): ``t = 1 − s``; a velocity field ``u(x, s)`` of the reversed convention is
  ``−u(x, 1 − t)`` in ours, because ``dx/dt = −dx/ds``. Scores, ``x0`` and ``eps`` predictions do
  not change sign.
* **discrete steps** ``k ∈ {0, …, T}`` (DDPM: ``k = 0`` data, ``k = T`` most noise): ``t = k / T``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from scigen.core.validation import as_tensor, check_num_steps

__all__ = ["flip_time", "reverse_velocity", "step_to_time", "time_to_step"]


def flip_time(t: Tensor) -> Tensor:
    """``1 − t``: maps a reversed-convention time to ours and back (an involution)."""
    return 1.0 - as_tensor(t, "t")


def reverse_velocity(velocity_fn: Callable[[Tensor, Tensor], Tensor]) -> Callable[[Tensor, Tensor], Tensor]:
    """Wrap ``u(x, s)`` written with noise at ``s = 0`` into ours: ``(x, t) ↦ −u(x, 1 − t)``."""
    if not callable(velocity_fn):
        raise TypeError(f"velocity_fn must be callable, got {type(velocity_fn).__name__}")

    def wrapped(x: Tensor, t: Tensor) -> Tensor:
        return -velocity_fn(x, flip_time(t))

    return wrapped


def step_to_time(k: Tensor, T: int) -> Tensor:
    """Discrete step ``k ∈ {0, …, T}`` (``k = 0`` data) → continuous ``t = k / T``."""
    T = check_num_steps(T)
    k = torch.as_tensor(k)
    if k.numel() and (int(k.min()) < 0 or int(k.max()) > T):
        raise ValueError(f"k must lie in [0, T={T}], got range [{int(k.min())}, {int(k.max())}]")
    return k.to(torch.get_default_dtype()) / T


def time_to_step(t: Tensor, T: int, rounding: str = "round") -> Tensor:
    """Continuous ``t ∈ [0, 1]`` → integer step ``k`` (``long``) with ``k ≈ t·T``.

    ``rounding`` is ``"round"`` (nearest, as in EDM-for-molecules' lookup ``round(t·T)``),
    ``"floor"`` or ``"ceil"``; the result is clamped to ``[0, T]``.
    """
    T = check_num_steps(T)
    if rounding not in ("round", "floor", "ceil"):
        raise ValueError(f"rounding must be 'round', 'floor' or 'ceil', got {rounding!r}")
    x = as_tensor(t, "t") * T
    k = {"round": torch.round, "floor": torch.floor, "ceil": torch.ceil}[rounding](x)
    return k.clamp(0, T).long()
