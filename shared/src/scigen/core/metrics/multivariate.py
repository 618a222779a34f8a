"""Multivariate ensemble scores: the energy score and the variogram score.

For an ensemble ``x_1..x_m`` of ``D``-vectors and an observation ``y`` (lower is better):

* energy score (Gneiting & Raftery 2007, *Strictly proper scoring rules*, JASA 102, eq. 22; Gneiting
  et al. 2008, TEST 17, eq. 6)::

      ES   = (1/m) sum_i ||x_i − y|| − 1/(2 m²)      sum_ij ||x_i − x_j||     (empirical distribution;
      fair = (1/m) sum_i ||x_i − y|| − 1/(2 m(m−1))  sum_ij ||x_i − x_j||      scoringrules' "nrg" / "fair")

  with the Euclidean norm over the ``D`` components; ``D = 1`` gives the CRPS.
* variogram score of order ``p`` (Scheuerer & Hamill 2015, *Variogram-based proper scoring rules for
  probabilistic forecasts of multivariate quantities*, MWR 143, eq. 3)::

      VS_p = sum_ij w_ij ( (1/m) sum_k |x_ki − x_kj|^p − |y_i − y_j|^p )²

  with weights ``w_ij = 1`` by default and ``p = 0.5`` (the paper's recommendation); it scores the
  pairwise differences, so it sees a wrong correlation structure that the ES hardly penalises.

Both equal scoringrules' ``es_ensemble`` / ``vs_ensemble`` (``estimator="nrg"``) on the same input.
The variogram's ensemble term is accumulated member by member in ``[chunk, D, D]`` blocks, so memory
stays ``O(chunk·D²)`` rather than ``O(m·D²)``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core.metrics._checks import check_ensemble, check_reduction, reduce

__all__ = ["energy_score", "variogram_score"]

_BLOCK = 1 << 24  # elements of one [chunk, D, D] variogram block


def _flat(samples: Tensor, obs: Tensor, dim: int, min_members: int) -> tuple[Tensor, Tensor, tuple[int, ...]]:
    """``[m, B, D]`` members and ``[B, D]`` observations (``D`` = the last axis); ``batch shape`` for ``reduction="none"``."""
    samples, obs, dim = check_ensemble(samples, obs, dim, min_members=min_members)
    if obs.dim() < 1:
        raise ValueError("obs must have a variable axis (the last one): got a 0-d observation; use crps_ensemble")
    if dim == samples.dim() - 1:
        raise ValueError(f"the ensemble dim ({dim}) must not be the last axis: the last axis holds the variables")
    if not samples.dtype.is_floating_point:
        samples, obs = samples.double(), obs.double()
    x = samples.movedim(dim, 0)
    batch = tuple(obs.shape[:-1])
    return x.reshape(x.shape[0], -1, x.shape[-1]), obs.reshape(-1, obs.shape[-1]), batch


def energy_score(samples: Tensor, obs: Tensor, *, dim: int = 0, fair: bool = False,
                 reduction: str = "mean") -> Tensor:
    """The energy score of ``samples`` (members along ``dim``, variables on the last axis) for ``obs``.

    Args:
        samples: e.g. ``[m, *batch, D]`` with ``dim=0``; the last axis holds the ``D`` components of one
            multivariate forecast (flatten several axes into it first, e.g. horizon × variables).
        obs: ``samples``' shape without ``dim`` (``[*batch, D]``).
        fair: ``False`` — the empirical distribution's ES (scoringrules' ``"nrg"``); ``True`` — the fair
            estimator (``"fair"``, divides the pair sum by ``2m(m−1)``; needs ``m >= 2``).
        reduction: ``"mean"`` over the batch (default), ``"sum"``, or ``"none"`` (a tensor of ``*batch``).
    """
    check_reduction(reduction)
    x, y, batch = _flat(samples, obs, dim, 2 if fair else 1)
    m = x.shape[0]
    xb = x.transpose(0, 1)  # [B, m, D]
    term1 = torch.linalg.vector_norm(xb - y[:, None], dim=-1).mean(1)
    pair = torch.cdist(xb, xb, compute_mode="donot_use_mm_for_euclid_dist").sum((1, 2))
    es = term1 - pair / (2 * m * (m - 1) if fair else 2 * m * m)
    return reduce(es.reshape(batch), reduction)


def variogram_score(samples: Tensor, obs: Tensor, *, dim: int = 0, p: float = 0.5, weights: Tensor | None = None,
                    reduction: str = "mean") -> Tensor:
    """The variogram score of order ``p`` of ``samples`` (members along ``dim``, variables last) for ``obs``.

    Args:
        samples: e.g. ``[m, *batch, D]`` with ``dim=0``.
        obs: ``[*batch, D]``.
        p: the order (``> 0``; 0.5 by default, Scheuerer & Hamill's choice; 1 and 2 are common too).
        weights: optional ``[D, D]`` non-negative pair weights ``w_ij`` (all ones when ``None``).
        reduction: ``"mean"`` over the batch (default), ``"sum"``, or ``"none"``.

    Cost: ``O(m·B·D²)`` operations in ``[chunk, D, D]`` blocks.
    """
    check_reduction(reduction)
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not p > 0:
        raise ValueError(f"p must be a positive number, got {p!r}")
    x, y, batch = _flat(samples, obs, dim, 1)
    m, B, D = x.shape
    w = None
    if weights is not None:
        w = torch.as_tensor(weights, dtype=x.dtype, device=x.device)
        if w.shape != (D, D):
            raise ValueError(f"weights must have shape [D, D] = [{D}, {D}], got {tuple(w.shape)}")
        if not torch.isfinite(w).all() or (w < 0).any():
            raise ValueError("weights must be finite and non-negative")
    out = torch.empty(B, dtype=x.dtype, device=x.device)
    chunk = max(1, _BLOCK // max(D * D, 1))
    for s in range(0, B, chunk):
        xs, ys = x[:, s : s + chunk], y[s : s + chunk]
        acc = torch.zeros(xs.shape[1], D, D, dtype=x.dtype, device=x.device)
        for k in range(m):
            acc += (xs[k, :, :, None] - xs[k, :, None, :]).abs().pow(p)
        d = (acc / m - (ys[:, :, None] - ys[:, None, :]).abs().pow(p)).square()
        out[s : s + chunk] = (d if w is None else d * w).sum((1, 2))
    return reduce(out.reshape(batch), reduction)
