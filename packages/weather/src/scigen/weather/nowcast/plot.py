"""Nowcast figures: a strip of frames (context, truth, stage 1, members) as PNG and an animated GIF."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

__all__ = ["plot_strip", "save_gif"]


def _rows(context, truth, mean, members):
    rows = [("context", context), ("truth", truth), ("stage 1", mean)]
    rows += [(f"member {i}", m) for i, m in enumerate(members)]
    return rows


def plot_strip(context: np.ndarray, truth: np.ndarray, mean: np.ndarray, members: np.ndarray, *,
               leads: list[int] | None = None, units: str = "mm/h", fig=None, title: str = "",
               path: str | os.PathLike[str] | None = None):
    """Rows: context frames, truth, stage-1 mean, each member; columns: the ``leads`` (0-based, default 4
    spread over the horizon; the context row shows its last frames). Arrays are ``[frames, y, x]``
    (``members``: ``[m, L, y, x]``). ``fig``: draw into this Figure; a PNG is written atomically only when
    ``path`` is given. Never sets the backend."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    L = truth.shape[0]
    leads = leads or sorted({0, L // 3, (2 * L) // 3, L - 1})
    rows = _rows(context, truth, mean, members)
    ncol = len(leads)
    fig = fig or plt.figure(figsize=(1.6 * ncol + 0.8, 1.5 * len(rows)))
    axes = fig.subplots(len(rows), ncol, squeeze=False)
    vmax = max(float(np.max(truth)), 1.0)
    norm = LogNorm(vmin=0.1, vmax=vmax)
    im = None
    for r, (label, frames) in enumerate(rows):
        cols = range(frames.shape[0] - ncol, frames.shape[0]) if label == "context" else leads
        for j, k in enumerate(cols):
            ax = axes[r, j]
            if 0 <= k < frames.shape[0]:
                im = ax.imshow(np.where(frames[k] > 0.1, frames[k], np.nan), norm=norm, cmap="turbo")
            ax.set_xticks([])
            ax.set_yticks([])
            if r == 0 or (r == 1 and j == 0):
                ax.set_title(f"t{k - frames.shape[0] + 1:+d}" if label == "context" else f"lead {k + 1}", fontsize=7)
            if j == 0:
                ax.set_ylabel(label, fontsize=7)
    if im is not None:
        fig.colorbar(im, ax=axes, shrink=0.6, label=units)
    if title:
        fig.suptitle(title, fontsize=8)
    if path is not None:
        from scigen.core.plotting import save_figure

        save_figure(fig, Path(path), dpi=100, close=False)
    return fig


def save_gif(truth: np.ndarray, mean: np.ndarray, member: np.ndarray, path: str | os.PathLike[str],
             *, fps: int = 4) -> Path:
    """An animated GIF (truth | stage 1 | one member, one frame per lead), written atomically (Pillow)."""
    import matplotlib
    from PIL import Image

    from scigen.core.files import atomic_path

    vmax = max(float(np.max(truth)), 1.0)
    cmap = matplotlib.colormaps["turbo"]

    def rgb(x):
        z = np.clip(np.log10(np.maximum(x, 0.1) / 0.1) / np.log10(vmax / 0.1), 0, 1)
        img = (cmap(z)[..., :3] * 255).astype(np.uint8)
        img[x <= 0.1] = 255
        return img

    frames = []
    for k in range(truth.shape[0]):
        row = np.concatenate([rgb(truth[k]), np.full((truth.shape[1], 2, 3), 0, np.uint8), rgb(mean[k]),
                              np.full((truth.shape[1], 2, 3), 0, np.uint8), rgb(member[k])], axis=1)
        big = Image.fromarray(row).resize((row.shape[1] * 4, row.shape[0] * 4), Image.NEAREST)
        frames.append(big)
    p = Path(path)
    with atomic_path(p) as tmp:
        frames[0].save(tmp, format="GIF", save_all=True, append_images=frames[1:], duration=int(1000 / fps), loop=0)
    return p
