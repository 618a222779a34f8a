"""Boundary validation for the ``scigen.core.nn`` blocks (shapes of ``x``, ``t`` and conditioning)."""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core.errors import InvalidInputError
from scigen.core.validation import check_tensor as _check_tensor

__all__ = ["check_cond", "check_tensor", "check_time", "check_times"]


def check_tensor(x, name: str, *, ndim: int | tuple[int, ...] | None = None, last: int | None = None) -> Tensor:
    """Shape check for a forward pass (no finiteness check: that would sync every call)."""
    return _check_tensor(x, name, ndim=ndim, last=last, finite=False, allow_empty=True)


def check_time(t, batch: int, name: str = "t", *, keep_scalar: bool = False) -> Tensor:
    """Return per-sample times of shape ``[batch]`` (a scalar is expanded). With ``keep_scalar`` one time for
    every row (a scalar, or a ``[batch]`` view of one value with stride 0, as ``t.expand(batch)`` makes) is
    returned as ``[1]``, for a block that embeds it once and broadcasts it; telling needs no sync.

    Time convention: ``t ∈ [0, 1]``, ``t = 0`` is data and ``t = 1`` is noise.
    """
    if isinstance(t, (int, float)) and not isinstance(t, bool):
        t = torch.tensor(float(t))
    if not isinstance(t, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of shape [B] (or a scalar), got {type(t).__name__}")
    if t.numel() == 1:
        return t.reshape(1) if keep_scalar else t.reshape(1).expand(batch)
    if t.ndim != 1 or t.shape[0] != batch:
        raise InvalidInputError(f"{name} must be a scalar or have shape [B] = [{batch}], got shape {tuple(t.shape)}")
    if keep_scalar and t.stride(0) == 0:
        return t[:1]
    return t


def check_cond(cond, batch: int, dim: int | None, name: str = "cond") -> Tensor | None:
    """Validate an optional conditioning vector of shape ``[batch, dim]``."""
    if cond is None:
        return None
    if dim is None:
        raise InvalidInputError(f"{name} was given but the block was built without a conditioning dimension")
    check_tensor(cond, name, ndim=2, last=dim)
    if cond.shape[0] != batch:
        raise InvalidInputError(f"{name} must have shape [B, {dim}] with B = {batch}, got {tuple(cond.shape)}")
    return cond


def check_times(t, name: str = "t") -> Tensor:
    """Return times as a 1-D tensor ``[B]`` (a Python number or 0-d tensor becomes ``[1]``)."""
    if isinstance(t, (int, float)) and not isinstance(t, bool):
        t = torch.tensor([float(t)])
    if not isinstance(t, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of shape [B], got {type(t).__name__}")
    if t.ndim == 0:
        t = t.reshape(1)
    if t.ndim != 1:
        raise InvalidInputError(f"{name} must have shape [B] (one time per sample), got shape {tuple(t.shape)}")
    return t
