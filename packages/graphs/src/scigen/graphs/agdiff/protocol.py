"""The evaluation protocol of AGDiff (Sec. 5, following GLocalKD / iGAD): stratified k-fold cross
validation, each detector trained on the **normal** graphs of the training folds only and scored on
the whole held-out fold; AUC and F1 (``metrics``) mean ± std over the folds, plus the training time.

``detectors`` maps a name to a factory ``() -> detector`` with ``fit(graphs) -> self`` and
``score(graphs) -> np.ndarray`` (AGDiff, and every class of ``baselines``), so all of them see the same
folds in the same run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import networkx as nx
import numpy as np

from scigen.core.errors import InvalidInputError
from scigen.graphs.agdiff.graphs import anomaly_labels, as_graphs
from scigen.graphs.agdiff.metrics import check_two_classes, detection_scores

__all__ = ["cross_validate", "summarise"]


def cross_validate(data: Any, detectors: Mapping[str, Callable[[], Any]], *, folds: int = 5, seed: int = 0,
                   threshold: float | None = None) -> dict[str, dict[str, Any]]:
    """``{name: {"auc_mean", "auc_std", "f1_mean", "f1_std", "train_seconds", "folds": [...]}}``."""
    from sklearn.model_selection import StratifiedKFold

    graphs: Sequence[nx.Graph] = as_graphs(data, "data")
    y = check_two_classes(anomaly_labels(graphs, "data"), "data")
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise InvalidInputError(f"folds must be an int >= 2, got {folds!r}")
    if int(y.sum()) < folds or int((y == 0).sum()) < folds:
        raise InvalidInputError(f"data: {folds}-fold stratified CV needs at least {folds} graphs of each class "
                                f"(has {int((y == 0).sum())} normal, {int(y.sum())} anomalous)")
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    out: dict[str, dict[str, Any]] = {name: {"folds": []} for name in detectors}
    for k, (train_idx, test_idx) in enumerate(splitter.split(np.zeros(len(y)), y)):
        train = [graphs[i] for i in train_idx if y[i] == 0]
        test = [graphs[i] for i in test_idx]
        for name, make in detectors.items():
            t0 = time.perf_counter()
            det = make().fit(train)
            seconds = time.perf_counter() - t0
            scores = det.score(test)
            res = detection_scores(y[test_idx], scores, threshold=threshold, what=f"fold {k}")
            out[name]["folds"].append(res | {"train_seconds": seconds})
    for res in out.values():
        res.update(summarise(res["folds"]))
    return out


def summarise(folds: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Mean and (population) standard deviation of AUC and F1 over folds; total training seconds."""
    auc = np.array([f["auc"] for f in folds])
    f1 = np.array([f["f1"] for f in folds])
    return {"auc_mean": float(auc.mean()), "auc_std": float(auc.std()), "f1_mean": float(f1.mean()),
            "f1_std": float(f1.std()), "train_seconds": float(sum(f.get("train_seconds", 0.0) for f in folds))}
