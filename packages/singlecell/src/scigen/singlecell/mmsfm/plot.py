"""Plot generated trajectories over the observed marginals (2-D, or the first two principal axes)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from scigen.core.plotting import save_figure
from scigen.singlecell.io import read_rep

__all__ = ["plot_trajectories"]


def plot_trajectories(traj: Any, observed: Any, path: str | os.PathLike[str] | None = None, *, ax=None,
                      time_key: str = "time", use_rep: str | None = None, layer: str | None = None,
                      n_lines: int = 60, title: str = ""):
    """Scatter ``observed`` cells coloured by time and draw ``n_lines`` trajectories of ``traj`` into ``ax``.

    ``traj`` is an AnnData from :meth:`MMSFM.sample` (``obs["mmsfm_traj_id"]``); the representation
    (``use_rep`` / ``layer``) defaults to the one recorded in its ``uns["mmsfm"]``. With more than two
    features both are projected on the first two principal axes of the observed cells.

    Returns the Figure (of ``ax``, or a new one); writes a PNG atomically only when ``path`` is given.
    Never sets the matplotlib backend.
    """
    import matplotlib.pyplot as plt

    if use_rep is None and layer is None:
        prov = traj.uns.get("mmsfm", {})
        use_rep, layer = prov.get("use_rep"), prov.get("layer")
    obs_x = read_rep(observed, use_rep, layer=layer)
    gen_x = read_rep(traj, use_rep, layer=layer)
    if obs_x.shape[1] > 2:
        mean = obs_x.mean(0)
        _, _, vt = np.linalg.svd(obs_x - mean, full_matrices=False)
        obs_x, gen_x = (obs_x - mean) @ vt[:2].T, (gen_x - mean) @ vt[:2].T
        labels = ("PC1", "PC2")
    else:
        labels = ("dim 1", "dim 2")
    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 5))
    else:
        fig = ax.figure
    t_obs = np.asarray(observed.obs[time_key], dtype=float)
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
    if path is not None:
        save_figure(fig, path, dpi=120, close=False)
    return fig
