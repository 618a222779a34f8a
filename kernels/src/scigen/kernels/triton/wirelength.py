"""Triton net-parallel kernels for HPWL and WA wirelength (forward and pin gradients).

One program per net (DREAMPlace's "net-parallel" scheme) streams that net's pins in chunks of
``BLOCK``; both axes are handled together. Backward kernels write per-pin gradients (each pin belongs
to one net, so no atomics); the caller scatters them to objects. Arithmetic is fp32.

Launchers take CPU tensors under ``TRITON_INTERPRET=1`` (fp32/fp16 only) and CUDA tensors otherwise.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK = 64


@triton.jit
def _net_minmax(pins_ptr, beg, end, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mx_x = tl.full([BLOCK], float("-inf"), tl.float32)
    mx_y = tl.full([BLOCK], float("-inf"), tl.float32)
    mn_x = tl.full([BLOCK], float("inf"), tl.float32)
    mn_y = tl.full([BLOCK], float("inf"), tl.float32)
    for s in range(beg, end, BLOCK):
        p = s + offs
        m = p < end
        x = tl.load(pins_ptr + 2 * p, mask=m, other=0.0).to(tl.float32)
        y = tl.load(pins_ptr + 2 * p + 1, mask=m, other=0.0).to(tl.float32)
        mx_x = tl.maximum(mx_x, tl.where(m, x, float("-inf")))
        mx_y = tl.maximum(mx_y, tl.where(m, y, float("-inf")))
        mn_x = tl.minimum(mn_x, tl.where(m, x, float("inf")))
        mn_y = tl.minimum(mn_y, tl.where(m, y, float("inf")))
    return tl.max(mx_x, axis=0), tl.max(mx_y, axis=0), tl.min(mn_x, axis=0), tl.min(mn_y, axis=0)


@triton.jit
def _hpwl_kernel(pins_ptr, ptr_ptr, grad_ptr, out_ptr, BACKWARD: tl.constexpr, BLOCK: tl.constexpr):
    n = tl.program_id(0)
    beg = tl.load(ptr_ptr + n)
    end = tl.load(ptr_ptr + n + 1)
    mx_x, mx_y, mn_x, mn_y = _net_minmax(pins_ptr, beg, end, BLOCK)
    offs = tl.arange(0, BLOCK)
    if BACKWARD:
        # subgradient: pins tied at the max (min) share +g (-g) evenly, like torch's scatter_reduce
        g = tl.load(grad_ptr + n).to(tl.float32)
        c_mx_x = tl.zeros([BLOCK], tl.float32)
        c_mx_y = tl.zeros([BLOCK], tl.float32)
        c_mn_x = tl.zeros([BLOCK], tl.float32)
        c_mn_y = tl.zeros([BLOCK], tl.float32)
        for s in range(beg, end, BLOCK):
            p = s + offs
            m = p < end
            x = tl.load(pins_ptr + 2 * p, mask=m, other=0.0).to(tl.float32)
            y = tl.load(pins_ptr + 2 * p + 1, mask=m, other=0.0).to(tl.float32)
            c_mx_x += tl.where(m & (x == mx_x), 1.0, 0.0)
            c_mx_y += tl.where(m & (y == mx_y), 1.0, 0.0)
            c_mn_x += tl.where(m & (x == mn_x), 1.0, 0.0)
            c_mn_y += tl.where(m & (y == mn_y), 1.0, 0.0)
        gmx_x = g / tl.maximum(tl.sum(c_mx_x, axis=0), 1.0)  # count is 0 only for empty nets
        gmx_y = g / tl.maximum(tl.sum(c_mx_y, axis=0), 1.0)
        gmn_x = g / tl.maximum(tl.sum(c_mn_x, axis=0), 1.0)
        gmn_y = g / tl.maximum(tl.sum(c_mn_y, axis=0), 1.0)
        for s in range(beg, end, BLOCK):
            p = s + offs
            m = p < end
            x = tl.load(pins_ptr + 2 * p, mask=m, other=0.0).to(tl.float32)
            y = tl.load(pins_ptr + 2 * p + 1, mask=m, other=0.0).to(tl.float32)
            gx = tl.where(x == mx_x, gmx_x, 0.0) - tl.where(x == mn_x, gmn_x, 0.0)
            gy = tl.where(y == mx_y, gmx_y, 0.0) - tl.where(y == mn_y, gmn_y, 0.0)
            tl.store(out_ptr + 2 * p, gx, mask=m)
            tl.store(out_ptr + 2 * p + 1, gy, mask=m)
    else:
        val = tl.where(end > beg, (mx_x - mn_x) + (mx_y - mn_y), 0.0)
        tl.store(out_ptr + n, val)


@triton.jit
def _wa_kernel(pins_ptr, ptr_ptr, grad_ptr, out_ptr, inv_gamma, BACKWARD: tl.constexpr, BLOCK: tl.constexpr):
    n = tl.program_id(0)
    beg = tl.load(ptr_ptr + n)
    end = tl.load(ptr_ptr + n + 1)
    mx_x, mx_y, mn_x, mn_y = _net_minmax(pins_ptr, beg, end, BLOCK)
    offs = tl.arange(0, BLOCK)
    sa_x = tl.zeros([BLOCK], tl.float32)
    sa_y = tl.zeros([BLOCK], tl.float32)
    sxa_x = tl.zeros([BLOCK], tl.float32)
    sxa_y = tl.zeros([BLOCK], tl.float32)
    sb_x = tl.zeros([BLOCK], tl.float32)
    sb_y = tl.zeros([BLOCK], tl.float32)
    sxb_x = tl.zeros([BLOCK], tl.float32)
    sxb_y = tl.zeros([BLOCK], tl.float32)
    for s in range(beg, end, BLOCK):
        p = s + offs
        m = p < end
        x = tl.load(pins_ptr + 2 * p, mask=m, other=0.0).to(tl.float32)
        y = tl.load(pins_ptr + 2 * p + 1, mask=m, other=0.0).to(tl.float32)
        ax = tl.where(m, tl.exp((x - mx_x) * inv_gamma), 0.0)
        ay = tl.where(m, tl.exp((y - mx_y) * inv_gamma), 0.0)
        bx = tl.where(m, tl.exp((mn_x - x) * inv_gamma), 0.0)
        by = tl.where(m, tl.exp((mn_y - y) * inv_gamma), 0.0)
        sa_x += ax
        sa_y += ay
        sxa_x += x * ax
        sxa_y += y * ay
        sb_x += bx
        sb_y += by
        sxb_x += x * bx
        sxb_y += y * by
    # non-empty nets have sums >= 1 (the extreme pin contributes exp(0)); empty nets give 0 / 1 = 0
    Sa_x = tl.maximum(tl.sum(sa_x, axis=0), 1.0)
    Sa_y = tl.maximum(tl.sum(sa_y, axis=0), 1.0)
    Sb_x = tl.maximum(tl.sum(sb_x, axis=0), 1.0)
    Sb_y = tl.maximum(tl.sum(sb_y, axis=0), 1.0)
    plus_x = tl.sum(sxa_x, axis=0) / Sa_x
    plus_y = tl.sum(sxa_y, axis=0) / Sa_y
    minus_x = tl.sum(sxb_x, axis=0) / Sb_x
    minus_y = tl.sum(sxb_y, axis=0) / Sb_y
    if BACKWARD:
        g = tl.load(grad_ptr + n).to(tl.float32)
        for s in range(beg, end, BLOCK):
            p = s + offs
            m = p < end
            x = tl.load(pins_ptr + 2 * p, mask=m, other=0.0).to(tl.float32)
            y = tl.load(pins_ptr + 2 * p + 1, mask=m, other=0.0).to(tl.float32)
            ax = tl.exp((x - mx_x) * inv_gamma) / Sa_x
            ay = tl.exp((y - mx_y) * inv_gamma) / Sa_y
            bx = tl.exp((mn_x - x) * inv_gamma) / Sb_x
            by = tl.exp((mn_y - y) * inv_gamma) / Sb_y
            gx = ax * (1.0 + (x - plus_x) * inv_gamma) - bx * (1.0 - (x - minus_x) * inv_gamma)
            gy = ay * (1.0 + (y - plus_y) * inv_gamma) - by * (1.0 - (y - minus_y) * inv_gamma)
            tl.store(out_ptr + 2 * p, g * gx, mask=m)
            tl.store(out_ptr + 2 * p + 1, g * gy, mask=m)
    else:
        tl.store(out_ptr + n, (plus_x - minus_x) + (plus_y - minus_y))


def _prep(pins: torch.Tensor, net_ptr: torch.Tensor):
    return pins.contiguous(), net_ptr.to(torch.int32).contiguous(), net_ptr.numel() - 1


def hpwl(pins: torch.Tensor, net_ptr: torch.Tensor) -> torch.Tensor:
    """[N] fp32 exact HPWL per net."""
    pins, ptr, n = _prep(pins, net_ptr)
    out = torch.zeros(n, dtype=torch.float32, device=pins.device)
    if n > 0:
        _hpwl_kernel[(n,)](pins, ptr, out, out, BACKWARD=False, BLOCK=BLOCK)
    return out


def hpwl_pin_grad(grad: torch.Tensor, pins: torch.Tensor, net_ptr: torch.Tensor) -> torch.Tensor:
    """[P, 2] fp32 ``Σ_n grad[n] ∂HPWL_n/∂pins``."""
    pins, ptr, n = _prep(pins, net_ptr)
    out = torch.zeros(pins.shape[0], 2, dtype=torch.float32, device=pins.device)
    if n > 0 and pins.shape[0] > 0:
        _hpwl_kernel[(n,)](pins, ptr, grad.float().contiguous(), out, BACKWARD=True, BLOCK=BLOCK)
    return out


def wa(pins: torch.Tensor, net_ptr: torch.Tensor, gamma: float) -> torch.Tensor:
    """[N] fp32 weighted-average wirelength per net."""
    pins, ptr, n = _prep(pins, net_ptr)
    out = torch.zeros(n, dtype=torch.float32, device=pins.device)
    if n > 0:
        _wa_kernel[(n,)](pins, ptr, out, out, 1.0 / float(gamma), BACKWARD=False, BLOCK=BLOCK)
    return out


def wa_pin_grad(grad: torch.Tensor, pins: torch.Tensor, net_ptr: torch.Tensor, gamma: float) -> torch.Tensor:
    """[P, 2] fp32 ``Σ_n grad[n] ∂WA_n/∂pins``."""
    pins, ptr, n = _prep(pins, net_ptr)
    out = torch.zeros(pins.shape[0], 2, dtype=torch.float32, device=pins.device)
    if n > 0 and pins.shape[0] > 0:
        _wa_kernel[(n,)](pins, ptr, grad.float().contiguous(), out, 1.0 / float(gamma), BACKWARD=True, BLOCK=BLOCK)
    return out
