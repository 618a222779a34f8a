"""Pure-PyTorch reference for the box-overlap ops (the CPU kernel and the test oracle).

All functions here are tiled over row blocks of ``tile_elements // V`` objects, so peak memory is
O(tile_elements), never O(V²). Definitions (documented once, in :mod:`scigen.kernels.overlap`):

* ``sp_k(z) = softplus(k·z) / k`` — a smooth ReLU with ``relu(z) <= sp_k(z) <= relu(z) + log(2)/k``.
* pair penetration lengths ``o^x_ij = (w_i + w_j)/2 - |x_i - x_j|`` (same for y with heights).
* smooth energy ``E = Σ_{i<j, i,j active} sp_k(o^x_ij)·sp_k(o^y_ij) + Σ_{i active} B_i`` with the
  boundary term ``B_i = h_i·[sp_k(x_i + w_i/2 - x_hi) + sp_k(x_lo - x_i + w_i/2)]
  + w_i·[sp_k(y_i + h_i/2 - y_hi) + sp_k(y_lo - y_i + h_i/2)]``.
* exact overlap ``A = Σ_{i<j, i,j active} relu(min(o^x_ij, w_i, w_j))·relu(min(o^y_ij, h_i, h_j))``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

# Elements of the largest [rows, V] pair tile formed at once (rows = tile_elements // V, at least 1).
DEFAULT_TILE_ELEMENTS = 1 << 20


def smooth_relu(z: torch.Tensor, k: float) -> torch.Tensor:
    """``softplus(k·z)/k`` computed stably (``F.softplus`` with ``beta=k``)."""
    return F.softplus(z, beta=k, threshold=20.0)


def boundary_energy_and_grad(
    pos: torch.Tensor, size: torch.Tensor, mask: torch.Tensor, k: float, canvas: tuple[float, ...]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Boundary term ``Σ_i B_i`` (float64-accumulated scalar in pos.dtype) and its gradient wrt pos."""
    lo = pos.new_tensor([canvas[0], canvas[2]])
    hi = pos.new_tensor([canvas[1], canvas[3]])
    p = pos.float() if pos.dtype in (torch.float16, torch.bfloat16) else pos
    s = size.to(p.dtype)
    lo, hi = lo.to(p.dtype), hi.to(p.dtype)
    over_hi = p + s / 2 - hi  # [V,2] protrusion past the upper edge (if > 0)
    over_lo = lo - p + s / 2  # protrusion past the lower edge
    other = s.flip(-1)  # the extent along the other axis multiplies the protrusion length
    m = mask.to(p.dtype)[:, None]
    energy = ((smooth_relu(over_hi, k) + smooth_relu(over_lo, k)) * other * m).sum()
    grad = (torch.sigmoid(k * over_hi) - torch.sigmoid(k * over_lo)) * other * m
    return energy.to(pos.dtype), grad.to(pos.dtype)


