"""Triton kernel for the fused EGNN edge step (forward only).

One program owns one node i and streams its molecule's nodes j in tiles of ``BLOCK_J``; the hidden
width H is processed in chunks of ``BLOCK_H`` with ``tl.dot`` for the second edge-MLP layer. No
E × H tensor is materialised: the first layer arrives split per node (``A = h W_a + b1``,
``B = h W_b``, computed by the host as N × H GEMMs), d² and the optional reference-coordinate d² are
formed in registers, and the messages are reduced into node i's row at once.

When the soft-edge gate is on, its logit needs the whole hidden vector before any message can be
weighted, so each j-tile runs the H × H product twice (logits pass, then messages pass). The row of
``m`` is accumulated in place (one program per row: no atomics). Arithmetic is fp32; fp16 inputs use
fp16 ``tl.dot`` with fp32 accumulation, fp32 inputs use IEEE fp32 ``tl.dot``.

Launchers take CPU tensors under ``TRITON_INTERPRET=1`` (fp32/fp16) and CUDA tensors otherwise.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from scigen.kernels.reference.egnn import EPS_NORM


@triton.jit
def _silu(z):
    return z / (1.0 + tl.exp(-z))


@triton.jit
def _phi_chunk(
    a_ptr, b_ptr, w2_ptr, b2_ptr, wd_ptr, i, rj, vj, d2, d2r, H, oc,
    HAS_REF: tl.constexpr, BLOCK_J: tl.constexpr, BLOCK_H: tl.constexpr, DOT_DTYPE: tl.constexpr,
    PRECISION: tl.constexpr,
):
    """phi[:, oc:oc+BLOCK_H] = silu(silu(A_i + B_j + d2 w_d0 + d2r w_d1) @ W2[:, oc] + b2[oc])."""
    offs = tl.arange(0, BLOCK_H)
    co = oc + offs
    cm = co < H
    acc = tl.zeros([BLOCK_J, BLOCK_H], dtype=tl.float32)
    for ic in range(0, H, BLOCK_H):
        ci = ic + offs
        im = ci < H
        a = tl.load(a_ptr + i * H + ci, mask=im, other=0.0)
        b = tl.load(b_ptr + rj[:, None] * H + ci[None, :], mask=vj[:, None] & im[None, :], other=0.0)
        wd0 = tl.load(wd_ptr + ci, mask=im, other=0.0)
        z = a[None, :] + b + d2[:, None] * wd0[None, :]
        if HAS_REF:
            wd1 = tl.load(wd_ptr + H + ci, mask=im, other=0.0)
            z += d2r[:, None] * wd1[None, :]
        z = _silu(z)
        w2 = tl.load(w2_ptr + ci[:, None] * H + co[None, :], mask=im[:, None] & cm[None, :], other=0.0)
        acc += tl.dot(z.to(DOT_DTYPE), w2.to(DOT_DTYPE), input_precision=PRECISION)
    b2 = tl.load(b2_ptr + co, mask=cm, other=0.0).to(tl.float32)
    return _silu(acc + b2[None, :]), co, cm


@triton.jit
def _egnn_kernel(
    a_ptr, b_ptr, x_ptr, xr_ptr, start_ptr, end_ptr, w2_ptr, b2_ptr, wd_ptr, watt_ptr, wx_ptr,
    m_ptr, dx_ptr, batt_ptr, H, coords_range, norm_constant, inv_norm_factor,
    HAS_REF: tl.constexpr, GATE: tl.constexpr, COORD: tl.constexpr,
    BLOCK_J: tl.constexpr, BLOCK_H: tl.constexpr, DOT_DTYPE: tl.constexpr, PRECISION: tl.constexpr,
):
    i = tl.program_id(0)
    gs = tl.load(start_ptr + i)
    ge = tl.load(end_ptr + i)
    xi0 = tl.load(x_ptr + 3 * i).to(tl.float32)
    xi1 = tl.load(x_ptr + 3 * i + 1).to(tl.float32)
    xi2 = tl.load(x_ptr + 3 * i + 2).to(tl.float32)
    if HAS_REF:
        ri0 = tl.load(xr_ptr + 3 * i).to(tl.float32)
        ri1 = tl.load(xr_ptr + 3 * i + 1).to(tl.float32)
        ri2 = tl.load(xr_ptr + 3 * i + 2).to(tl.float32)
    offs_j = tl.arange(0, BLOCK_J)
    acc_x0 = tl.zeros([BLOCK_J], dtype=tl.float32)
    acc_x1 = tl.zeros([BLOCK_J], dtype=tl.float32)
    acc_x2 = tl.zeros([BLOCK_J], dtype=tl.float32)
    for j0 in range(gs, ge, BLOCK_J):
        rj = j0 + offs_j
        vj = (rj < ge) & (rj != i)
        d0 = xi0 - tl.load(x_ptr + 3 * rj, mask=vj, other=0.0).to(tl.float32)
        d1 = xi1 - tl.load(x_ptr + 3 * rj + 1, mask=vj, other=0.0).to(tl.float32)
        d2_ = xi2 - tl.load(x_ptr + 3 * rj + 2, mask=vj, other=0.0).to(tl.float32)
        d2 = d0 * d0 + d1 * d1 + d2_ * d2_
        d2r = d2
        if HAS_REF:
            e0 = ri0 - tl.load(xr_ptr + 3 * rj, mask=vj, other=0.0).to(tl.float32)
            e1 = ri1 - tl.load(xr_ptr + 3 * rj + 1, mask=vj, other=0.0).to(tl.float32)
            e2 = ri2 - tl.load(xr_ptr + 3 * rj + 2, mask=vj, other=0.0).to(tl.float32)
            d2r = e0 * e0 + e1 * e1 + e2 * e2
        logit_att = tl.zeros([BLOCK_J], dtype=tl.float32)
        logit_x = tl.zeros([BLOCK_J], dtype=tl.float32)
        for oc in range(0, H, BLOCK_H):
            phi, co, cm = _phi_chunk(
                a_ptr, b_ptr, w2_ptr, b2_ptr, wd_ptr, i, rj, vj, d2, d2r, H, oc,
                HAS_REF, BLOCK_J, BLOCK_H, DOT_DTYPE, PRECISION,
            )
            if GATE:
                wa = tl.load(watt_ptr + co, mask=cm, other=0.0).to(tl.float32)
                logit_att += tl.sum(phi * wa[None, :], axis=1)
            else:
                part = tl.sum(tl.where(vj[:, None], phi, 0.0), axis=0)
                prev = tl.load(m_ptr + i * H + co, mask=cm, other=0.0)
                tl.store(m_ptr + i * H + co, prev + part * inv_norm_factor, mask=cm)
            if COORD:
                wx = tl.load(wx_ptr + co, mask=cm, other=0.0).to(tl.float32)
                logit_x += tl.sum(phi * wx[None, :], axis=1)
        if GATE:
            b_att = tl.load(batt_ptr).to(tl.float32)
            gate = 1.0 / (1.0 + tl.exp(-(logit_att + b_att)))
            gate = tl.where(vj, gate, 0.0)
            for oc in range(0, H, BLOCK_H):
                phi, co, cm = _phi_chunk(
                    a_ptr, b_ptr, w2_ptr, b2_ptr, wd_ptr, i, rj, vj, d2, d2r, H, oc,
                    HAS_REF, BLOCK_J, BLOCK_H, DOT_DTYPE, PRECISION,
                )
                part = tl.sum(phi * gate[:, None], axis=0)
                prev = tl.load(m_ptr + i * H + co, mask=cm, other=0.0)
                tl.store(m_ptr + i * H + co, prev + part * inv_norm_factor, mask=cm)
        if COORD:
            t = 2.0 / (1.0 + tl.exp(-2.0 * logit_x)) - 1.0  # tanh
            coef = t * coords_range / (tl.sqrt(d2 + 1e-8) + norm_constant)
            coef = tl.where(vj, coef, 0.0)
            acc_x0 += coef * d0
            acc_x1 += coef * d1
            acc_x2 += coef * d2_
    if COORD:
        tl.store(dx_ptr + 3 * i, tl.sum(acc_x0, axis=0) * inv_norm_factor)
        tl.store(dx_ptr + 3 * i + 1, tl.sum(acc_x1, axis=0) * inv_norm_factor)
        tl.store(dx_ptr + 3 * i + 2, tl.sum(acc_x2, axis=0) * inv_norm_factor)


def egnn_aggregate(
    h, x, x_ref, ptr, W_a, W_b, b1, W2, b2, w_d, w_att, b_att, w_x,
    use_gate, use_coord, coords_range, norm_constant, normalization_factor,
    block_j: int = 16, block_h: int | None = None,
):
    """Same signature and result as :func:`scigen.kernels.reference.egnn.egnn_aggregate` (fp32 math)."""
    assert EPS_NORM == 1e-8  # the kernel hard-codes EDM's 1e-8
    n, hid = h.shape[0], W2.shape[1]
    half = h.dtype == torch.float16
    a = (h.float() @ W_a.float() + b1.float()).contiguous()
    b = (h.float() @ W_b.float()).contiguous()
    ptr = ptr.long()
    counts = ptr.diff()
    node_mol = torch.repeat_interleave(torch.arange(counts.numel(), device=h.device), counts, output_size=n)
    start = ptr[:-1][node_mol].to(torch.int32).contiguous()
    end = ptr[1:][node_mol].to(torch.int32).contiguous()
    m = torch.zeros(n, hid, dtype=torch.float32, device=h.device)
    dx = torch.zeros(n, 3, dtype=torch.float32, device=h.device)
    if n == 0:
        return m.to(h.dtype), dx.to(x.dtype)
    if block_h is None:
        block_h = max(16, min(64, triton.next_power_of_2(hid)))
    w2 = (W2.half() if half else W2.float()).contiguous()
    _egnn_kernel[(n,)](
        a, b, x.float().contiguous(), x_ref.float().contiguous(), start, end, w2, b2.float().contiguous(),
        w_d.float().contiguous(), w_att.float().contiguous(), w_x.float().contiguous(), m, dx,
        b_att.float().reshape(-1).contiguous(), hid, float(coords_range), float(norm_constant),
        1.0 / float(normalization_factor),
        HAS_REF=w_d.shape[0] > 1, GATE=bool(use_gate), COORD=bool(use_coord),
        BLOCK_J=block_j, BLOCK_H=block_h, DOT_DTYPE=tl.float16 if half else tl.float32,
        PRECISION="tf32" if half else "ieee",  # fp16 operands ignore it; fp32 gets exact IEEE products
    )
    return m.to(h.dtype), dx.to(x.dtype)
