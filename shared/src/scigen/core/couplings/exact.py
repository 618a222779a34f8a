"""Exact (unregularised) discrete optimal transport between two point clouds, via POT's ``emd``.

Solves the Kantorovich problem (Peyré & Cuturi 2019, *Computational Optimal Transport*, eq. 2.11)

    pi* = argmin_{pi >= 0, pi 1 = a, pi^T 1 = b}  sum_ij pi_ij C_ij

with the network-simplex solver of POT (``ot.emd``, Bonneel et al. 2011). Tensors stay torch tensors
on their device: POT's torch backend moves the cost to the CPU for the solver and returns the plan
as a tensor on the input's device.
"""

from __future__ import annotations

import warnings

import torch
from torch import Tensor

from scigen.core.couplings.cost import pairwise_cost
from scigen.core.validation import check_points, check_same_dim, check_weights

DEFAULT_NUM_ITER_MAX = 1_000_000


@torch.compiler.disable  # a C++ solver behind numpy glue: runs eagerly inside a compiled loss (fit(compile=True))
def emd_plan(a: Tensor, b: Tensor, C: Tensor, *, num_iter_max: int = DEFAULT_NUM_ITER_MAX) -> Tensor:
    """The exact OT plan ``[n, m]`` for weights ``a [n]``, ``b [m]`` (each summing to 1) and cost ``C``.

    Runs ``ot.emd`` in float64 and returns the plan in float64 on ``C``'s device. Raises
    ``RuntimeError`` when the solver stops before optimality (raise ``num_iter_max``). Never traced by
    ``torch.compile`` (Dynamo would trace POT's numpy glue, and fails to under ``fit``'s compiled step).
    """
    import ot  # POT; imported lazily so that importing scigen.core stays cheap

    C64 = C.detach().to(torch.float64).contiguous()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plan = ot.emd(a.to(C64), b.to(C64), C64, numItermax=int(num_iter_max))
    for w in caught:
        msg = str(w.message)
        if "numItermax" in msg or "optimal" in msg.lower() or "infeasible" in msg.lower():
            raise RuntimeError(
                f"exact OT (POT emd) did not reach optimality on a {tuple(C.shape)} problem: {msg} "
                f"(num_iter_max={num_iter_max}; raise it)"
            )
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return plan


def exact_ot_plan(
    x0: Tensor,
    x1: Tensor,
    a: Tensor | None = None,
    b: Tensor | None = None,
    *,
    cost: str = "sqeuclidean",
    num_iter_max: int = DEFAULT_NUM_ITER_MAX,
) -> Tensor:
    """The exact OT plan between the empirical measures ``sum_i a_i δ(x0_i)`` and ``sum_j b_j δ(x1_j)``.

    Args:
        x0: ``[n, d]`` points (``[n]`` is read as ``[n, 1]``).
        x1: ``[m, d]`` points.
        a, b: optional non-negative weights ``[n]`` / ``[m]`` (normalised to sum 1); default uniform.
        cost: ``"sqeuclidean"`` (``||x - y||²``, the W2 / OT-CFM cost) or ``"euclidean"`` (W1).
        num_iter_max: network-simplex iteration cap.

    Returns:
        The plan ``pi [n, m]`` (float64, on ``x0``'s device, no gradient), ``pi 1 = a``,
        ``pi^T 1 = b``. For ``n == m`` with uniform weights it is a permutation matrix divided by ``n``.
    """
    x0 = check_points(x0, "x0")
    x1 = check_points(x1, "x1")
    check_same_dim(x0, x1, ("x0", "x1"))
    a = check_weights(a, x0.shape[0], "a", x0)
    b = check_weights(b, x1.shape[0], "b", x0)
    C = pairwise_cost(x0.detach().to(torch.float64), x1.detach().to(torch.float64), cost)
    return emd_plan(a, b, C, num_iter_max=num_iter_max)


def exact_ot_cost(
    x0: Tensor,
    x1: Tensor,
    a: Tensor | None = None,
    b: Tensor | None = None,
    *,
    cost: str = "sqeuclidean",
    num_iter_max: int = DEFAULT_NUM_ITER_MAX,
) -> Tensor:
    """The optimal transport cost ``min_pi sum_ij pi_ij C_ij`` (a 0-d tensor in the input dtype).

    With ``cost="sqeuclidean"`` this is ``W2²``; with ``cost="euclidean"`` it is ``W1``. Differentiable
    in ``x0`` and ``x1`` (the plan is held fixed, which gives the exact gradient by the envelope
    theorem wherever the optimal plan is unique).
    """
    x0 = check_points(x0, "x0")
    x1 = check_points(x1, "x1")
    check_same_dim(x0, x1, ("x0", "x1"))
    plan = exact_ot_plan(x0, x1, a, b, cost=cost, num_iter_max=num_iter_max)
    dtype = torch.promote_types(x0.dtype, x1.dtype)
    C = pairwise_cost(x0.to(torch.float64), x1.to(torch.float64), cost)
    return (plan * C).sum().to(dtype)
