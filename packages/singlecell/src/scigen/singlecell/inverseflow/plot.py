"""Before/after plots of Inverse Flow denoising (take ``ax=``/``fig=``, return the Figure, never set the backend)."""

from __future__ import annotations

import numpy as np

__all__ = ["plot_points"]


def plot_points(noisy, panels: dict, clean=None, *, fig=None, title: str | None = None, n: int = 2000):
    """2-D point clouds: the noisy input, then one panel per ``{label: denoised}``; ``clean`` as red dots."""
    import matplotlib.pyplot as plt

    k = 1 + len(panels)
    fig = fig or plt.figure(figsize=(3.2 * k, 3.3))
    axes = fig.subplots(1, k, sharex=True, sharey=True)
    axes = np.atleast_1d(axes)
    rows = np.arange(min(n, len(noisy)))
    for ax, (label, pts) in zip(axes, [("noisy input", noisy), *panels.items()], strict=False):
        p = np.asarray(pts)[rows]
        ax.scatter(p[:, 0], p[:, 1], s=2, alpha=0.4)
        if clean is not None:
            c = np.unique(np.round(np.asarray(clean), 6), axis=0)
            ax.scatter(c[:, 0], c[:, 1], s=25, c="red", marker="x")
        ax.set_title(label, fontsize=9)
        ax.set_aspect("equal")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
