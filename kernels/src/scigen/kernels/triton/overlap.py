"""Triton kernel for the box-overlap ops (smooth energy, its gradient, exact overlap area).

One program owns ``BLOCK_I`` rows (objects i) and streams over all objects j in tiles of
``BLOCK_J``; it keeps only per-row accumulators, so no V×V tensor exists anywhere and no atomics are
needed (each row's gradient is written by exactly one program). Every ordered pair (i, j), i != j,
is visited once, so the caller halves the row sums of the pair energy / area.

The launcher :func:`overlap_rows` takes CPU tensors under ``TRITON_INTERPRET=1`` (fp32 and fp16;
the interpreter computes bf16 wrongly) and CUDA tensors otherwise. Arithmetic is fp32.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

MODE_ENERGY = 0
MODE_GRAD = 1
MODE_AREA = 2


@triton.jit
def _softplus(z, k):
    # softplus(k z) / k, stable for large |k z|
    return tl.maximum(z, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(k * z))) / k


@triton.jit
def _overlap_rows_kernel(
    pos_ptr, size_ptr, act_ptr, out_e_ptr, out_g_ptr, V, k,
    MODE: tl.constexpr, BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr,
):
    pid = tl.program_id(0)
    ri = pid * BLOCK_I + tl.arange(0, BLOCK_I)
    vi = ri < V
    xi = tl.load(pos_ptr + 2 * ri, mask=vi, other=0.0).to(tl.float32)
    yi = tl.load(pos_ptr + 2 * ri + 1, mask=vi, other=0.0).to(tl.float32)
    wi = tl.load(size_ptr + 2 * ri, mask=vi, other=0.0).to(tl.float32)
    hi = tl.load(size_ptr + 2 * ri + 1, mask=vi, other=0.0).to(tl.float32)
    ai = (tl.load(act_ptr + ri, mask=vi, other=0) != 0) & vi
    acc0 = tl.zeros([BLOCK_I], dtype=tl.float32)
    acc1 = tl.zeros([BLOCK_I], dtype=tl.float32)
    for start in range(0, V, BLOCK_J):
        rj = start + tl.arange(0, BLOCK_J)
        vj = rj < V
        xj = tl.load(pos_ptr + 2 * rj, mask=vj, other=0.0).to(tl.float32)
        yj = tl.load(pos_ptr + 2 * rj + 1, mask=vj, other=0.0).to(tl.float32)
        wj = tl.load(size_ptr + 2 * rj, mask=vj, other=0.0).to(tl.float32)
        hj = tl.load(size_ptr + 2 * rj + 1, mask=vj, other=0.0).to(tl.float32)
        aj = (tl.load(act_ptr + rj, mask=vj, other=0) != 0) & vj
        pair = ai[:, None] & aj[None, :] & (ri[:, None] != rj[None, :])
        dx = xi[:, None] - xj[None, :]
        dy = yi[:, None] - yj[None, :]
        ox = (wi[:, None] + wj[None, :]) * 0.5 - tl.abs(dx)
        oy = (hi[:, None] + hj[None, :]) * 0.5 - tl.abs(dy)
        if MODE == 0:
            e = _softplus(ox, k) * _softplus(oy, k)
            acc0 += tl.sum(tl.where(pair, e, 0.0), axis=1)
        elif MODE == 1:
            sgx = tl.where(dx > 0, 1.0, tl.where(dx < 0, -1.0, 0.0))
            sgy = tl.where(dy > 0, 1.0, tl.where(dy < 0, -1.0, 0.0))
            gx = -sgx * (1.0 / (1.0 + tl.exp(-k * ox))) * _softplus(oy, k)
            gy = -sgy * (1.0 / (1.0 + tl.exp(-k * oy))) * _softplus(ox, k)
            acc0 += tl.sum(tl.where(pair, gx, 0.0), axis=1)
            acc1 += tl.sum(tl.where(pair, gy, 0.0), axis=1)
        else:
            lx = tl.maximum(tl.minimum(ox, tl.minimum(wi[:, None], wj[None, :])), 0.0)
            ly = tl.maximum(tl.minimum(oy, tl.minimum(hi[:, None], hj[None, :])), 0.0)
            acc0 += tl.sum(tl.where(pair, lx * ly, 0.0), axis=1)
    if MODE == 1:
        tl.store(out_g_ptr + 2 * ri, acc0, mask=vi)
        tl.store(out_g_ptr + 2 * ri + 1, acc1, mask=vi)
    else:
        tl.store(out_e_ptr + ri, acc0, mask=vi)


def overlap_rows(
    pos: torch.Tensor,
    size: torch.Tensor,
    mask: torch.Tensor,
    sharpness: float,
    mode: int,
    block_i: int = 32,
    block_j: int = 64,
) -> torch.Tensor:
    """Per-row sums over ordered pairs j != i (both active).

    ``mode``: ``MODE_ENERGY`` -> [V] Σ_j sp(o^x) sp(o^y); ``MODE_GRAD`` -> [V,2] pair part of dE/dpos_i;
    ``MODE_AREA`` -> [V] Σ_j exact intersection area. fp32 output.
    """
    pos = pos.contiguous()
    size = size.to(pos.dtype).contiguous()
    act = mask.to(torch.int8).contiguous()
    v = pos.shape[0]
    out_e = torch.zeros(v, dtype=torch.float32, device=pos.device)
    out_g = torch.zeros(v, 2, dtype=torch.float32, device=pos.device)
    if v > 0:
        grid = (triton.cdiv(v, block_i),)
        _overlap_rows_kernel[grid](
            pos, size, act, out_e, out_g, v, float(sharpness),
            MODE=mode, BLOCK_I=block_i, BLOCK_J=block_j,
        )
    return out_g if mode == MODE_GRAD else out_e
