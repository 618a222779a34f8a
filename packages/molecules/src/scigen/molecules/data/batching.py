"""Ragged batches of variable-size molecules and the zero-centre-of-mass subspace.

Two layouts:

* **padded** ``[B, N_max, ...]`` with a boolean ``mask [B, N_max]`` (what a Dataset yields, so the
  engine's ``fit`` can batch with the default collate);
* **ragged** (CSR) ``[N_total, ...]`` with ``ptr [B+1]`` (molecule ``g`` owns rows
  ``ptr[g]:ptr[g+1]``) and ``batch [N_total]`` (the molecule of each row). The EGNN runs on this
  layout, so padding never enters a message or a sum.

Translation invariance (Hoogeboom et al. 2022, Sec. 3.2; Xu et al. 2022): coordinates live in the
linear subspace ``Σ_i x_i = 0`` of each molecule; noise is a standard Gaussian *in that subspace*,
i.e. ``P·ε`` with ``P = I − 11ᵀ/n`` per molecule (covariance ``P`` per coordinate axis).
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core import streams
from scigen.core.errors import InvalidInputError
from scigen.kernels import segment_sum

__all__ = ["ptr_from_counts", "batch_index", "to_ragged", "to_padded", "remove_mean", "remove_mean_padded",
           "zero_com_noise", "com_norm"]


def ptr_from_counts(counts: Tensor) -> Tensor:
    """CSR pointer ``[B+1]`` (int64) from atom counts ``[B]``."""
    counts = torch.as_tensor(counts, dtype=torch.long)
    return torch.cat([counts.new_zeros(1), counts.cumsum(0)])


def batch_index(ptr: Tensor) -> Tensor:
    """The molecule index of every row, ``[N_total]`` int64."""
    counts = ptr[1:] - ptr[:-1]
    return torch.repeat_interleave(torch.arange(counts.numel(), device=ptr.device), counts)


def to_ragged(values: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
    """``values [B, N, ...]`` and ``mask [B, N]`` -> ``(rows [sum(mask), ...], ptr [B+1])``.
    The valid atoms of each molecule must come first (no holes): the layout every loader here uses."""
    if mask.dtype != torch.bool or mask.ndim != 2 or values.shape[:2] != mask.shape:
        raise InvalidInputError(f"mask must be bool [B, N] matching values {list(values.shape[:2])}, "
                                f"got {mask.dtype} {list(mask.shape)}")
    counts = mask.sum(1)
    if bool((mask.long().cumsum(1) != torch.arange(1, mask.shape[1] + 1, device=mask.device)
             .clamp(max=counts[:, None])).any()):
        raise InvalidInputError("mask: valid atoms must be leading (no padding holes inside a molecule)")
    return values[mask], ptr_from_counts(counts).to(values.device)


def to_padded(rows: Tensor, ptr: Tensor, n_max: int | None = None, fill: float = 0.0) -> tuple[Tensor, Tensor]:
    """Inverse of :func:`to_ragged`: ``(values [B, n_max, ...], mask [B, n_max])``."""
    counts = ptr[1:] - ptr[:-1]
    n_max = int(counts.max()) if n_max is None else int(n_max)
    b = counts.numel()
    mask = torch.arange(n_max, device=rows.device)[None, :] < counts[:, None]
    out = rows.new_full((b, n_max, *rows.shape[1:]), fill)
    out[mask] = rows
    return out, mask


def remove_mean(x: Tensor, ptr: Tensor) -> Tensor:
    """Subtract each molecule's centroid from its rows (ragged ``x [N, 3]``)."""
    counts = (ptr[1:] - ptr[:-1]).clamp(min=1).to(x.dtype)
    mean = segment_sum(x, ptr) / counts[:, None]
    return x - mean[batch_index(ptr)]


def remove_mean_padded(x: Tensor, mask: Tensor) -> Tensor:
    """Padded version: centroid over the valid atoms; padding rows are set to zero."""
    m = mask.unsqueeze(-1).to(x.dtype)
    mean = (x * m).sum(1, keepdim=True) / m.sum(1, keepdim=True).clamp(min=1)
    return (x - mean) * m


def zero_com_noise(ptr: Tensor, dim: int = 3, *, generator: torch.Generator | None = None,
                   dtype: torch.dtype = torch.float32, device=None) -> Tensor:
    """Standard Gaussian noise in each molecule's zero-centre-of-mass subspace, ragged ``[N, dim]``; under
    per-sample streams (:mod:`scigen.core.streams`) each molecule's atoms draw from the molecule's key."""
    n = int(ptr[-1])
    eps = streams.randn((n, dim), generator=generator, dtype=dtype, device=device or ptr.device,
                        rows=atom_rows(ptr) if streams.as_streams(generator) is not None else None)
    return remove_mean(eps, ptr.to(eps.device))


def atom_rows(ptr: Tensor) -> Tensor:
    """The molecule of each atom of a ragged batch ``[N]`` (for per-sample random streams: ``rows=``)."""
    counts = (ptr[1:] - ptr[:-1]).to(torch.int64)
    return torch.repeat_interleave(torch.arange(len(counts), device=ptr.device), counts)


def com_norm(x: Tensor, ptr: Tensor) -> Tensor:
    """``||mean_i x_i||`` per molecule ``[B]`` (0 for a centred molecule): for assertions and tests."""
    counts = (ptr[1:] - ptr[:-1]).clamp(min=1).to(x.dtype)
    return (segment_sum(x, ptr) / counts[:, None]).norm(dim=-1)
