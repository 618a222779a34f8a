"""MMSFM's marginal metrics (Lee et al., ICML 2025; reference ``scripts/modelagent.py::traj_eval``).

All come from :mod:`scigen.core.metrics`; names say exactly what is returned:

* ``W1``: exact 1-Wasserstein distance, Euclidean ground cost (the reference's ``W_euclid``);
* ``W2_squared``: exact squared 2-Wasserstein distance (the reference's ``W_sqeuclid``, **not** rooted);
* ``MMD_G``: biased multi-bandwidth RBF MMD² with 5 bandwidths around the mean pairwise squared
  distance of the pooled sample (MIOFlow's ``MMD_loss``, as used by MMSFM);
* ``MMD_M``: linear-kernel MMD², ``‖mean(x) − mean(y)‖²``;
* ``energy``: energy distance ``2E‖X−Y‖ − E‖X−X'‖ − E‖Y−Y'‖`` (biased V-statistic).
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core.errors import InvalidInputError
from scigen.core.metrics import energy_distance, linear_mmd, mmd_rbf, w1, w2_squared

__all__ = ["METRIC_NAMES", "marginal_metrics"]

METRIC_NAMES = ("W1", "W2_squared", "MMD_G", "MMD_M", "energy")


def marginal_metrics(pred: Tensor, true: Tensor, *, max_points: int | None = 2000,
                     generator: torch.Generator | None = None) -> dict[str, float]:
    """The five metrics between generated ``pred [n, d]`` and observed ``true [m, d]`` cells.

    Each side is subsampled to at most ``max_points`` rows (uniformly, with ``generator``) to bound
    the exact OT cost; ``None`` keeps all.
    """
    for name, x in (("pred", pred), ("true", true)):
        if not isinstance(x, Tensor) or x.ndim != 2 or x.shape[0] < 2:
            raise InvalidInputError(f"{name} must be a tensor [n>=2, d], got {getattr(x, 'shape', type(x).__name__)}")
    if pred.shape[1] != true.shape[1]:
        raise InvalidInputError(f"pred has {pred.shape[1]} features but true has {true.shape[1]}")
    pred, true = pred.double(), true.double()
    if max_points is not None:
        if pred.shape[0] > max_points:
            pred = pred[torch.randperm(pred.shape[0], generator=generator)[:max_points]]
        if true.shape[0] > max_points:
            true = true[torch.randperm(true.shape[0], generator=generator)[:max_points]]
    return {
        "W1": float(w1(pred, true)),
        "W2_squared": float(w2_squared(pred, true)),
        "MMD_G": float(mmd_rbf(pred, true)),
        "MMD_M": float(linear_mmd(pred, true)),
        "energy": float(energy_distance(pred, true)),
    }
