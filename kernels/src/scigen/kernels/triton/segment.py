"""Triton kernels for CSR segment reductions (sum, max/min with first arg-extremum).

One program per (segment, feature block); it walks its segment in chunks of ``BLOCK_E`` rows, so no
atomics and the result is deterministic. Launchers take ``src [E, F]`` (contiguous) and ``ptr [S+1]``
int64, on CUDA or (with ``TRITON_INTERPRET=1`` set before import) on CPU.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from scigen.kernels.reference.segment import compute_dtype

BLOCK_E = 16
BLOCK_F = 32


@triton.jit
def _segment_sum_kernel(
    src_ptr, ptr_ptr, out_ptr, F, BLOCK_E: tl.constexpr, BLOCK_F: tl.constexpr, ACC: tl.constexpr
):
    seg = tl.program_id(0)
    offs_f = tl.program_id(1) * BLOCK_F + tl.arange(0, BLOCK_F)
    fmask = offs_f < F
    start = tl.load(ptr_ptr + seg)
    end = tl.load(ptr_ptr + seg + 1)
    acc = tl.zeros((BLOCK_F,), dtype=ACC)
    for e0 in range(start, end, BLOCK_E):
        rows = e0 + tl.arange(0, BLOCK_E)
        m = (rows < end)[:, None] & fmask[None, :]
        x = tl.load(src_ptr + rows[:, None] * F + offs_f[None, :], mask=m, other=0.0)
        acc += tl.sum(x.to(ACC), axis=0)
    tl.store(out_ptr + seg * F + offs_f, acc, mask=fmask)


@triton.jit
def _segment_max_kernel(
    src_ptr,
    ptr_ptr,
    out_ptr,
    arg_ptr,
    E,
    F,
    IS_MIN: tl.constexpr,
    BLOCK_E: tl.constexpr,
    BLOCK_F: tl.constexpr,
    ACC: tl.constexpr,
):
    """Running max of ``sign · x`` (sign = −1 for min) and the first row attaining it."""
    seg = tl.program_id(0)
    offs_f = tl.program_id(1) * BLOCK_F + tl.arange(0, BLOCK_F)
    fmask = offs_f < F
    start = tl.load(ptr_ptr + seg)
    end = tl.load(ptr_ptr + seg + 1)
    best = tl.full((BLOCK_F,), float("-inf"), dtype=ACC)
    arg = tl.full((BLOCK_F,), E, dtype=tl.int64)
    for e0 in range(start, end, BLOCK_E):
        rows = e0 + tl.arange(0, BLOCK_E)
        m = (rows < end)[:, None] & fmask[None, :]
        x = tl.load(src_ptr + rows[:, None] * F + offs_f[None, :], mask=m, other=float("-inf")).to(ACC)
        if IS_MIN:
            x = tl.where(m, -x, float("-inf"))
        tile_best = tl.max(x, axis=0)
        pos = tl.where(m & (x == tile_best[None, :]), rows[:, None].to(tl.int64), E)
        tile_arg = tl.min(pos, axis=0)
        # strict >: an earlier chunk wins ties; the second clause admits a first hit equal to -inf
        take = (tile_best > best) | ((arg == E) & (tile_arg < E))
        arg = tl.where(take, tile_arg, arg)
        best = tl.where(take, tile_best, best)
    found = arg < E
    out = tl.where(found, best, 0.0)
    if IS_MIN:
        out = -out
    tl.store(out_ptr + seg * F + offs_f, out, mask=fmask)
    tl.store(arg_ptr + seg * F + offs_f, arg, mask=fmask)


def _acc(ct: torch.dtype):
    return tl.float64 if ct == torch.float64 else tl.float32


def segment_sum(src: torch.Tensor, ptr: torch.Tensor) -> torch.Tensor:
    """Triton twin of :func:`scigen.kernels.reference.segment.segment_sum` for ``src [E, F]``."""
    src, ptr = src.contiguous(), ptr.contiguous()
    num_segments, f = ptr.numel() - 1, src.shape[1]
    ct = compute_dtype(src.dtype)
    out = torch.empty((num_segments, f), dtype=ct, device=src.device)
    if num_segments and f:
        grid = (num_segments, triton.cdiv(f, BLOCK_F))
        _segment_sum_kernel[grid](src, ptr, out, f, BLOCK_E=BLOCK_E, BLOCK_F=BLOCK_F, ACC=_acc(ct))
    return out.to(src.dtype)


def segment_minmax(src: torch.Tensor, ptr: torch.Tensor, is_min: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Triton twin of :func:`scigen.kernels.reference.segment.segment_minmax`."""
    src, ptr = src.contiguous(), ptr.contiguous()
    num_segments, (e, f) = ptr.numel() - 1, src.shape
    ct = compute_dtype(src.dtype)
    out = torch.empty((num_segments, f), dtype=ct, device=src.device)
    arg = torch.empty((num_segments, f), dtype=torch.int64, device=src.device)
    if num_segments and f:
        grid = (num_segments, triton.cdiv(f, BLOCK_F))
        _segment_max_kernel[grid](
            src, ptr, out, arg, e, f, IS_MIN=bool(is_min), BLOCK_E=BLOCK_E, BLOCK_F=BLOCK_F, ACC=_acc(ct)
        )
    return out.to(src.dtype), arg
