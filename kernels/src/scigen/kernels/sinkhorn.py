"""Batched log-domain Sinkhorn (entropic optimal transport) as a custom op.

Used by :mod:`scigen.core.couplings` (MMSFM's minibatch OT couplings) and the Sinkhorn metric.
References: Cuturi, "Sinkhorn Distances", NeurIPS 2013; log-domain iterations as in Peyré & Cuturi,
"Computational Optimal Transport" (2019), §4.4 (eq. 4.43); see :mod:`scigen.kernels.reference.sinkhorn`.
"""

from __future__ import annotations

import torch

from scigen.kernels import _validate
from scigen.kernels._backend import use_triton
from scigen.kernels.reference import sinkhorn as ref

Tensors4 = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]


@torch.library.custom_op("scigen::sinkhorn_log", mutates_args=())
def _sinkhorn_op(cost: torch.Tensor, a: torch.Tensor, b: torch.Tensor, eps: float, n_iters: int) -> Tensors4:
    return ref.sinkhorn_potentials(cost, a, b, eps, n_iters)


@_sinkhorn_op.register_kernel("cuda")
def _sinkhorn_cuda(
    cost: torch.Tensor, a: torch.Tensor, b: torch.Tensor, eps: float, n_iters: int
) -> Tensors4:
    if use_triton(cost, a, b):
        from scigen.kernels.triton import sinkhorn as tri

        return tri.sinkhorn_potentials(cost, a, b, eps, n_iters)
    return ref.sinkhorn_potentials(cost, a, b, eps, n_iters)


@_sinkhorn_op.register_fake
def _sinkhorn_fake(cost, a, b, eps, n_iters):
    bsz, n, m = cost.shape
    ct = ref.compute_dtype(cost.dtype)
    return (
        cost.new_empty((bsz, n), dtype=ct),
        cost.new_empty((bsz, m), dtype=ct),
        cost.new_empty((n_iters, bsz, n), dtype=ct),
        cost.new_empty((n_iters, bsz, m), dtype=ct),
    )


