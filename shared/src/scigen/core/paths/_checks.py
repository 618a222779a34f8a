"""Boundary validation shared by ``scigen.core.paths`` and ``scigen.core.losses``.

Every public function of those packages validates its inputs here, so that a caller gets a
``TypeError``/``ValueError`` that names the argument, what it got and what was expected, instead
of a deep torch traceback.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = [
    "as_tensor",
    "broadcast_time",
    "check_finite_positive",
    "check_num_steps",
    "check_same_shape",
    "check_time_range",
]


def as_tensor(value, name: str, *, like: Tensor | None = None) -> Tensor:
    """Return ``value`` as a floating tensor (on ``like``'s device/dtype when given).

    Python numbers are accepted for convenience; anything else that is not a tensor raises a
    ``TypeError`` naming ``name``.
    """
    if isinstance(value, Tensor):
        t = value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        t = torch.tensor(float(value))
    else:
        raise TypeError(f"{name} must be a torch.Tensor (or a Python number), got {type(value).__name__}")
    if like is not None:
        t = t.to(device=like.device, dtype=like.dtype if like.is_floating_point() else t.dtype)
    if not t.is_floating_point():
        t = t.to(torch.get_default_dtype())
    return t


def broadcast_time(t: Tensor, x: Tensor, name: str = "t") -> Tensor:
    """Reshape per-sample times for broadcasting over ``x``.

    Args:
        t: a scalar (0-d or 1-element) tensor, or per-sample times of shape ``[B]`` where
            ``B = x.shape[0]``. Time convention: ``t = 0`` is data, ``t = 1`` is noise.
        x: the tensor the times apply to, shape ``[B, ...]``.

    Returns:
        ``t`` viewed as ``[B, 1, ..., 1]`` (or ``[1, ..., 1]`` for a scalar) with ``x.ndim`` dims,
        on ``x``'s device.
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    t = as_tensor(t, name)
    t = t.to(device=x.device)
    if x.ndim == 0:
        raise ValueError("x must have a batch dimension (ndim >= 1), got a 0-d tensor")
    if t.numel() == 1:
        return t.reshape((1,) * x.ndim)
    if t.ndim != 1 or t.shape[0] != x.shape[0]:
        raise ValueError(
            f"{name} must be a scalar or have shape [B] = [{x.shape[0]}] matching x of shape "
            f"{tuple(x.shape)}, got shape {tuple(t.shape)}"
        )
    return t.reshape((-1,) + (1,) * (x.ndim - 1))


def check_time_range(t: Tensor, name: str = "t", lo: float = 0.0, hi: float = 1.0) -> None:
    """Raise ``ValueError`` unless every entry of ``t`` is finite and within ``[lo, hi]``."""
    if t.numel() == 0:
        return
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} must be finite, got non-finite values")
    tmin, tmax = float(t.min()), float(t.max())
    if tmin < lo or tmax > hi:
        raise ValueError(f"{name} must lie in [{lo}, {hi}] (t=0 data, t=1 noise), got range [{tmin}, {tmax}]")


def check_same_shape(a: Tensor, b: Tensor, name_a: str, name_b: str) -> None:
    """Raise ``ValueError`` unless ``a`` and ``b`` are tensors of the same shape."""
    for v, n in ((a, name_a), (b, name_b)):
        if not isinstance(v, Tensor):
            raise TypeError(f"{n} must be a torch.Tensor, got {type(v).__name__}")
    if a.shape != b.shape:
        raise ValueError(f"{name_b} must have the shape of {name_a} {tuple(a.shape)}, got {tuple(b.shape)}")


def check_finite_positive(value: float, name: str, *, allow_zero: bool = False) -> float:
    """Return ``float(value)``; raise ``ValueError`` unless it is finite and > 0 (>= 0 if allowed)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}") from None
    ok = math.isfinite(v) and (v >= 0 if allow_zero else v > 0)
    if not ok:
        raise ValueError(f"{name} must be finite and {'>= 0' if allow_zero else '> 0'}, got {value}")
    return v


def check_num_steps(T, name: str = "T") -> int:
    """Return ``T`` if it is an ``int >= 1`` (a number of discrete steps), else raise ``ValueError``."""
    if isinstance(T, bool) or not isinstance(T, int) or T < 1:
        raise ValueError(f"{name} (number of discrete steps) must be an int >= 1, got {T!r}")
    return T
