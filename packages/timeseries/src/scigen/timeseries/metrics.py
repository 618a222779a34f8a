"""Probabilistic forecast scores of NsDiff (Ye et al. 2025, §5) on standardised data.

All functions take an ensemble ``samples [S, ...]`` (``S`` draws first) and the observations
``obs [...]`` (the remaining shape, e.g. ``[windows, horizon, variables]``) and return a Python float.

* :func:`crps_ensemble` — mean over points of ``E|X − y| − ½ E|X − X′|`` with the empirical ``1/S²``
  weights (the "non-fair" ensemble CRPS of the PyPI ``CRPS`` and ``properscoring`` packages);
* :func:`crps_sum` — the same CRPS of the sum over variables (last axis), averaged over the rest;
* :func:`qice` — quantile interval coverage error of CARD (Han et al. 2022): ``mean_m |1/M − frac_m|``
  over the ``M = 10`` bins between the sample deciles, **returned as a fraction** (the NsDiff paper
  prints it ×100; issue #3);
* :func:`picp` — fraction of observations inside the [5 %, 95 %] sample-percentile interval (the
  released code divides twice and prints ≈1e-4; this is the correct fraction);
* :func:`mse`, :func:`mae` — of the sample mean.

Percentiles use numpy's default linear interpolation.
(``scigen.core.metrics`` has no forecast scores yet; these move there when it does.)
"""

from __future__ import annotations

import numpy as np
import torch

from scigen.core.errors import InvalidInputError

__all__ = ["crps_ensemble", "crps_sum", "forecast_metrics", "mae", "mse", "picp", "qice"]


def _pair(samples, obs) -> tuple[np.ndarray, np.ndarray]:
    s = samples.detach().cpu().double().numpy() if isinstance(samples, torch.Tensor) else np.asarray(samples, float)
    o = obs.detach().cpu().double().numpy() if isinstance(obs, torch.Tensor) else np.asarray(obs, float)
    if s.ndim < 1 or s.shape[1:] != o.shape:
        raise InvalidInputError(f"samples must have shape [n_samples, *obs.shape] = [S, {', '.join(map(str, o.shape))}], "
                                f"got {s.shape}")
    if s.shape[0] < 1:
        raise InvalidInputError("samples must contain at least one draw")
    if not (np.isfinite(s).all() and np.isfinite(o).all()):
        raise InvalidInputError("samples and obs must be finite")
    return s, o


def crps_pointwise(samples, obs) -> np.ndarray:
    """Ensemble CRPS at every point, ``obs.shape``; ``E|X−y| − ½E|X−X′|`` via the sorted-sample identity."""
    s, o = _pair(samples, obs)
    m = s.shape[0]
    first = np.abs(s - o).mean(0)
    xs = np.sort(s, axis=0)
    w = (2 * np.arange(1, m + 1) - m - 1).reshape((m,) + (1,) * o.ndim)
    spread = 2.0 * (w * xs).sum(0) / m**2  # = E|X − X'| with 1/m² weights
    return first - 0.5 * spread


def crps_ensemble(samples, obs) -> float:
    """Mean ensemble CRPS over all points (not normalised by ``|y|``)."""
    return float(crps_pointwise(samples, obs).mean())


def crps_sum(samples, obs) -> float:
    """CRPS of the ensemble of sums over the last axis (variables), averaged over the other axes."""
    s, o = _pair(samples, obs)
    return crps_ensemble(s.sum(-1), o.sum(-1))


def qice(samples, obs, n_bins: int = 10) -> float:
    """QICE (CARD, Han et al. 2022) as a **fraction** in ``[0, 2(M − 1)/M²]``; ×100 gives the paper's scale.

    Bin edges are the sample percentiles ``0, 100/M, …, 100``; observations below the minimum join the
    first bin and above the maximum the last; returns ``mean_m |frac_m − 1/M|``.
    """
    if not isinstance(n_bins, int) or n_bins < 1:
        raise InvalidInputError(f"n_bins must be a positive integer, got {n_bins!r}")
    s, o = _pair(samples, obs)
    inner = np.percentile(s, np.linspace(0, 100, n_bins + 1)[1:-1], axis=0)  # [M-1, ...]
    idx = (o[None] > inner).sum(0).ravel()  # bin 0..M-1; outliers fall in the end bins
    frac = np.bincount(idx, minlength=n_bins) / idx.size
    return float(np.abs(frac - 1.0 / n_bins).mean())


def picp(samples, obs, low: float = 5.0, high: float = 95.0) -> float:
    """Fraction of ``obs`` inside ``[percentile(low), percentile(high)]`` of the samples (inclusive)."""
    if not 0 <= low < high <= 100:
        raise InvalidInputError(f"need 0 <= low < high <= 100, got low={low}, high={high}")
    s, o = _pair(samples, obs)
    lo, hi = np.percentile(s, [low, high], axis=0)
    return float(((o >= lo) & (o <= hi)).mean())


def mse(samples, obs) -> float:
    """Mean squared error of the sample mean."""
    s, o = _pair(samples, obs)
    return float(((s.mean(0) - o) ** 2).mean())


def mae(samples, obs) -> float:
    """Mean absolute error of the sample mean."""
    s, o = _pair(samples, obs)
    return float(np.abs(s.mean(0) - o).mean())


def forecast_metrics(samples, obs) -> dict[str, float]:
    """All NsDiff scores: ``CRPS, CRPS_sum, QICE`` (fraction), ``PICP`` (fraction, 5-95 %), ``MSE, MAE``."""
    return {"CRPS": crps_ensemble(samples, obs), "CRPS_sum": crps_sum(samples, obs), "QICE": qice(samples, obs),
            "PICP": picp(samples, obs), "MSE": mse(samples, obs), "MAE": mae(samples, obs)}
