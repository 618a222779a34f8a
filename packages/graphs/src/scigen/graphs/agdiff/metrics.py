"""Graph-level anomaly detection scores: ROC-AUC and F1 (AGDiff Sec. 5).

* ``auc``: ROC-AUC of the anomaly scores with anomaly = positive class (``sklearn.metrics.roc_auc_score``).
* ``f1``: the paper does not define its threshold (Appendix C not recovered). Ours, stated: the
  **top-k rule** — the ``k`` highest-scoring graphs are flagged, ``k`` = the number of anomalies in the
  evaluated set (precision = recall at that cut, the rule of the GLAD benchmarks that report F1 without
  a validation set); ``f1`` is the macro-F1 over the two classes at that cut, ``f1_anomaly`` the F1 of the
  anomaly class. A fixed ``threshold=`` on the scores replaces the rule.

A set with one class only has no AUC: it is refused, naming the class it holds.
"""

from __future__ import annotations

import numpy as np

from scigen.core.errors import InvalidInputError

__all__ = ["check_two_classes", "detection_scores", "top_k_flags"]


def check_two_classes(labels: np.ndarray, what: str = "data") -> np.ndarray:
    y = np.asarray(labels).astype(int).reshape(-1)
    present = sorted(set(y.tolist()))
    if present != [0, 1]:
        name = {0: "normal", 1: "anomalous"}
        held = ", ".join(name.get(c, str(c)) for c in present) or "none"
        raise InvalidInputError(f"{what}: AUC/F1 need normal and anomalous graphs, but the set holds only "
                                f"{held} graphs ({y.size} graphs; G.graph['anomaly'])")
    return y


def top_k_flags(scores: np.ndarray, k: int, seed: int = 0) -> np.ndarray:
    """Boolean flags of the ``k`` highest scores; ties at the cut broken by a seeded random order (not by
    position: saturated scores tie, and TU files list graphs sorted by class)."""
    s = np.asarray(scores)
    tiebreak = np.random.default_rng(seed).random(s.size)
    order = np.lexsort((tiebreak, -s))
    flags = np.zeros(len(scores), dtype=bool)
    flags[order[:k]] = True
    return flags


def detection_scores(labels, scores, *, threshold: float | None = None, what: str = "data") -> dict[str, float]:
    """``{"auc", "f1", "f1_anomaly", "n_normal", "n_anomaly"}`` (module docstring)."""
    from sklearn.metrics import f1_score, roc_auc_score

    y = check_two_classes(labels, what)
    s = np.asarray(scores, dtype=float).reshape(-1)
    if s.shape != y.shape:
        raise InvalidInputError(f"{what}: {s.size} scores for {y.size} labels")
    if not np.isfinite(s).all():
        raise InvalidInputError(f"{what}: the anomaly scores are not all finite")
    if threshold is not None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.integer, np.floating)) \
                or not np.isfinite(threshold):
            raise InvalidInputError(f"threshold must be a finite number (a score above it is flagged anomalous) or "
                                    f"None (flag the top n_anomaly scores), got {threshold!r}")
    flags = s > threshold if threshold is not None else top_k_flags(s, int(y.sum()))
    return {"auc": float(roc_auc_score(y, s)), "f1": float(f1_score(y, flags, average="macro")),
            "f1_anomaly": float(f1_score(y, flags)), "n_normal": float((y == 0).sum()),
            "n_anomaly": float(y.sum())}
