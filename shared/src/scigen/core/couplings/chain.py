"""Row-aligned multi-marginal chaining of pairwise OT couplings (first-order Markov MMOT).

Given snapshots ``X_0, X_1, ..., X_k``, couple ``X_0 -> X_1`` by OT, reorder ``X_1`` by that
coupling, then couple the *reordered* ``X_1 -> X_2``, and so on. Row ``i`` of every output is one
trajectory ``(x0_i, x1_i, ..., xk_i)``: the joint law is the Markov chain
``pi_01(x0, x1) pi_12(x2 | x1) ...`` of the pairwise plans (Lee et al. 2025, *Multi-Marginal
Stochastic Flow Matching*, §3.2, the first-order Markov approximation of the MMOT plan).

Note: the MMSFM reference implementation (``MultiMarginalPairwiseOTPlanSampler.sample_plan``)
conditions the second and later segments on the *original* row index of ``X_0`` while the plan's
rows are the *reordered* samples, which decouples the segments; here each segment conditions on the
row it continues.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from scigen.core.couplings.pairing import independent_indices, ot_indices


def chain_indices(
    marginals: Sequence[Tensor],
    *,
    method: str = "exact",
    eps: float = 0.05,
    cost: str = "sqeuclidean",
    normalize_cost: bool = False,
    generator: torch.Generator | None = None,
) -> list[Tensor]:
    """Indices ``[idx_0, ..., idx_k]`` (each ``[n]``, long) with ``marginals[l][idx_l[i]]`` on trajectory ``i``.

    ``idx_0`` is ``arange(n)`` (``n = len(marginals[0])``). ``method`` is ``"exact"``, ``"sinkhorn"``
    (see :func:`~scigen.core.couplings.pairing.ot_indices`) or ``"independent"`` (no coupling; a
    baseline). Marginals may differ in size and feature dimension only if ``method="independent"``;
    OT needs equal feature dimension between consecutive marginals.
    """
    if isinstance(marginals, Tensor):
        marginals = list(marginals.unbind(0))
    marginals = list(marginals)
    if len(marginals) < 2:
        raise ValueError(f"marginals needs at least 2 snapshots, got {len(marginals)}")
    for l, m in enumerate(marginals):
        if not isinstance(m, Tensor) or m.dim() < 1 or m.shape[0] == 0:
            shape = tuple(m.shape) if isinstance(m, Tensor) else type(m).__name__
            raise ValueError(f"marginals[{l}] must be a non-empty tensor [n_l, ...], got {shape}")
    n = marginals[0].shape[0]
    idx = [torch.arange(n, device=marginals[0].device)]
    current = marginals[0]
    for l in range(1, len(marginals)):
        nxt = marginals[l]
        if method == "independent":
            j = independent_indices(current, nxt, generator=generator)
        else:
            j = ot_indices(
                current,
                nxt,
                method=method,
                eps=eps,
                cost=cost,
                normalize_cost=normalize_cost,
                generator=generator,
            )
        idx.append(j)
        current = nxt[j]  # the reordered snapshot: the next segment continues these rows
    return idx


def chain_coupling(
    marginals: Sequence[Tensor],
    *,
    method: str = "exact",
    eps: float = 0.05,
    cost: str = "sqeuclidean",
    normalize_cost: bool = False,
    generator: torch.Generator | None = None,
) -> list[Tensor]:
    """Row-aligned trajectories: ``[X_0, X_1[idx_1], ..., X_k[idx_k]]``, each with ``n = len(X_0)`` rows.

    Row ``i`` of every returned tensor belongs to the same trajectory. With equal sizes and exact
    OT each returned snapshot is a permutation of its input. ``torch.stack`` the list when all
    snapshots share a shape. See :func:`chain_indices` for the arguments.
    """
    idx = chain_indices(
        marginals, method=method, eps=eps, cost=cost, normalize_cost=normalize_cost, generator=generator
    )
    if isinstance(marginals, Tensor):
        marginals = list(marginals.unbind(0))
    return [m[i] for m, i in zip(marginals, idx, strict=True)]
