"""Pure-PyTorch reference for the fused EGNN edge step over ragged, fully connected molecules.

Edges are all ordered pairs (i, j), i != j, inside each molecule of the CSR pointer ``ptr [G+1]``
(molecule g owns nodes ``ptr[g]:ptr[g+1]``). The reference materialises the E = Σ n_g (n_g - 1)
edges (E × H activations); it is differentiable by autograd and is the oracle of the Triton kernel.
Definitions are documented in :mod:`scigen.kernels.egnn`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

EPS_NORM = 1e-8  # EDM's coord2diff: ||x_i - x_j|| = sqrt(d² + 1e-8)


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """fp16/bf16 are computed in fp32; fp32/fp64 in themselves."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def full_edges(ptr: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(row, col) [E] of all ordered pairs i != j within each molecule, grouped by row i."""
    ptr = ptr.long()
    counts = ptr.diff()
    n = int(ptr[-1]) if ptr.numel() else 0
    node_mol = torch.repeat_interleave(torch.arange(counts.numel(), device=ptr.device), counts, output_size=n)
    start = ptr[:-1][node_mol]  # [N] first node of each node's molecule
    deg = counts[node_mol] - 1  # [N] neighbours per node
    e = int(deg.sum()) if n else 0
    row = torch.repeat_interleave(torch.arange(n, device=ptr.device), deg, output_size=e)
    first_edge = torch.cumsum(deg, 0) - deg
    r = torch.arange(e, device=ptr.device) - first_edge[row]  # rank of the edge within its row
    i_local = row - start[row]
    col = start[row] + r + (r >= i_local).long()  # skip j = i
    return row, col


def egnn_aggregate(
    h: torch.Tensor,
    x: torch.Tensor,
    x_ref: torch.Tensor,
    ptr: torch.Tensor,
    W_a: torch.Tensor,
    W_b: torch.Tensor,
    b1: torch.Tensor,
    W2: torch.Tensor,
    b2: torch.Tensor,
    w_d: torch.Tensor,
    w_att: torch.Tensor,
    b_att: torch.Tensor,
    w_x: torch.Tensor,
    use_gate: bool,
    use_coord: bool,
    coords_range: float,
    norm_constant: float,
    normalization_factor: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(m [N, H], dx [N, 3]) in the dtype of ``h`` (computed in fp32 for half inputs)."""
    ct = compute_dtype(h.dtype)
    h, x, x_ref = h.to(ct), x.to(ct), x_ref.to(ct)
    W_a, W_b, b1, W2, b2, w_d = (t.to(ct) for t in (W_a, W_b, b1, W2, b2, w_d))
    n, hid = h.shape[0], W2.shape[1]
    row, col = full_edges(ptr)
    a = h @ W_a + b1  # per-node halves of the first edge-MLP layer
    b = h @ W_b
    diff = x[row] - x[col]
    d2 = (diff * diff).sum(-1, keepdim=True)
    pre = a[row] + b[col] + d2 * w_d[0]
    if w_d.shape[0] > 1:
        dr = x_ref[row] - x_ref[col]
        pre = pre + (dr * dr).sum(-1, keepdim=True) * w_d[1]
    phi = F.silu(F.silu(pre) @ W2 + b2)  # [E, H]
    if use_gate:
        msg = phi * torch.sigmoid(phi @ w_att.to(ct)[:, None] + b_att.to(ct))
    else:
        msg = phi
    m = h.new_zeros((n, hid)).index_add(0, row, msg) / normalization_factor
    if use_coord:
        unit = diff / (torch.sqrt(d2 + EPS_NORM) + norm_constant)
        trans = unit * torch.tanh(phi @ w_x.to(ct)[:, None]) * coords_range
        dx = x.new_zeros((n, 3)).index_add(0, row, trans) / normalization_factor
    else:
        dx = x.new_zeros((n, 3))
    return m, dx
