"""Wasserstein distances between empirical measures (exact, POT) and the entropic (Sinkhorn) cost.

For ``mu = sum_i a_i δ(x_i)``, ``nu = sum_j b_j δ(y_j)`` with the Euclidean ground metric,

    W_p(mu, nu) = ( min_{pi in Pi(a, b)} sum_ij pi_ij ||x_i - y_j||^p )^(1/p)

(Villani 2009, Def. 6.1; Peyré & Cuturi 2019, eq. 2.15). Solved exactly with POT's network simplex
(``ot.emd``); for 1-D data the closed form through quantile functions (POT ``wasserstein_1d``,
Peyré & Cuturi 2019, Remark 2.30) is used instead (same value, ``O((n + m) log(n + m))``).
Inputs ``[n, d]`` / ``[m, d]`` (a 1-D tensor is ``[n, 1]``); weights default to uniform. Every
function returns a 0-d tensor in the promoted input dtype, differentiable in ``x`` and ``y``.
"""

from __future__ import annotations

import warnings

import torch
from torch import Tensor

from scigen.core.couplings.cost import pairwise_cost
from scigen.core.couplings.exact import DEFAULT_NUM_ITER_MAX, exact_ot_cost
from scigen.core.couplings.sinkhorn import sinkhorn_plan
from scigen.core.validation import check_points, check_same_dim, check_weights


def _ot_power_cost(
    x: Tensor, y: Tensor, a: Tensor | None, b: Tensor | None, p: int, num_iter_max: int
) -> Tensor:
    """``min_pi sum pi_ij ||x_i - y_j||^p`` for p in {1, 2}: ``W1`` for p=1, ``W2²`` for p=2."""
    x = check_points(x, "x")
    y = check_points(y, "y")
    check_same_dim(x, y, ("x", "y"))
    dtype = torch.promote_types(x.dtype, y.dtype)
    if x.shape[1] == 1:
        import ot

        wa = check_weights(a, x.shape[0], "a", x)
        wb = check_weights(b, y.shape[0], "b", x)
        with warnings.catch_warnings():  # POT's 1-D solver uses a deprecated torch `.T` internally
            warnings.filterwarnings("ignore", message=".*x.T.*", category=UserWarning)
            val = ot.wasserstein_1d(x[:, 0].to(torch.float64), y[:, 0].to(torch.float64), wa, wb, p=p)
        return val.reshape(()).to(dtype)
    cost = "euclidean" if p == 1 else "sqeuclidean"
    return exact_ot_cost(x, y, a, b, cost=cost, num_iter_max=num_iter_max).to(dtype)


def w1(
    x: Tensor,
    y: Tensor,
    a: Tensor | None = None,
    b: Tensor | None = None,
    *,
    num_iter_max: int = DEFAULT_NUM_ITER_MAX,
) -> Tensor:
    """The 1-Wasserstein distance ``W1 = min_pi sum_ij pi_ij ||x_i - y_j||`` (exact; Euclidean ground cost).

    Returns ``W1`` itself (a distance, same units as the data) as a 0-d tensor.
    """
    return _ot_power_cost(x, y, a, b, 1, num_iter_max)


def w2_squared(
    x: Tensor,
    y: Tensor,
    a: Tensor | None = None,
    b: Tensor | None = None,
    *,
    num_iter_max: int = DEFAULT_NUM_ITER_MAX,
) -> Tensor:
    """The squared 2-Wasserstein distance ``W2² = min_pi sum_ij pi_ij ||x_i - y_j||²`` (exact).

    Returns ``W2²`` (squared units; POT's ``emd2`` with the ``sqeuclidean`` cost), a 0-d tensor.
    """
    return _ot_power_cost(x, y, a, b, 2, num_iter_max)


def w2(
    x: Tensor,
    y: Tensor,
    a: Tensor | None = None,
    b: Tensor | None = None,
    *,
    num_iter_max: int = DEFAULT_NUM_ITER_MAX,
) -> Tensor:
    """The 2-Wasserstein distance ``W2 = sqrt(W2²)`` (exact); see :func:`w2_squared`. A 0-d tensor."""
    return w2_squared(x, y, a, b, num_iter_max=num_iter_max).clamp_min(0).sqrt()


def sinkhorn_cost(
    x: Tensor,
    y: Tensor,
    eps: float,
    a: Tensor | None = None,
    b: Tensor | None = None,
    *,
    cost: str = "sqeuclidean",
    max_iter: int = 1000,
    tol: float = 1e-9,
) -> Tensor:
    """The transport cost of the entropic OT plan, ``<pi_eps, C> = sum_ij pi_eps_ij C_ij``.

    ``pi_eps`` minimises ``<pi, C> - eps·H(pi)`` over couplings of ``a`` and ``b`` (Cuturi 2013), computed
    by log-domain Sinkhorn (:func:`scigen.core.couplings.sinkhorn_plan`). This is POT's
    ``sinkhorn2`` value (the entropy term is **not** included) and MMSFM's ``W_sqeuclid_reg`` /
    ``W_euclid_reg``. ``cost="sqeuclidean"`` gives an upper bound of ``W2²`` and ``"euclidean"`` of
    ``W1``; the gap is at most ``eps·log(n·m)`` and vanishes as ``eps -> 0``. ``eps`` is absolute (cost
    units). Returns a 0-d tensor in the promoted input dtype, differentiable through the iterations.
    """
    x = check_points(x, "x")
    y = check_points(y, "y")
    check_same_dim(x, y, ("x", "y"))
    plan = sinkhorn_plan(x, y, eps, a, b, cost=cost, max_iter=max_iter, tol=tol)
    C = pairwise_cost(x.to(torch.float64), y.to(torch.float64), cost)
    return (plan * C).sum().to(torch.promote_types(x.dtype, y.dtype))
