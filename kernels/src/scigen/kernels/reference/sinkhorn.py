"""Reference (pure PyTorch) batched log-domain Sinkhorn: potentials, their adjoint, the plan.

Entropic OT (Cuturi 2013; log-domain iterations as in Peyré & Cuturi, "Computational Optimal
Transport", 2019, §4.4, eq. 4.43 with potentials f = ε log u, g = ε log v). With ``f⁰ = 0``, iteration
``t = 1..T`` performs the two half-steps

    g_j ← ε log b_j − ε LSE_i((f_i − C_ij)/ε)        (columns; POT's ``v = b / Kᵀu``)
    f_i ← ε log a_i − ε LSE_j((g_j − C_ij)/ε)        (rows;    POT's ``u = a / K v``)

and the plan is ``P_ij = exp((f_i + g_j − C_ij)/ε)`` (row marginals exact after the last step).
"""

from __future__ import annotations

import torch


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """fp16/bf16 costs are iterated in fp32."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def half_step(c: torch.Tensor, h: torch.Tensor, log_w: torch.Tensor, eps: float) -> torch.Tensor:
    """``out[b, r] = ε log_w[b, r] − ε LSE_l((h[b, l] − c[b, r, l])/ε)`` for ``c [B, R, L]``."""
    return eps * log_w - eps * torch.logsumexp((h[:, None, :] - c) / eps, dim=2)


def sinkhorn_potentials(
    cost: torch.Tensor, a: torch.Tensor, b: torch.Tensor, eps: float, n_iters: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(f [B,n], g [B,m], f_hist [T,B,n], g_hist [T,B,m])`` in the compute dtype.

    ``f_hist[t]`` is the f *entering* iteration t+1 (``f_hist[0] = 0``); ``g_hist[t]`` the g it
    produced. The history (O(T·(n+m)) memory) is what the backward pass needs.
    """
    ct = compute_dtype(cost.dtype)
    c = cost.to(ct)
    ct_t = c.transpose(1, 2)
    la, lb = a.to(ct).log(), b.to(ct).log()
    bsz, n, m = c.shape
    f = torch.zeros(bsz, n, dtype=ct, device=c.device)
    f_hist = c.new_empty((n_iters, bsz, n))
    g_hist = c.new_empty((n_iters, bsz, m))
    g = torch.zeros(bsz, m, dtype=ct, device=c.device)
    for t in range(n_iters):
        f_hist[t] = f
        g = half_step(ct_t, f, lb, eps)
        g_hist[t] = g
        f = half_step(c, g, la, eps)
    return f, g, f_hist, g_hist


def sinkhorn_potentials_backward(
    grad_f: torch.Tensor,
    grad_g: torch.Tensor,
    cost: torch.Tensor,
    a: torch.Tensor,
    b: torch.Tensor,
    f_hist: torch.Tensor,
    g_hist: torch.Tensor,
    eps: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Reverse-mode through the T unrolled iterations, recomputing each softmax from the stored
    potentials: O(T·(n+m)) saved memory instead of autograd's O(T·n·m).

    For ``f = ε log a − ε LSE_j((g_j − C_ij)/ε)`` with ``S = softmax_j``: ``∂f_i/∂g_j = −S_ij``,
    ``∂f_i/∂C_ij = S_ij``, ``∂f_i/∂a_i = ε / a_i`` (and symmetrically for the g half-step).
    Returns ``(grad_cost, grad_a, grad_b)`` in the dtypes of ``cost``, ``a``, ``b``.
    """
    ct = f_hist.dtype
    c = cost.to(ct)
    ac, bc = a.to(ct), b.to(ct)
    gf, gg = grad_f.to(ct).clone(), grad_g.to(ct).clone()
    gc = torch.zeros_like(c)
    ga = torch.zeros_like(ac)
    gb = torch.zeros_like(bc)
    for t in range(f_hist.shape[0] - 1, -1, -1):
        # f_t = F(g_t)
        s_f = torch.softmax((g_hist[t][:, None, :] - c) / eps, dim=2)
        gc += gf[:, :, None] * s_f
        ga += eps * gf / ac
        gg = gg - torch.einsum("bij,bi->bj", s_f, gf)
        # g_t = G(f_{t-1})
        s_g = torch.softmax((f_hist[t][:, :, None] - c) / eps, dim=1)
        gc += gg[:, None, :] * s_g
        gb += eps * gg / bc
        gf = -torch.einsum("bij,bj->bi", s_g, gg)
        gg = torch.zeros_like(gg)
    return gc.to(cost.dtype), ga.to(a.dtype), gb.to(b.dtype)


def plan_from_potentials(cost: torch.Tensor, f: torch.Tensor, g: torch.Tensor, eps: float) -> torch.Tensor:
    """``P_ij = exp((f_i + g_j − C_ij)/ε)`` (compute dtype of ``f``)."""
    return torch.exp((f[:, :, None] + g[:, None, :] - cost.to(f.dtype)) / eps)
