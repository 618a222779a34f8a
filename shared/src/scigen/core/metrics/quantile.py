"""Quantile-based forecast scores: pinball (quantile) loss, QICE and PICP."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from scigen.core.metrics._checks import check_ensemble, check_reduction, empirical_quantiles, reduce
from scigen.core.validation import check_tensor


def quantile_loss(
    pred: Tensor,
    obs: Tensor,
    quantiles: Tensor | Sequence[float],
    *,
    quantile_dim: int = -1,
    reduction: str = "mean",
) -> Tensor:
    """The pinball loss ``rho_tau(y − q) = max(tau (y − q), (tau − 1)(y − q))`` (Koenker & Bassett 1978).

    Args:
        pred: predicted quantiles, the ``Q`` levels along ``quantile_dim``.
        obs: observations, ``pred``'s shape without ``quantile_dim``.
        quantiles: the ``Q`` levels ``tau`` in (0, 1).
        reduction: ``"mean"`` over all observations and levels (default), ``"sum"``, or ``"none"``
            (``pred``'s shape).

    Returns the loss without the factor 2 some papers use (``2·rho_tau`` integrates to the CRPS).
    """
    check_reduction(reduction)
    pred, obs, qd = check_ensemble(pred, obs, quantile_dim, name="pred")
    tau = torch.as_tensor(quantiles, dtype=pred.dtype, device=pred.device).reshape(-1)
    tau = check_tensor(tau, "quantiles")
    if tau.numel() != pred.shape[qd]:
        raise ValueError(
            f"quantiles has {tau.numel()} levels but pred has {pred.shape[qd]} along quantile_dim={quantile_dim}"
        )
    if bool(((tau <= 0) | (tau >= 1)).any()):
        raise ValueError(f"quantiles must lie in (0, 1), got {tau.tolist()}")
    shape = [1] * pred.dim()
    shape[qd] = -1
    u = obs.unsqueeze(qd) - pred
    loss = torch.maximum(tau.reshape(shape) * u, (tau.reshape(shape) - 1) * u)
    return reduce(loss, reduction)


def qice(samples: Tensor, obs: Tensor, *, dim: int = 0, n_bins: int = 10) -> Tensor:
    """Quantile interval coverage error (Han et al. 2022, *CARD: Classification and Regression
    Diffusion Models*, §5.1 / App. A).

    Per observation, the ensemble's quantiles at levels ``0, 1/n_bins, …, 1`` (linear interpolation)
    split the line into ``n_bins`` intervals; an observation below the 0-quantile counts in the first
    interval and one above the 1-quantile in the last (as CARD's code does). With ``r_k`` the fraction
    of observations in interval ``k``::

        QICE = (1/n_bins) sum_k | r_k − 1/n_bins |.

    Returns QICE as a **fraction** (0-d tensor; CARD prints it in percent, i.e. ×100). About 0 when
    ``samples`` come from the true predictive distribution; lower is better.
    """
    samples, obs, dim = check_ensemble(samples, obs, dim, min_members=2)
    if int(n_bins) < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    levels = torch.linspace(0, 1, int(n_bins) + 1, dtype=torch.float64, device=samples.device)
    q = empirical_quantiles(torch.sort(samples, dim=dim).values, levels, dim)  # [n_bins+1, *obs]
    membership = (obs.unsqueeze(0) > q).sum(0)  # number of quantile levels strictly below y
    bins = (membership - 1).clamp(0, int(n_bins) - 1)  # 0 below range -> first bin, n_bins+1 -> last
    counts = torch.bincount(bins.reshape(-1), minlength=int(n_bins)).to(samples.dtype)
    ratio = counts / bins.numel()
    return (ratio - 1.0 / int(n_bins)).abs().mean()


def picp(
    samples: Tensor, obs: Tensor, *, dim: int = 0, interval: tuple[float, float] = (0.05, 0.95)
) -> Tensor:
    """Prediction interval coverage probability (CARD, Han et al. 2022, §5.1).

    The fraction of observations inside ``[q_lo, q_hi]`` (inclusive), the ensemble's quantiles at
    ``interval = (lo, hi)`` (default the central 90% interval, ``(0.05, 0.95)``). Returns a fraction in
    [0, 1] (0-d tensor); the nominal value is ``hi − lo`` (0.9 by default).
    """
    samples, obs, dim = check_ensemble(samples, obs, dim, min_members=2)
    lo, hi = (float(v) for v in interval)
    if not 0.0 <= lo < hi <= 1.0:
        raise ValueError(f"interval must satisfy 0 <= lo < hi <= 1, got {interval}")
    levels = torch.tensor([lo, hi], dtype=torch.float64, device=samples.device)
    q = empirical_quantiles(torch.sort(samples, dim=dim).values, levels, dim)
    inside = (obs >= q[0]) & (obs <= q[1])
    return inside.to(samples.dtype).mean()
