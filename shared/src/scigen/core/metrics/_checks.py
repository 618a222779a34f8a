"""Validation for forecast-style metrics: an ensemble of samples against observations."""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core.validation import check_tensor

REDUCTIONS = ("mean", "sum", "none")


def check_ensemble(
    samples: object, obs: object, dim: int, *, min_members: int = 1, name: str = "samples"
) -> tuple[Tensor, Tensor, int]:
    """Validate ``samples`` (ensemble along ``dim``) against ``obs`` (``samples``' shape without ``dim``).

    Returns ``(samples, obs, dim)`` with ``dim`` made non-negative and both tensors in a common float dtype.
    """
    samples = check_tensor(samples, name)
    obs = check_tensor(obs, "obs")
    if samples.dim() == 0:
        raise ValueError(f"{name} must have an ensemble dimension, got a 0-d tensor")
    if not -samples.dim() <= dim < samples.dim():
        raise ValueError(f"dim={dim} is out of range for {name} of shape {tuple(samples.shape)}")
    dim = dim % samples.dim()
    expected = samples.shape[:dim] + samples.shape[dim + 1 :]
    if obs.shape != expected:
        raise ValueError(
            f"obs must have {name}' shape without dim {dim}: expected {tuple(expected)}, "
            f"got {tuple(obs.shape)} ({name} {tuple(samples.shape)})"
        )
    if samples.shape[dim] < min_members:
        raise ValueError(
            f"{name} needs at least {min_members} ensemble member(s) along dim {dim}, got {samples.shape[dim]}"
        )
    if samples.device != obs.device:
        raise ValueError(f"{name} and obs must be on one device, got {samples.device} and {obs.device}")
    dtype = torch.promote_types(samples.dtype, obs.dtype)
    return samples.to(dtype), obs.to(dtype), dim


def reduce(values: Tensor, reduction: str) -> Tensor:
    """Apply ``reduction`` (``"mean"``, ``"sum"`` or ``"none"``)."""
    if reduction == "mean":
        return values.mean()
    if reduction == "sum":
        return values.sum()
    if reduction == "none":
        return values
    raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")


def check_reduction(reduction: str) -> None:
    """Raise early for an unknown reduction (before any work)."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")


def empirical_quantiles(sorted_samples: Tensor, levels: Tensor, dim: int) -> Tensor:
    """Quantiles of ``sorted_samples`` (sorted along ``dim``) at ``levels`` in [0, 1].

    Linear interpolation between order statistics at position ``level·(m − 1)`` (NumPy's default
    ``method="linear"``, Hyndman & Fan type 7). Returns ``[len(levels), *rest]`` where ``rest`` is the
    shape without ``dim``. Works for any size (``torch.quantile`` caps its input at 2^24 elements).
    """
    x = sorted_samples.movedim(dim, 0)
    m = x.shape[0]
    pos = levels.to(x.dtype) * (m - 1)
    lo = pos.floor().long().clamp(0, m - 1)
    hi = (lo + 1).clamp(max=m - 1)
    frac = (pos - lo.to(x.dtype)).reshape(-1, *([1] * (x.dim() - 1)))
    return x[lo] + frac * (x[hi] - x[lo])
