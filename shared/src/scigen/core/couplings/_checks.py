"""Input validation shared by :mod:`scigen.core.couplings` and :mod:`scigen.core.metrics`.

Every check raises at the boundary with a message that names the argument, what it got and what
was expected, so that users never meet a deep torch/POT traceback.
"""

from __future__ import annotations

import torch
from torch import Tensor


def check_tensor(value: object, name: str, *, allow_empty: bool = False) -> Tensor:
    """Return ``value`` if it is a finite floating tensor; raise a clear error otherwise.

    Integer tensors are accepted and converted to the default float dtype.
    """
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if value.is_complex():
        raise TypeError(f"{name} must be a real tensor, got dtype {value.dtype}")
    if not value.is_floating_point():
        value = value.to(torch.get_default_dtype())
    if not allow_empty and value.numel() == 0:
        raise ValueError(f"{name} is empty (shape {tuple(value.shape)}); expected at least one element")
    if value.numel() > 0 and not bool(torch.isfinite(value).all()):
        n_bad = int((~torch.isfinite(value)).sum())
        raise ValueError(f"{name} contains {n_bad} NaN/inf value(s); expected finite values")
    return value


def check_points(value: object, name: str, *, min_rows: int = 1) -> Tensor:
    """Validate a point cloud: a finite tensor of shape ``[n, d]`` (a 1-D tensor is read as ``[n, 1]``)."""
    value = check_tensor(value, name)
    if value.dim() == 1:
        value = value[:, None]
    if value.dim() != 2:
        raise ValueError(f"{name} must have shape [n, d] (or [n]), got shape {tuple(value.shape)}")
    if value.shape[0] < min_rows:
        raise ValueError(f"{name} needs at least {min_rows} row(s), got shape {tuple(value.shape)}")
    if value.shape[1] == 0:
        raise ValueError(f"{name} has zero features (shape {tuple(value.shape)})")
    return value


def check_same_dim(x: Tensor, y: Tensor, names: tuple[str, str]) -> None:
    """Raise unless two point clouds have the same number of features."""
    if x.shape[1] != y.shape[1]:
        raise ValueError(
            f"{names[0]} and {names[1]} must have the same feature dimension, got shapes "
            f"{tuple(x.shape)} and {tuple(y.shape)}"
        )


def check_weights(w: object, n: int, name: str, like: Tensor) -> Tensor:
    """Validate marginal weights: ``None`` gives uniform ``1/n``; else ``[n]``, >= 0, positive sum.

    Returns float64 weights normalised to sum to one, on ``like``'s device.
    """
    if w is None:
        return torch.full((n,), 1.0 / n, dtype=torch.float64, device=like.device)
    w = check_tensor(w, name)
    if w.dim() != 1 or w.shape[0] != n:
        raise ValueError(f"{name} must have shape [{n}] to match its points, got shape {tuple(w.shape)}")
    if bool((w < 0).any()):
        raise ValueError(f"{name} must be non-negative, got min {float(w.min())}")
    total = float(w.sum())
    if total <= 0:
        raise ValueError(f"{name} must have a positive sum, got {total}")
    return w.to(device=like.device, dtype=torch.float64) / total


def check_positive(value: object, name: str) -> float:
    """Return ``value`` as a float if it is a finite number > 0; raise otherwise."""
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a positive number, got {value!r}") from None
    if not v > 0 or v == float("inf"):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v
