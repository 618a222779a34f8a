"""Couplings of two minibatches: independent, exact OT and entropic (Sinkhorn) OT.

Each function returns indices ``j [n]`` into ``x1`` (``*_indices``) or the paired batch
``(x0, x1[j])`` (``*_coupling``); row ``i`` of the output is the pair ``(x0_i, x1_{j_i})``. Every row
of ``x0`` is kept once, in its order.

Minibatch OT couplings for flow matching: Pooladian et al. 2023 (*Multisample Flow Matching*) and
Tong et al. 2024 (*Improving and generalizing flow-based generative models with minibatch optimal
transport*, OT-CFM, Alg. 3). The cost is the squared Euclidean distance by default.
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core.couplings.exact import DEFAULT_NUM_ITER_MAX, exact_ot_plan
from scigen.core.couplings.sampling import is_permutation_plan, sample_conditional
from scigen.core.couplings.sinkhorn import sinkhorn_plan
from scigen.core.validation import check_points, check_same_dim

METHODS = ("exact", "sinkhorn")


def _batch(x: Tensor, name: str) -> Tensor:
    """Flatten ``x [B, ...]`` to ``[B, prod(...)]`` for the cost; validate."""
    if isinstance(x, Tensor) and x.dim() > 2:
        x = x.reshape(x.shape[0], -1)
    return check_points(x, name)


def independent_indices(x0: Tensor, x1: Tensor, *, generator: torch.Generator | None = None) -> Tensor:
    """Indices ``j [n]`` pairing rows of ``x0`` with rows of ``x1`` independently of their values.

    For ``len(x0) == len(x1)`` a uniformly random permutation; otherwise ``j_i`` uniform on
    ``{0..m-1}`` with replacement. ``x0``/``x1`` may be ``[B, ...]`` (only ``B`` matters).
    """
    n, m = _batch(x0, "x0").shape[0], _batch(x1, "x1").shape[0]
    dev = x1.device
    gdev = generator.device if generator is not None else dev
    if n == m:
        return torch.randperm(m, generator=generator, device=gdev).to(dev)
    return torch.randint(m, (n,), generator=generator, device=gdev).to(dev)


def ot_indices(
    x0: Tensor,
    x1: Tensor,
    *,
    method: str = "exact",
    eps: float = 0.05,
    cost: str = "sqeuclidean",
    normalize_cost: bool = False,
    generator: torch.Generator | None = None,
    num_iter_max: int = DEFAULT_NUM_ITER_MAX,
) -> Tensor:
    """Indices ``j [n]`` into ``x1`` such that ``(x0_i, x1_{j_i})`` is drawn from an OT plan.

    ``x0 [n, ...]`` and ``x1 [m, ...]`` are flattened per row. ``method="exact"``: POT ``emd`` on
    ``C_ij = ||x0_i - x1_j||²``; for ``n == m`` the plan is a permutation and ``j`` is that optimal
    permutation (deterministic, no sampling). Otherwise (``n != m``, or ``method="sinkhorn"`` with the
    log-domain plan of regularisation ``eps``) ``j_i ~ pi(j | i)`` is sampled for each row ``i``.
    ``normalize_cost=True`` divides the cost by its maximum first (as torchcfm's option), which makes
    ``eps`` relative.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    f0 = _batch(x0, "x0")
    f1 = _batch(x1, "x1")
    check_same_dim(f0, f1, ("x0", "x1"))
    if normalize_cost:
        scale = torch.cdist(f0.detach().double(), f1.detach().double()).max().clamp_min(1e-300)
        f0, f1 = f0 / scale, f1 / scale  # ||.||² / max||.||² (and ||.|| / max||.|| for euclidean)
    if method == "exact":
        plan = exact_ot_plan(f0.detach(), f1.detach(), cost=cost, num_iter_max=num_iter_max)
        perm = is_permutation_plan(plan)
        if perm is not None:
            return perm.to(x1.device)
    else:
        plan = sinkhorn_plan(f0.detach(), f1.detach(), eps, cost=cost)
    return sample_conditional(plan, generator=generator).to(x1.device)


def independent_coupling(
    x0: Tensor, x1: Tensor, *, generator: torch.Generator | None = None
) -> tuple[Tensor, Tensor]:
    """The independent coupling: returns ``(x0, x1[j])`` with ``j`` from :func:`independent_indices`."""
    return x0, x1[independent_indices(x0, x1, generator=generator)]


def ot_coupling(
    x0: Tensor,
    x1: Tensor,
    *,
    method: str = "exact",
    eps: float = 0.05,
    cost: str = "sqeuclidean",
    normalize_cost: bool = False,
    generator: torch.Generator | None = None,
) -> tuple[Tensor, Tensor]:
    """The minibatch OT coupling: returns ``(x0, x1[j])`` with ``j`` from :func:`ot_indices`.

    For equal batch sizes and ``method="exact"`` this is the optimal assignment: it minimises
    ``sum_i ||x0_i - x1_{j_i}||²`` over all permutations ``j``. Tensors stay on their device.
    """
    j = ot_indices(
        x0, x1, method=method, eps=eps, cost=cost, normalize_cost=normalize_cost, generator=generator
    )
    return x0, x1[j]
