"""Training-free baselines for a held-out snapshot: OT displacement interpolation of its neighbours.

McCann's displacement interpolation (McCann 1997; Schiebinger et al. 2019, *Waddington-OT*, the
standard held-out-time baseline): couple the observed cells at the neighbouring times ``t_a < t < t_b``
by exact OT (:func:`scigen.core.couplings.ot_indices`, squared Euclidean cost) and move every pair
along its straight line, ``x_t = (1 − tau) x_a + tau x_b`` with ``tau = (t − t_a)/(t_b − t_a)``.
This is the marginal that a perfectly trained OT-CFM (sigma = 0, pairwise) reproduces at ``t``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor

from scigen.core.couplings import ot_indices
from scigen.core.errors import InvalidInputError
from scigen.singlecell.io import read_snapshots

__all__ = ["displacement_interpolation", "interpolate_holdout"]


def displacement_interpolation(x_a: Tensor, x_b: Tensor, tau: float) -> Tensor:
    """``(1 − tau)·x_a + tau·x_b[j]`` with ``j`` the exact OT matching of ``x_a [n, d]`` to ``x_b [m, d]``.

    For ``n == m`` the matching is the optimal permutation; otherwise ``j_i`` is drawn from the OT plan's
    row ``i``. Returns ``[n, d]``.
    """
    if not 0.0 <= float(tau) <= 1.0:
        raise InvalidInputError(f"tau must lie in [0, 1], got {tau}")
    j = ot_indices(x_a, x_b, method="exact")
    return (1 - tau) * x_a + tau * x_b[j]


def interpolate_holdout(adata: Any, t: float, *, time_key: str = "time", use_rep: str | None = None,
                        layer: str | None = None, exclude: tuple[float, ...] = (), n: int | None = None, seed: int = 0) -> Tensor:
    """Cells at ``t`` predicted from the nearest observed times before and after it (``[n, d]`` float64).

    ``exclude`` lists observed times to ignore (the held-out one, which may be in ``adata``); ``n`` cells
    are subsampled from each neighbour (default: all of the earlier one, at most as many of the later).
    """
    snaps = read_snapshots(adata, time_key, use_rep, layer=layer)
    keep = [i for i, s in enumerate(snaps.times) if all(abs(s - e) > 1e-12 for e in exclude)]
    before = [i for i in keep if snaps.times[i] < t]
    after = [i for i in keep if snaps.times[i] > t]
    if not before or not after:
        raise InvalidInputError(f"{time_key}={t:g} needs observed times on both sides; have "
                                f"{[snaps.times[i] for i in keep]}")
    a, b = before[-1], after[0]
    g = torch.Generator().manual_seed(seed)
    xa, xb = snaps.data[a].double(), snaps.data[b].double()
    m = min(len(xa), len(xb)) if n is None else int(n)
    xa = xa[torch.randperm(len(xa), generator=g)[: min(m, len(xa))]]
    xb = xb[torch.randperm(len(xb), generator=g)[: min(m, len(xb))]]
    tau = (t - snaps.times[a]) / (snaps.times[b] - snaps.times[a])
    return displacement_interpolation(xa, xb, float(np.clip(tau, 0.0, 1.0)))