def _pair_tile(
    pos_i: torch.Tensor, size_i: torch.Tensor, pos: torch.Tensor, size: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Signed differences d = p_i - p_j [B,V,2] and penetration lengths o [B,V,2]."""
    d = pos_i[:, None, :] - pos[None, :, :]
    o = (size_i[:, None, :] + size[None, :, :]) / 2 - d.abs()
    return d, o


def _pair_weight(
    rows: torch.Tensor, mask_i: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """[B,V] 1 for active pairs i != j, else 0."""
    w = (mask_i[:, None] & mask[None, :]).clone()
    w[torch.arange(rows.shape[0], device=rows.device), rows] = False
    return w


def overlap_energy_reference(
    pos: torch.Tensor,
    size: torch.Tensor,
    mask: torch.Tensor,
    sharpness: float,
    canvas: tuple[float, ...],
    tile_elements: int = DEFAULT_TILE_ELEMENTS,
) -> torch.Tensor:
    """Smooth overlap + boundary energy (scalar, dtype of ``pos``; accumulated in fp32/fp64)."""
    acc_dtype = torch.float64 if pos.dtype == torch.float64 else torch.float32
    p, s = pos.to(acc_dtype), size.to(acc_dtype)
    k = float(sharpness)
    v = p.shape[0]
    total = torch.zeros((), dtype=acc_dtype, device=pos.device)
    block = max(1, tile_elements // max(1, v))
    for start in range(0, v, block):
        rows = torch.arange(start, min(start + block, v), device=pos.device)
        _, o = _pair_tile(p[rows], s[rows], p, s)
        w = _pair_weight(rows, mask[rows], mask)
        e = smooth_relu(o[..., 0], k) * smooth_relu(o[..., 1], k)
        total = total + torch.where(w, e, torch.zeros_like(e)).sum()
    total = total / 2  # every unordered pair was visited twice
    b, _ = boundary_energy_and_grad(p, s, mask, k, canvas)
    return (total + b).to(pos.dtype)


def overlap_energy_grad_reference(
    pos: torch.Tensor,
    size: torch.Tensor,
    mask: torch.Tensor,
    sharpness: float,
    canvas: tuple[float, ...],
    tile_elements: int = DEFAULT_TILE_ELEMENTS,
) -> torch.Tensor:
    """Analytic gradient dE/dpos [V,2] of :func:`overlap_energy_reference` (tiled, no V×V tensor).

    For a pair, ``∂/∂x_i [sp(o^x) sp(o^y)] = -sign(x_i - x_j)·σ(k·o^x)·sp(o^y)`` (sign(0) = 0); the
    sum over ordered pairs j != i of this gives the pair part of the gradient of x_i.
    """
    acc_dtype = torch.float64 if pos.dtype == torch.float64 else torch.float32
    p, s = pos.to(acc_dtype), size.to(acc_dtype)
    k = float(sharpness)
    v = p.shape[0]
    grad = torch.zeros_like(p)
    block = max(1, tile_elements // max(1, v))
    for start in range(0, v, block):
        rows = torch.arange(start, min(start + block, v), device=pos.device)
        d, o = _pair_tile(p[rows], s[rows], p, s)
        w = _pair_weight(rows, mask[rows], mask).to(acc_dtype)
        sp = smooth_relu(o, k)
        sig = torch.sigmoid(k * o)
        gx = -torch.sign(d[..., 0]) * sig[..., 0] * sp[..., 1]
        gy = -torch.sign(d[..., 1]) * sig[..., 1] * sp[..., 0]
        grad[rows] = torch.stack([(gx * w).sum(1), (gy * w).sum(1)], dim=-1)
    _, gb = boundary_energy_and_grad(p, s, mask, k, canvas)
    return (grad + gb).to(pos.dtype)


def total_overlap_area_reference(
    pos: torch.Tensor, size: torch.Tensor, mask: torch.Tensor, tile_elements: int = DEFAULT_TILE_ELEMENTS
) -> torch.Tensor:
    """Exact Σ_{i<j} area(box_i ∩ box_j) over active pairs (scalar, dtype of ``pos``)."""
    acc_dtype = torch.float64 if pos.dtype == torch.float64 else torch.float32
    p, s = pos.to(acc_dtype), size.to(acc_dtype)
    v = p.shape[0]
    total = torch.zeros((), dtype=acc_dtype, device=pos.device)
    block = max(1, tile_elements // max(1, v))
    for start in range(0, v, block):
        rows = torch.arange(start, min(start + block, v), device=pos.device)
        _, o = _pair_tile(p[rows], s[rows], p, s)
        smin = torch.minimum(s[rows][:, None, :], s[None, :, :])
        length = torch.minimum(o, smin).clamp_min(0)
        w = _pair_weight(rows, mask[rows], mask)
        a = length[..., 0] * length[..., 1]
        total = total + torch.where(w, a, torch.zeros_like(a)).sum()
    return (total / 2).to(pos.dtype)
