"""The energy distance (Székely & Rizzo 2013, *Energy statistics*, J. Stat. Plan. Inference 143, eq. 2.1)."""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core.validation import check_points, check_same_dim


def energy_distance(x: Tensor, y: Tensor, *, unbiased: bool = False) -> Tensor:
    """``D²(P, Q) = 2 E||X − Y|| − E||X − X'|| − E||Y − Y'||`` estimated from ``x [n, d]``, ``y [m, d]``.

    Returns ``D²`` — Székely & Rizzo's energy distance, which is the *square* of a metric (so it is
    ``scipy.stats.energy_distance(x, y) ** 2`` for 1-D data, and ``dcor.energy_distance``):

    - ``unbiased=False`` (default): the V-statistic, all pairs: ``2·mean_ij ||x_i − y_j||
      − mean_ii' ||x_i − x_i'|| − mean_jj' ||y_j − y_j'||`` (diagonal zeros included); always ``>= 0``.
    - ``unbiased=True``: the within-sample means exclude the diagonal (divide by ``n(n−1)``,
      ``m(m−1)``), giving an unbiased estimate of ``D²``; needs ``n, m >= 2`` and can be negative.

    A 0-d tensor in the promoted input dtype; memory ``O(n² + m² + n·m)``.
    """
    x = check_points(x, "x", min_rows=2 if unbiased else 1)
    y = check_points(y, "y", min_rows=2 if unbiased else 1)
    check_same_dim(x, y, ("x", "y"))
    dtype = torch.promote_types(x.dtype, y.dtype)
    x, y = x.to(dtype), y.to(dtype)
    n, m = x.shape[0], y.shape[0]
    mode = "donot_use_mm_for_euclid_dist"
    dxy = torch.cdist(x, y, compute_mode=mode).mean()
    sxx = torch.cdist(x, x, compute_mode=mode).sum()
    syy = torch.cdist(y, y, compute_mode=mode).sum()
    if unbiased:
        return 2 * dxy - sxx / (n * (n - 1)) - syy / (m * (m - 1))
    return 2 * dxy - sxx / (n * n) - syy / (m * m)
