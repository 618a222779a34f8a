"""Triton kernels for the multi-bandwidth RBF MMD² (forward pair sums and backward weight sums).

Launchers accept CUDA tensors, or CPU tensors when ``TRITON_INTERPRET=1`` was set before this module
was imported (that is how the CPU test-suite runs the kernel bodies). Inputs may be fp16/fp32/fp64;
the kernels compute in fp32 (fp64 for fp64 inputs) and the host sums per-block partials in float64,
so results are deterministic (no atomics).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from scigen.kernels.reference.mmd import assemble_grads, combine, compute_dtype

BLOCK_M = 32
BLOCK_N = 32
BLOCK_D = 8


@triton.jit
def _sq_dist_tile(
    a_ptr,
    b_ptr,
    rows,
    cols,
    rmask,
    cmask,
    D,
    stride_a,
    stride_b,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
    ACC: tl.constexpr,
):
    """‖a_r − b_c‖² for a [BLOCK_M, BLOCK_N] tile, summed over feature chunks of BLOCK_D."""
    offs_d = tl.arange(0, BLOCK_D)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for d0 in range(0, D, BLOCK_D):
        dm = (d0 + offs_d) < D
        a = tl.load(
            a_ptr + rows[:, None] * stride_a + d0 + offs_d[None, :],
            mask=rmask[:, None] & dm[None, :],
            other=0.0,
        )
        b = tl.load(
            b_ptr + cols[:, None] * stride_b + d0 + offs_d[None, :],
            mask=cmask[:, None] & dm[None, :],
            other=0.0,
        )
        diff = a.to(ACC)[:, None, :] - b.to(ACC)[None, :, :]
        acc += tl.sum(diff * diff, axis=2)
    return acc


@triton.jit
def _rbf_pair_sum_kernel(
    a_ptr,
    b_ptr,
    coef_ptr,
    out_ptr,
    N,
    M,
    D,
    K,
    stride_a,
    stride_b,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
    ACC: tl.constexpr,
):
    """out[pid_m, pid_n] = Σ over the tile of Σ_j exp(−‖a−b‖² · coef_j)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rmask = rows < N
    cmask = cols < M
    d2 = _sq_dist_tile(
        a_ptr, b_ptr, rows, cols, rmask, cmask, D, stride_a, stride_b, BLOCK_M, BLOCK_N, BLOCK_D, ACC
    )
    valid = rmask[:, None] & cmask[None, :]
    acc = tl.zeros_like(d2)
    for j in range(0, K):
        c = tl.load(coef_ptr + j).to(ACC)
        acc += tl.exp(-d2 * c)
    acc = tl.where(valid, acc, 0.0)
    tl.store(out_ptr + pid_m * tl.num_programs(1) + pid_n, tl.sum(tl.sum(acc, axis=1), axis=0))


