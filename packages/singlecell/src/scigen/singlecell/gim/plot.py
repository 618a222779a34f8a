"""GIM figures: predicted vs observed mean shifts, and target probabilities beside the true targets."""

from __future__ import annotations

import os

import numpy as np

from scigen.core.plotting import save_figure

__all__ = ["plot_shifts", "plot_targets"]


def plot_shifts(observed: np.ndarray, predicted: dict[str, np.ndarray], path: str | os.PathLike[str] | None = None,
                *, ax=None, title: str = ""):
    """Scatter of predicted against observed per-variable mean shifts (one point per context × variable).

    ``observed [K, d]`` and each ``predicted[label] [K, d]`` are shifts from the control mean. Returns the
    Figure; writes a PNG only when ``path`` is given; never sets the backend.
    """
    import matplotlib.pyplot as plt

    fig = ax.figure if ax is not None else plt.subplots(figsize=(4.5, 4.2))[0]
    ax = ax if ax is not None else fig.axes[0]
    lim = float(np.abs(observed).max()) * 1.1 or 1.0
    ax.plot([-lim, lim], [-lim, lim], color="0.6", lw=1, zorder=0)
    for label, pred in predicted.items():
        ax.scatter(np.ravel(observed), np.ravel(pred), s=6, alpha=0.6, label=label)
    ax.set_xlabel("observed mean shift")
    ax.set_ylabel("predicted mean shift")
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(title, fontsize=9)
    if path is not None:
        save_figure(fig, path)
    return fig


def plot_targets(probs: np.ndarray, truth: np.ndarray | None, labels: list[str], path: str | os.PathLike[str] | None = None,
                 *, fig=None, title: str = ""):
    """Heatmaps of ``P(target) [K, d]`` and (when given) the true 0/1 targets, rows = contexts."""
    import matplotlib.pyplot as plt

    panels = 2 if truth is not None else 1
    fig = fig if fig is not None else plt.figure(figsize=(3.2 * panels, 0.25 * len(labels) + 1.5))
    axes = fig.subplots(1, panels, squeeze=False)[0]
    for ax, mat, name in zip(axes, [probs, truth][:panels], ["P(target)", "true targets"], strict=False):
        ax.imshow(mat, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("variable")
        ax.set_yticks(range(len(labels)))
        ax.set_yticklabels(labels, fontsize=6)
    if title:
        fig.suptitle(title, fontsize=9)
    if path is not None:
        save_figure(fig, path)
    return fig