@torch.library.custom_op("scigen::sinkhorn_log_backward", mutates_args=())
def _sinkhorn_backward_op(
    grad_f: torch.Tensor,
    grad_g: torch.Tensor,
    cost: torch.Tensor,
    a: torch.Tensor,
    b: torch.Tensor,
    f_hist: torch.Tensor,
    g_hist: torch.Tensor,
    eps: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return ref.sinkhorn_potentials_backward(grad_f, grad_g, cost, a, b, f_hist, g_hist, eps)


@_sinkhorn_backward_op.register_fake
def _sinkhorn_backward_fake(grad_f, grad_g, cost, a, b, f_hist, g_hist, eps):
    return torch.empty_like(cost), torch.empty_like(a), torch.empty_like(b)


def _setup_context(ctx, inputs, output):
    cost, a, b, eps, _ = inputs
    f, g, f_hist, g_hist = output
    ctx.mark_non_differentiable(f_hist, g_hist)
    ctx.save_for_backward(cost, a, b, f_hist, g_hist)
    ctx.eps = eps


def _backward(ctx, grad_f, grad_g, _gfh, _ggh):
    cost, a, b, f_hist, g_hist = ctx.saved_tensors
    if grad_f is None:
        grad_f = f_hist.new_zeros(f_hist.shape[1:])
    if grad_g is None:
        grad_g = g_hist.new_zeros(g_hist.shape[1:])
    gc, ga, gb = _sinkhorn_backward_op(grad_f, grad_g, cost, a, b, f_hist, g_hist, ctx.eps)
    return gc, ga, gb, None, None


_sinkhorn_op.register_autograd(_backward, setup_context=_setup_context)


def _weights(name: str, w: torch.Tensor | None, size: int, batch: int, like: torch.Tensor) -> torch.Tensor:
    dt = ref.compute_dtype(like.dtype)
    if w is None:
        return torch.full((batch, size), 1.0 / size, dtype=dt, device=like.device)
    _validate.check_tensor(name, w, ndim=2)
    _validate.check_same_device(cost=like, **{name: w})
    if w.shape != (batch, size):
        raise ValueError(f"{name} must have shape {(batch, size)} to match cost, got {tuple(w.shape)}")
    _validate.check_positive(name, w)
    return w


def sinkhorn_log(
    cost: torch.Tensor,
    a: torch.Tensor | None = None,
    b: torch.Tensor | None = None,
    eps: float = 0.05,
    n_iters: int = 100,
    return_plan: bool = True,
) -> torch.Tensor:
    """Entropic OT plan (or its transport cost) by ``n_iters`` log-domain Sinkhorn iterations.

    Args:
        cost: ``[B, n, m]`` (or ``[n, m]``) cost matrices ``C``.
        a, b: ``[B, n]`` / ``[B, m]`` (or unbatched) strictly positive marginals with equal sums per
            batch entry (within 0.1%); ``None`` means uniform ``1/n`` / ``1/m``.
        eps: entropic regularisation ``ε > 0`` (in cost units; POT's ``reg``).
        n_iters: number of full iterations (each a column then a row update, like POT's
            ``sinkhorn_knopp``); no early stopping, so the output is a fixed differentiable map.
        return_plan: return the plan ``P [B, n, m]`` with ``P_ij = exp((f_i + g_j − C_ij)/ε)``
            (row marginals equal ``a`` exactly, column marginals → ``b`` as iterations converge);
            else the transport cost ``⟨P, C⟩ = Σ_ij P_ij C_ij`` of shape ``[B]`` (no entropy term).

    Returns a tensor of ``cost.dtype`` (fp16/bf16 are iterated in fp32). Differentiable in ``cost``,
    ``a`` and ``b`` (the exact gradient of the unrolled iterations, by a hand-written adjoint that
    stores only the potentials: O(T·(n+m)) memory); not in ``eps``. On CUDA the forward iterations
    run a Triton row-logsumexp kernel; the backward runs the PyTorch adjoint on the same device.

    Raises:
        TypeError / ValueError: non-floating or mis-shaped inputs, empty dimensions, non-positive
            or non-finite weights, unequal total masses, ``eps <= 0``, ``n_iters < 1``.
    """
    _validate.check_tensor("cost", cost, ndim=(2, 3))
    unbatched = cost.ndim == 2
    if unbatched:
        cost = cost.unsqueeze(0)
        a = a.unsqueeze(0) if isinstance(a, torch.Tensor) and a.ndim == 1 else a
        b = b.unsqueeze(0) if isinstance(b, torch.Tensor) and b.ndim == 1 else b
    bsz, n, m = cost.shape
    if min(bsz, n, m) == 0:
        raise ValueError(f"cost must have non-empty dimensions [B, n, m], got shape {tuple(cost.shape)}")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not eps > 0 or eps == float("inf"):
        raise ValueError(f"eps must be a positive finite float, got {eps!r}")
    if isinstance(n_iters, bool) or not isinstance(n_iters, int) or n_iters < 1:
        raise ValueError(f"n_iters must be an int >= 1, got {n_iters!r}")
    _validate.check_finite("cost", cost)
    a = _weights("a", a, n, bsz, cost)
    b = _weights("b", b, m, bsz, cost)
    if not torch.compiler.is_compiling():
        sa, sb = a.double().sum(1), b.double().sum(1)
        if not bool(torch.allclose(sa, sb, rtol=1e-3, atol=0.0)):  # gross mismatch only (fp16 weights)
            raise ValueError(
                f"a and b must have equal total mass per batch entry, got {sa.tolist()} vs {sb.tolist()}"
            )
    f, g, _, _ = _sinkhorn_op(cost, a, b, float(eps), int(n_iters))
    plan = ref.plan_from_potentials(cost, f, g, float(eps))
    out = plan if return_plan else (plan * cost.to(plan.dtype)).sum((1, 2))
    out = out.to(cost.dtype)
    return out[0] if unbatched else out
