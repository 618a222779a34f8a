"""Masked reductions for variable-size sets (padded atoms, nodes, cells, channels).

A mask is a boolean tensor broadcastable to the values, ``True`` = the entry counts. Masked-out
entries never reach the result, even when they hold NaN/inf padding.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["masked_mean"]


def masked_mean(x: Tensor, mask: Tensor | None = None, dim=None, keepdim: bool = False) -> Tensor:
    """Mean of ``x`` over the entries where ``mask`` is True.

    Args:
        x: values.
        mask: boolean tensor broadcastable to ``x.shape`` (not beyond it); ``None`` = all count.
        dim: ``None`` reduces everything to a scalar; an int or tuple reduces those dims only.
    Returns:
        ``Σ x·mask / Σ mask`` over ``dim``.
    Raises:
        ValueError: if the mask selects no entry (overall, or in some reduced group), or its shape
            does not broadcast to ``x``. TypeError: if ``mask`` is not boolean.
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if mask is None:
        if x.numel() == 0:
            raise ValueError("masked_mean of an empty tensor: there is no entry to average")
        return x.mean() if dim is None else x.mean(dim=dim, keepdim=keepdim)
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
        got = mask.dtype if isinstance(mask, Tensor) else type(mask).__name__
        raise TypeError(f"mask must be a boolean tensor (True = counts), got {got}")
    try:
        shape = torch.broadcast_shapes(mask.shape, x.shape)
    except RuntimeError:
        shape = None
    if shape != x.shape:
        raise ValueError(f"mask of shape {tuple(mask.shape)} must broadcast to x of shape {tuple(x.shape)}")
    m = mask.to(x.device).expand(x.shape)
    total = torch.where(m, x, torch.zeros((), dtype=x.dtype, device=x.device))
    if dim is None:
        count = m.sum()
        if int(count) == 0:
            raise ValueError("mask selects no entries: cannot average over an empty set")
        return total.sum() / count
    count = m.sum(dim=dim, keepdim=keepdim)
    empty = int((count == 0).sum())
    if empty:
        raise ValueError(
            f"mask selects no entries in {empty} of the {count.numel()} groups reduced over dim={dim}"
        )
    return total.sum(dim=dim, keepdim=keepdim) / count.to(x.dtype)
