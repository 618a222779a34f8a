"""GIM's evaluation metrics (the metric set of ``shared/research/singlecell.md`` §1.4 / §4; the paper's
own metric list could not be read).

* distribution distances per context: ``MMD`` (biased multi-bandwidth RBF MMD², MIOFlow's bandwidths,
  the singlecell ``MMD_G``), ``energy`` (energy distance, Euclidean), ``W2`` (exact 2-Wasserstein,
  **rooted**), all from :mod:`scigen.core.metrics` through :func:`scigen.singlecell.metrics.marginal_metrics`;
* ``R2_means``: ``1 − Σ_j (m_j − m̂_j)² / Σ_j (m_j − m̄)²`` between the observed and the predicted
  per-feature means of one context (``sklearn.metrics.r2_score`` of the means, CellFlow's convention);
* ``target_AUROC``: the Mann–Whitney AUROC of target probabilities against true 0/1 targets, pooled
  over (context, variable) pairs; ties count one half;
* ``SHD``: :func:`scigen.singlecell.gim.scm.shd`.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from scigen.core.errors import InvalidInputError
from scigen.singlecell.metrics import marginal_metrics

__all__ = ["CONTEXT_METRICS", "auroc", "context_metrics", "r2_means", "score_contexts"]

CONTEXT_METRICS = ("MMD", "energy", "W2", "R2_means")


def r2_means(true: np.ndarray, pred: np.ndarray) -> float:
    """R² of the per-feature means of ``pred [n, d]`` against those of ``true [m, d]``."""
    mt, mp = np.asarray(true, float).mean(0), np.asarray(pred, float).mean(0)
    ss_tot = float(((mt - mt.mean()) ** 2).sum())
    ss_res = float(((mt - mp) ** 2).sum())
    if ss_tot == 0:
        return 1.0 if ss_res == 0 else 0.0
    return 1.0 - ss_res / ss_tot


def auroc(scores, labels) -> float:
    """AUROC of ``scores`` for the 0/1 ``labels`` (Mann–Whitney U / (n₁ n₀), ties = ½); NaN if one class."""
    s = np.asarray(scores, float).ravel()
    y = np.asarray(labels).ravel().astype(bool)
    if s.shape != y.shape:
        raise InvalidInputError(f"auroc: scores {s.shape} and labels {y.shape} differ in size")
    n1, n0 = int(y.sum()), int((~y).sum())
    if n1 == 0 or n0 == 0:
        return math.nan
    from scipy.stats import rankdata

    r = rankdata(s)
    return float((r[y].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def context_metrics(pred: np.ndarray, true: np.ndarray, *, seed: int = 0) -> dict[str, float]:
    """``MMD``, ``energy``, ``W2`` (rooted) and ``R2_means`` between predicted and observed cells."""
    m = marginal_metrics(torch.as_tensor(pred, dtype=torch.float64), torch.as_tensor(true, dtype=torch.float64),
                         generator=torch.Generator().manual_seed(seed))
    return {"MMD": m["MMD_G"], "energy": m["energy"], "W2": math.sqrt(max(m["W2_squared"], 0.0)),
            "R2_means": r2_means(true, pred)}


def score_contexts(pred, ev: dict, probs=None) -> dict[str, float]:
    """Mean context metrics per split (``"W2@ood_full"``) and overall (``"W2"``), and the pooled
    ``target_AUROC`` (per split and overall) when ``ev["truth"]`` and ``probs [K, d]`` are given.
    ``pred [K, n, d]``; ``ev`` as :meth:`GIM.eval_contexts` returns it."""
    rows = [context_metrics(pred[k], ev["cells"][k], seed=k) for k in range(len(ev["cells"]))]
    split = np.asarray(ev["split"])
    out: dict[str, float] = {}
    truth = ev.get("truth")
    for s in sorted(set(split.tolist())):
        sel = np.flatnonzero(split == s)
        out.update({f"{m}@{s}": float(np.mean([rows[i][m] for i in sel])) for m in CONTEXT_METRICS})
        if truth is not None and probs is not None:
            out[f"target_AUROC@{s}"] = auroc(np.asarray(probs)[sel], np.asarray(truth)[sel])
    out.update({m: float(np.mean([r[m] for r in rows])) for m in CONTEXT_METRICS})
    if truth is not None and probs is not None:
        out["target_AUROC"] = auroc(probs, truth)
    return out
