"""NsDiff's forecast scores (Ye et al. 2025, §5) on standardised data: thin wrappers of :mod:`scigen.core.metrics`.

All functions take an ensemble ``samples [S, ...]`` (``S`` draws first) and the observations
``obs [...]`` (the remaining shape, e.g. ``[windows, horizon, variables]``), as numpy arrays or torch
tensors, and return a Python float (computed in float64):

* :func:`crps_ensemble` — mean over points of ``E|X − y| − ½ E|X − X′|`` with the empirical ``1/S²``
  weights (:func:`scigen.core.metrics.crps_ensemble`, ``fair=False``; the PyPI ``CRPS`` package the
  reference uses and ``properscoring`` compute the same);
* :func:`crps_sum` — the same CRPS of the sum over variables (last axis), averaged over the rest, not
  normalised (:func:`scigen.core.metrics.crps_sum`);
* :func:`qice` — CARD's quantile interval coverage error over ``M = 10`` bins between the sample
  deciles, **a fraction** (the NsDiff paper prints it ×100; issue #3);
* :func:`picp` — fraction of observations inside the [5 %, 95 %] sample-quantile interval (the
  released code divides twice and prints ≈1e-4; this is the correct fraction);
* :func:`energy_score` — the energy score of each window's joint forecast (horizon × variables flattened
  into one vector), averaged over windows (:func:`scigen.core.metrics.energy_score`, Gneiting & Raftery
  2007); with one variable and a one-step horizon it is the CRPS;
* :func:`variogram_score` — the variogram score of order 0.5 over the same vector (Scheuerer & Hamill
  2015; :func:`scigen.core.metrics.variogram_score`): it penalises a wrong dependence between steps and
  variables, which CRPS (marginals only) cannot see;
* :func:`mse`, :func:`mae` — of the sample mean (timeseries-specific, not in core).

:func:`reference_scores` computes CRPS, CRPS_sum, ES and VS once more with the field's own package,
``scoringrules`` (Zanetta & Allen 2024; the ``scoringrules`` extra), so that ``evaluate`` can print them
beside ours: the two must agree (tests/timeseries/test_metrics.py).
"""

from __future__ import annotations

import numpy as np
import torch

from scigen.core import metrics as core
from scigen.core.errors import InvalidInputError

__all__ = ["crps_ensemble", "crps_sum", "energy_score", "forecast_metrics", "mae", "mse", "picp", "qice",
           "reference_scores", "variogram_score"]


def _pair(samples, obs) -> tuple[torch.Tensor, torch.Tensor]:
    """float64 tensors ``samples [S, *obs.shape]`` and ``obs``; InvalidInputError naming the shapes otherwise."""
    s = torch.as_tensor(np.asarray(samples, float)) if not isinstance(samples, torch.Tensor) else samples
    o = torch.as_tensor(np.asarray(obs, float)) if not isinstance(obs, torch.Tensor) else obs
    s, o = s.detach().cpu().double(), o.detach().cpu().double()
    if s.ndim < 1 or s.shape[1:] != o.shape:
        raise InvalidInputError(f"samples must have shape [n_samples, *obs.shape] = [S, {', '.join(map(str, o.shape))}], "
                                f"got {tuple(s.shape)}")
    if s.shape[0] < 1:
        raise InvalidInputError("samples must contain at least one draw")
    if not (torch.isfinite(s).all() and torch.isfinite(o).all()):
        raise InvalidInputError("samples and obs must be finite")
    return s, o


def crps_ensemble(samples, obs) -> float:
    """Mean ensemble CRPS over all points (not normalised by ``|y|``)."""
    return float(core.crps_ensemble(*_pair(samples, obs)))


def crps_sum(samples, obs) -> float:
    """CRPS of the ensemble of sums over the last axis (variables), averaged over the other axes."""
    s, o = _pair(samples, obs)
    if s.ndim < 2:
        raise InvalidInputError(f"crps_sum needs a variable axis: samples [S, ..., variables], got {tuple(s.shape)}")
    return float(core.crps_sum(s, o, sample_dim=0, variable_dim=-1))


