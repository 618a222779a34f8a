"""Turning a transport plan into paired rows: per-row conditional sampling and joint sampling."""

from __future__ import annotations

import torch
from torch import Tensor


def is_permutation_plan(plan: Tensor) -> Tensor | None:
    """If ``plan [n, n]`` is a permutation matrix times ``1/n``, return ``j [n]`` with ``plan[i, j_i] > 0``.

    Returns ``None`` otherwise (a plan that splits mass).
    """
    n, m = plan.shape
    if n != m:
        return None
    j = plan.argmax(dim=1)
    if torch.unique(j).numel() != n:
        return None
    nnz = int((plan > 1e-12 * float(plan.max())).sum())
    return j if nnz == n else None


def sample_conditional(plan: Tensor, generator: torch.Generator | None = None) -> Tensor:
    """For every row ``i`` draw ``j_i ~ pi(j | i) = pi_ij / sum_j pi_ij``; returns ``j [n]`` (long).

    Pairs ``(i, j_i)`` with ``i`` taken once each are distributed as ``pi`` when ``pi``'s row sums are
    uniform, so the coupled batch keeps every source row exactly once. A row with no mass (zero
    weight) gets its ``j`` uniformly at random.
    """
    probs = plan.detach().to(torch.float64).clamp_min(0)
    empty = probs.sum(dim=1, keepdim=True) <= 0
    probs = torch.where(empty, torch.ones_like(probs), probs)
    if generator is not None:
        probs = probs.to(generator.device)
    j = torch.multinomial(probs, 1, replacement=True, generator=generator).squeeze(1)
    return j.to(plan.device)


def sample_plan(
    plan: Tensor, n_samples: int, *, replace: bool = True, generator: torch.Generator | None = None
) -> tuple[Tensor, Tensor]:
    """Draw ``n_samples`` index pairs ``(i, j) ~ pi`` from the joint plan (as torchcfm's ``sample_map``).

    Returns two long tensors ``i [n_samples]``, ``j [n_samples]``. With ``replace=False`` no cell is drawn
    twice (needs ``n_samples`` <= number of cells with mass).
    """
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples}")
    flat = plan.detach().to(torch.float64).clamp_min(0).reshape(-1)
    if not replace and n_samples > int((flat > 0).sum()):
        raise ValueError(
            f"n_samples={n_samples} without replacement exceeds the {int((flat > 0).sum())} cells with mass"
        )
    if generator is not None:
        flat = flat.to(generator.device)
    idx = torch.multinomial(flat, n_samples, replacement=replace, generator=generator).to(plan.device)
    m = plan.shape[1]
    return idx // m, idx % m
