"""AGDiff figures: ROC curves of several detectors on one test set (matplotlib; the backend is left alone)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np


def plot_roc(labels, scores: Mapping[str, np.ndarray], path: str | Path | None = None, *, ax=None,
             title: str = "") -> object:
    """ROC curve (``sklearn.metrics.roc_curve``, anomaly = positive) per detector in ``scores``, AUC in the
    legend; drawn into ``ax`` (or a new figure), written atomically to ``path`` when given. Returns the figure."""
    import matplotlib.pyplot as plt
    from sklearn.metrics import roc_auc_score, roc_curve

    from scigen.core.plotting import save_figure

    if ax is None:
        fig, ax = plt.subplots(figsize=(5.2, 4.6))
    else:
        fig = ax.figure
    y = np.asarray(labels)
    for name, s in scores.items():
        fpr, tpr, _ = roc_curve(y, s)
        ax.plot(fpr, tpr, label=f"{name} (AUC {roc_auc_score(y, s):.3f})")
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls=":")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    if path is not None:
        save_figure(fig, path)
    return fig
