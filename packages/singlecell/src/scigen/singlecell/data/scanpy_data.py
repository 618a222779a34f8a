"""Offline time courses from scanpy: the bundled ``krumsiek11`` and new ``sc.tl.sim`` simulations.

Both are simulations of the 11-gene myeloid progenitor network of Krumsiek et al. (2011, PLoS ONE
6:e22649) with a known time index per cell. :func:`bin_time_course` turns a continuous time index
into a few irregular snapshot times, as in a real experiment (days 2, 3, 4, 7 ...).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence

import numpy as np

from scigen.core.errors import InvalidInputError

__all__ = ["KRUMSIEK_SNAPSHOTS", "bin_time_course", "krumsiek11_time_course", "load_pbmc68k_reduced",
           "sim_time_course"]

KRUMSIEK_SNAPSHOTS = (0.0, 10.0, 25.0, 60.0, 100.0, 159.0)


def bin_time_course(adata, step: np.ndarray, snapshots: Sequence[float], *, half_width: float,
                    time_key: str = "time"):
    """Keep cells whose ``step`` lies within ``half_width`` of a snapshot time; label them with it.

    Returns a new AnnData (the input is not modified) with ``obs[time_key]`` = the snapshot time and
    ``obs["sim_step"]`` = the original step.
    """
    snaps = np.asarray(snapshots, dtype=float)
    if snaps.ndim != 1 or len(snaps) < 2 or not np.all(np.diff(snaps) > 0):
        raise InvalidInputError(f"snapshots must be >= 2 increasing times, got {list(snapshots)}")
    if not half_width >= 0:
        raise InvalidInputError(f"half_width must be >= 0, got {half_width}")
    step = np.asarray(step, dtype=float)
    dist = np.abs(step[:, None] - snaps[None, :])
    nearest = dist.argmin(1)
    keep = dist[np.arange(len(step)), nearest] <= half_width
    if not keep.any():
        raise InvalidInputError("no cell lies within half_width of a snapshot time")
    out = adata[keep].copy()
    out.obs[time_key] = snaps[nearest[keep]]
    out.obs["sim_step"] = step[keep]
    missing = sorted(set(snaps.tolist()) - set(out.obs[time_key].tolist()))
    if missing:
        raise InvalidInputError(f"snapshot time(s) {missing} received no cells; widen half_width")
    return out


def krumsiek11_time_course(snapshots: Sequence[float] = KRUMSIEK_SNAPSHOTS, *, half_width: float = 6.0,
                           time_key: str = "time"):
    """scanpy's bundled ``krumsiek11`` (640 cells x 11 genes: 4 realisations x 160 steps) binned to snapshots.

    The step of each cell is its ``obs_name`` (0..159, repeated per realisation). With the defaults
    the 6 irregular snapshots get 24 to 52 cells each.
    """
    from scigen.datasets.bundled import scanpy_dataset

    ad = scanpy_dataset("krumsiek11")
    step = np.asarray([float(s) for s in ad.obs_names])
    ad.obs_names_make_unique()
    ad.obs_names = [f"cell_{i}" for i in range(ad.n_obs)]
    return bin_time_course(ad, step, snapshots, half_width=half_width, time_key=time_key)


def load_pbmc68k_reduced():
    """scanpy's bundled ``pbmc68k_reduced``: 700 PBMCs x 765 genes from 10x (Zheng et al. 2017,
    *Nat Commun* 8:14049), ``.X`` scaled, ``.raw.X`` log-normalised, ``obs["bulk_labels"]`` cell types.
    No download (the file ships in the scanpy wheel); catalog card ``pbmc68k_reduced``."""
    from scigen.datasets.bundled import scanpy_dataset

    return scanpy_dataset("pbmc68k_reduced")


def sim_time_course(snapshots: Sequence[float], *, model: str = "krumsiek11", tmax: int = 200,
                    n_realizations: int = 4, half_width: float = 5.0, seed: int = 0, time_key: str = "time"):
    """Simulate a fresh time course with ``scanpy.tl.sim`` (into a temporary directory) and bin it.

    Slow (minutes on one CPU for the defaults); the bundled :func:`krumsiek11_time_course` is the quick
    alternative. The step of each cell is its position within its realisation.
    """
    import scanpy as sc

    with tempfile.TemporaryDirectory(prefix="scigen-sim-") as d:
        ad = sc.tl.sim(model, tmax=tmax, nrRealizations=n_realizations, seed=seed, writedir=d)
    per = ad.n_obs // max(1, n_realizations)
    step = np.arange(ad.n_obs) % max(1, per)
    ad.obs_names = [f"cell_{i}" for i in range(ad.n_obs)]
    return bin_time_course(ad, step, snapshots, half_width=half_width, time_key=time_key)
