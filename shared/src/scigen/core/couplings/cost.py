"""Ground-cost matrices between two point clouds."""

from __future__ import annotations

import torch
from torch import Tensor

COSTS = ("sqeuclidean", "euclidean")


def pairwise_cost(x: Tensor, y: Tensor, cost: str = "sqeuclidean") -> Tensor:
    """The ``[n, m]`` ground-cost matrix between rows of ``x [n, d]`` and ``y [m, d]``.

    ``cost="sqeuclidean"``: ``C_ij = ||x_i - y_j||²``; ``cost="euclidean"``: ``C_ij = ||x_i - y_j||``.
    Computed from differences (not the ``|x|² + |y|² - 2 x·y`` expansion), so it is exact to rounding
    and exactly zero for equal points. Memory is ``O(n·m·d)``; the caller validates shapes.
    """
    if cost not in COSTS:
        raise ValueError(f"cost must be one of {COSTS}, got {cost!r}")
    dist = torch.cdist(x, y, p=2.0, compute_mode="donot_use_mm_for_euclid_dist")
    return dist * dist if cost == "sqeuclidean" else dist
