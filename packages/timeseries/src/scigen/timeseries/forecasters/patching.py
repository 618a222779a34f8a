"""Channel-independent patching shared by PatchTST (Nie et al., ICLR 2023, §3.1) and D3U's PatchDN.

A series of length ``L`` is replication-padded at the end and cut into patches of ``patch_len``
every ``stride`` steps. The papers pad by exactly ``stride`` (``n = (L − patch_len)/stride + 2``
patches); ours pads by ``stride`` *plus* whatever makes the last patch end on the padded series'
last step and the series at least one patch long, so any length works and no step is dropped.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["n_patches", "padding", "patchify"]


def padding(length: int, patch_len: int, stride: int) -> int:
    """End padding for ``length`` steps: ``stride``, raised until ``(length + pad − patch_len) % stride == 0``
    and ``length + pad >= patch_len``."""
    pad = stride + max(0, patch_len - length - stride)
    pad += (-(length + pad - patch_len)) % stride
    return pad


def n_patches(length: int, patch_len: int, stride: int) -> int:
    """Number of patches :func:`patchify` cuts from ``length`` steps."""
    return (length + padding(length, patch_len, stride) - patch_len) // stride + 1


def patchify(x: Tensor, patch_len: int, stride: int) -> Tensor:
    """``x [..., L]`` -> ``[..., n_patches, patch_len]`` (end replication padding, see module docstring)."""
    pad = padding(x.shape[-1], patch_len, stride)
    x = torch.cat([x, x[..., -1:].expand(*x.shape[:-1], pad)], dim=-1)
    return x.unfold(-1, patch_len, stride)
