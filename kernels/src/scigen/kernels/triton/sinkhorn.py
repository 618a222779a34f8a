"""Triton forward for the batched log-domain Sinkhorn: one row-logsumexp kernel for both half-steps.

The column half-step runs the same kernel on a contiguous transposed copy of the cost (one extra
``B·n·m`` buffer, coalesced loads). The logsumexp is computed online over column chunks (running max
and rescaled sum), so any ``m`` fits. The backward pass is the PyTorch adjoint in
:func:`scigen.kernels.reference.sinkhorn.sinkhorn_potentials_backward` (it runs on the GPU too).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from scigen.kernels.reference.sinkhorn import compute_dtype

BLOCK_R = 16
BLOCK_L = 64


@triton.jit
def _row_lse_step_kernel(
    c_ptr,
    h_ptr,
    lw_ptr,
    out_ptr,
    R,
    L,
    eps,
    BLOCK_R: tl.constexpr,
    BLOCK_L: tl.constexpr,
    ACC: tl.constexpr,
):
    """out[b, r] = eps·lw[b, r] − eps·LSE_l((h[b, l] − c[b, r, l]) / eps); c is [B, R, L] contiguous."""
    bid = tl.program_id(0)
    rows = tl.program_id(1) * BLOCK_R + tl.arange(0, BLOCK_R)
    rmask = rows < R
    inv_eps = 1.0 / eps
    run_max = tl.full((BLOCK_R,), float("-inf"), dtype=ACC)
    run_sum = tl.zeros((BLOCK_R,), dtype=ACC)
    for l0 in range(0, L, BLOCK_L):
        cols = l0 + tl.arange(0, BLOCK_L)
        cmask = cols < L
        h = tl.load(h_ptr + bid * L + cols, mask=cmask, other=0.0).to(ACC)
        c = tl.load(
            c_ptr + bid * R * L + rows[:, None] * L + cols[None, :],
            mask=rmask[:, None] & cmask[None, :],
            other=0.0,
        ).to(ACC)
        z = tl.where(cmask[None, :], (h[None, :] - c) * inv_eps, float("-inf"))
        new_max = tl.maximum(run_max, tl.max(z, axis=1))
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(tl.exp(z - new_max[:, None]), axis=1)
        run_max = new_max
    lw = tl.load(lw_ptr + bid * R + rows, mask=rmask, other=0.0).to(ACC)
    out = eps * lw - eps * (run_max + tl.log(run_sum))
    tl.store(out_ptr + bid * R + rows, out, mask=rmask)


def half_step(c: torch.Tensor, h: torch.Tensor, log_w: torch.Tensor, eps: float) -> torch.Tensor:
    """Triton twin of :func:`scigen.kernels.reference.sinkhorn.half_step` (``c`` contiguous, compute dtype)."""
    bsz, r, l = c.shape
    out = torch.empty(bsz, r, dtype=c.dtype, device=c.device)
    grid = (bsz, triton.cdiv(r, BLOCK_R))
    acc = tl.float64 if c.dtype == torch.float64 else tl.float32
    _row_lse_step_kernel[grid](c, h, log_w, out, r, l, float(eps), BLOCK_R=BLOCK_R, BLOCK_L=BLOCK_L, ACC=acc)
    return out


def sinkhorn_potentials(
    cost: torch.Tensor, a: torch.Tensor, b: torch.Tensor, eps: float, n_iters: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Triton twin of :func:`scigen.kernels.reference.sinkhorn.sinkhorn_potentials`."""
    ct = compute_dtype(cost.dtype)
    c = cost.to(ct).contiguous()
    c_t = c.transpose(1, 2).contiguous()
    la, lb = a.to(ct).log().contiguous(), b.to(ct).log().contiguous()
    bsz, n, m = c.shape
    f = torch.zeros(bsz, n, dtype=ct, device=c.device)
    g = torch.zeros(bsz, m, dtype=ct, device=c.device)
    f_hist = c.new_empty((n_iters, bsz, n))
    g_hist = c.new_empty((n_iters, bsz, m))
    for t in range(n_iters):
        f_hist[t] = f
        g = half_step(c_t, f, lb, eps)
        g_hist[t] = g
        f = half_step(c, g, la, eps)
    return f, g, f_hist, g_hist
