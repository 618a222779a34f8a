"""Plot generated trajectories over the observed marginals (2-D, or the first two principal axes)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from scigen.core.plotting import save_figure
from scigen.singlecell.io import read_rep

__all__ = ["plot_trajectories"]


def plot_trajectories(traj: Any, observed: Any, path: str | os.PathLike[str], *, time_key: str = "time",
                      use_rep: str | None = None, n_lines: int = 60, title: str = "") -> Path:
    """Scatter ``observed`` cells coloured by time and draw ``n_lines`` trajectories of ``traj``.

    ``traj`` is an AnnData from :meth:`MMSFM.sample` (``obs["mmsfm_traj_id"]``); ``use_rep`` defaults to
    its ``uns["mmsfm"]`` representation. With more than two features both are projected on the first
    two principal axes of the observed cells. The PNG is written atomically.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rep = use_rep or traj.uns.get("mmsfm", {}).get("config", {}).get("use_rep", "X")
    obs_x = read_rep(observed, rep)
    gen_x = read_rep(traj, rep)
    if obs_x.shape[1] > 2:
        mean = obs_x.mean(0)
        _, _, vt = np.linalg.svd(obs_x - mean, full_matrices=False)
        obs_x, gen_x = (obs_x - mean) @ vt[:2].T, (gen_x - mean) @ vt[:2].T
        labels = ("PC1", "PC2")
    else:
        labels = ("dim 1", "dim 2")
    t_obs = np.asarray(observed.obs[time_key], dtype=float)
    fig, ax = plt.subplots(figsize=(7, 5))
    sc = ax.scatter(obs_x[:, 0], obs_x[:, 1], c=t_obs, s=4, cmap="viridis", alpha=0.5)
    fig.colorbar(sc, ax=ax, label=f"observed {time_key}")
    ids = np.asarray(traj.obs["mmsfm_traj_id"])
    t_gen = np.asarray(traj.obs[time_key], dtype=float)
    for i in np.unique(ids)[:n_lines]:
        sel = np.flatnonzero(ids == i)
        sel = sel[np.argsort(t_gen[sel])]
        ax.plot(gen_x[sel, 0], gen_x[sel, 1], color="tab:red", lw=0.6, alpha=0.5)
    ax.set_xlabel(labels[0])
    ax.set_ylabel(labels[1])
    ax.set_title(title or "MMSFM trajectories")
    path = Path(path)
    return save_figure(fig, path, dpi=120)