@triton.jit
def _rbf_weight_sum_kernel(
    a_ptr,
    b_ptr,
    coef_ptr,
    s_ptr,
    v_ptr,
    N,
    M,
    D,
    K,
    stride_a,
    stride_b,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
    ACC: tl.constexpr,
):
    """Program (pid_m, pid_d): s_i = Σ_l w(a_i, b_l) and v_i[d-chunk] = Σ_l w(a_i, b_l) b_l[d-chunk],
    with w = Σ_j 2 coef_j exp(−‖a−b‖² coef_j); loops over all columns, so no atomics."""
    pid_m = tl.program_id(0)
    pid_d = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rmask = rows < N
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    dmask = offs_d < D
    s_acc = tl.zeros((BLOCK_M,), dtype=ACC)
    v_acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=ACC)
    for n0 in range(0, M, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        cmask = cols < M
        d2 = _sq_dist_tile(
            a_ptr, b_ptr, rows, cols, rmask, cmask, D, stride_a, stride_b, BLOCK_M, BLOCK_N, BLOCK_D, ACC
        )
        w = tl.zeros_like(d2)
        for j in range(0, K):
            c = tl.load(coef_ptr + j).to(ACC)
            w += 2.0 * c * tl.exp(-d2 * c)
        w = tl.where(rmask[:, None] & cmask[None, :], w, 0.0)
        s_acc += tl.sum(w, axis=1)
        b = tl.load(
            b_ptr + cols[:, None] * stride_b + offs_d[None, :],
            mask=cmask[:, None] & dmask[None, :],
            other=0.0,
        )
        v_acc += tl.sum(w[:, :, None] * b.to(ACC)[None, :, :], axis=1)
    tl.store(v_ptr + rows[:, None] * D + offs_d[None, :], v_acc, mask=rmask[:, None] & dmask[None, :])
    if pid_d == 0:
        tl.store(s_ptr + rows, s_acc, mask=rmask)


def _tl_dtype(ct: torch.dtype):
    return tl.float64 if ct == torch.float64 else tl.float32


def _coef(bandwidths: torch.Tensor, ct: torch.dtype) -> torch.Tensor:
    return (0.5 / bandwidths.to(ct).pow(2)).contiguous()


def rbf_pair_sum(a: torch.Tensor, b: torch.Tensor, bandwidths: torch.Tensor) -> torch.Tensor:
    """``Σ_{i, l} k(a_i, b_l)`` as a float64 scalar (Triton twin of the reference function)."""
    a, b = a.contiguous(), b.contiguous()
    ct = compute_dtype(a.dtype)
    n, m, d = a.shape[0], b.shape[0], a.shape[1]
    grid = (triton.cdiv(n, BLOCK_M), triton.cdiv(m, BLOCK_N))
    partials = torch.empty(grid, dtype=ct, device=a.device)
    _rbf_pair_sum_kernel[grid](
        a,
        b,
        _coef(bandwidths, ct),
        partials,
        n,
        m,
        d,
        bandwidths.numel(),
        a.stride(0),
        b.stride(0),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_D=BLOCK_D,
        ACC=_tl_dtype(ct),
    )
    return partials.to(torch.float64).sum()


def rbf_weight_sums(
    a: torch.Tensor, b: torch.Tensor, bandwidths: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(s, v)`` as in :func:`scigen.kernels.reference.mmd.rbf_weight_sums` (compute dtype)."""
    a, b = a.contiguous(), b.contiguous()
    ct = compute_dtype(a.dtype)
    n, m, d = a.shape[0], b.shape[0], a.shape[1]
    s = torch.empty(n, dtype=ct, device=a.device)
    v = torch.empty(n, d, dtype=ct, device=a.device)
    grid = (triton.cdiv(n, BLOCK_M), triton.cdiv(d, BLOCK_D))
    _rbf_weight_sum_kernel[grid](
        a,
        b,
        _coef(bandwidths, ct),
        s,
        v,
        n,
        m,
        d,
        bandwidths.numel(),
        a.stride(0),
        b.stride(0),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_D=BLOCK_D,
        ACC=_tl_dtype(ct),
    )
    return s, v


def mmd_rbf(x: torch.Tensor, y: torch.Tensor, bandwidths: torch.Tensor, unbiased: bool) -> torch.Tensor:
    """MMD² (0-dim, ``x.dtype``) computed with the Triton pair-sum kernel."""
    n, m, k = x.shape[0], y.shape[0], bandwidths.numel()
    sxx = rbf_pair_sum(x, x, bandwidths)
    syy = rbf_pair_sum(y, y, bandwidths)
    sxy = rbf_pair_sum(x, y, bandwidths)
    return combine(sxx, syy, sxy, n, m, k, unbiased).to(x.dtype)


def mmd_rbf_backward(
    grad: torch.Tensor, x: torch.Tensor, y: torch.Tensor, bandwidths: torch.Tensor, unbiased: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(grad · ∂MMD²/∂x, grad · ∂MMD²/∂y)`` with the Triton weight-sum kernel."""
    sums = (
        rbf_weight_sums(x, x, bandwidths),
        rbf_weight_sums(x, y, bandwidths),
        rbf_weight_sums(y, y, bandwidths),
        rbf_weight_sums(y, x, bandwidths),
    )
    return assemble_grads(grad, x, y, sums, unbiased)