def _joint(s: torch.Tensor, o: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``[S, W, D]`` / ``[W, D]``: every trailing axis after the first (window) axis flattened into one vector."""
    if o.ndim == 0:
        return s.reshape(s.shape[0], 1, 1), o.reshape(1, 1)
    if o.ndim == 1:
        return s[:, None, :], o[None, :]
    return s.reshape(s.shape[0], o.shape[0], -1), o.reshape(o.shape[0], -1)


def energy_score(samples, obs) -> float:
    """Mean over windows (the first axis of ``obs``) of the energy score of the flattened rest (e.g. horizon ×
    variables); a 1-d ``obs`` is one window."""
    return float(core.energy_score(*_joint(*_pair(samples, obs))))


def variogram_score(samples, obs, p: float = 0.5) -> float:
    """Mean over windows of the order-``p`` variogram score of the flattened rest (``O(S·D²)`` per window)."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not p > 0:
        raise InvalidInputError(f"p must be a positive number, got {p!r}")
    return float(core.variogram_score(*_joint(*_pair(samples, obs)), p=p))


def qice(samples, obs, n_bins: int = 10) -> float:
    """QICE (CARD, Han et al. 2022) as a **fraction** in ``[0, 2(M − 1)/M²]``; ×100 gives the paper's scale."""
    if not isinstance(n_bins, int) or n_bins < 1:
        raise InvalidInputError(f"n_bins must be a positive integer, got {n_bins!r}")
    return float(core.qice(*_pair(samples, obs), n_bins=n_bins))


def picp(samples, obs, low: float = 5.0, high: float = 95.0) -> float:
    """Fraction of ``obs`` inside ``[q(low %), q(high %)]`` of the samples (inclusive; percent arguments)."""
    if not 0 <= low < high <= 100:
        raise InvalidInputError(f"need 0 <= low < high <= 100, got low={low}, high={high}")
    return float(core.picp(*_pair(samples, obs), interval=(low / 100, high / 100)))


def mse(samples, obs) -> float:
    """Mean squared error of the sample mean."""
    s, o = _pair(samples, obs)
    return float(((s.mean(0) - o) ** 2).mean())


def mae(samples, obs) -> float:
    """Mean absolute error of the sample mean."""
    s, o = _pair(samples, obs)
    return float((s.mean(0) - o).abs().mean())


def forecast_metrics(samples, obs) -> dict[str, float]:
    """All NsDiff scores: ``CRPS, CRPS_sum, QICE`` (fraction), ``PICP`` (fraction, 5-95 %), ``MSE, MAE``, and the
    multivariate ``ES`` / ``VS`` (order 0.5) of each window's horizon × variables forecast."""
    s, o = _pair(samples, obs)
    return {"CRPS": crps_ensemble(s, o), "CRPS_sum": crps_sum(s, o), "QICE": qice(s, o), "PICP": picp(s, o),
            "MSE": mse(s, o), "MAE": mae(s, o), "ES": energy_score(s, o), "VS": variogram_score(s, o)}


def reference_scores(samples, obs) -> dict[str, float]:
    """``CRPS, CRPS_sum, ES, VS`` computed by ``scoringrules`` (estimator ``"nrg"``, VS order 0.5), keyed
    ``"<name>[scoringrules]"``, for the same ``samples [S, W, ..., N]`` / ``obs``. Needs the ``scoringrules``
    extra (``pip install 'scigen-timeseries[scoringrules]'``)."""
    try:
        import scoringrules as sr
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("reference_scores needs scoringrules: pip install 'scigen-timeseries[scoringrules]'") from e
    s, o = _pair(samples, obs)
    if s.ndim < 2:
        raise InvalidInputError(f"reference_scores needs a variable axis: samples [S, ..., variables], got {tuple(s.shape)}")
    sn, on = s.numpy(), o.numpy()
    js, jo = (t.numpy() for t in _joint(s, o))
    return {"CRPS[scoringrules]": float(np.mean(sr.crps_ensemble(on, sn, m_axis=0, estimator="nrg"))),
            "CRPS_sum[scoringrules]": float(np.mean(sr.crps_ensemble(on.sum(-1), sn.sum(-1), m_axis=0,
                                                                     estimator="nrg"))),
            "ES[scoringrules]": float(np.mean(sr.es_ensemble(jo, np.moveaxis(js, 0, -2), estimator="nrg"))),
            "VS[scoringrules]": float(np.mean(sr.vs_ensemble(jo, np.moveaxis(js, 0, -2), p=0.5)))}
