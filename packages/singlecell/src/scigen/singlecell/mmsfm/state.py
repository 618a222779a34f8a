"""What MMSFM keeps from its training snapshots: the feature scaler, the first-marginal cells that
trajectories start from, the PCA inverse (for gene-space output), and the minibatch index table.

All of it is fixed when :meth:`MMSFM.fit` first sees the data and saved with the model (``buffers``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor

from scigen.core.errors import InvalidInputError
from scigen.singlecell._version import __version__
from scigen.singlecell.io import Snapshots
from scigen.singlecell.preprocess import PREPROCESS_KEY, has_pca_inverse

__all__ = ["check_holdout", "index_table", "pca_buffers", "scaler_buffers", "snapshot_buffers", "snapshot_metadata",
           "source_subset", "training_times"]


def check_holdout(holdout: Any) -> list[float]:
    """``holdout`` as a list of finite floats (one number is a list of one)."""
    values = [holdout] if isinstance(holdout, (int, float)) and not isinstance(holdout, bool) else holdout
    try:
        out = [float(h) for h in values if not isinstance(h, bool)]
    except (TypeError, ValueError):
        out = None
    if out is None or isinstance(values, str) or len(out) != len(values) or not np.isfinite(out).all():
        raise InvalidInputError(f"holdout must be a list of observed times (numbers), got {holdout!r}")
    return out


def training_times(snaps: Snapshots, holdout: Any, k: int) -> list[int]:
    """Indices of the observed times left for training after ``holdout`` (never the first time; at
    least ``k + 1`` of them for one window)."""
    holdout = check_holdout(holdout)
    held = [snaps.index_of(h) for h in holdout]
    if 0 in held:
        raise InvalidInputError(f"holdout cannot contain the first time point {snaps.times[0]:g}: "
                                "trajectories start from it")
    train_idx = [i for i in range(len(snaps.times)) if i not in held]
    if len(train_idx) < k + 1:
        raise InvalidInputError(f"window size k={k} needs at least {k + 1} training time points; "
                                f"{snaps.time_key} has {len(train_idx)} after holding out {holdout}")
    return train_idx


def snapshot_metadata(snaps: Snapshots, train_idx: list[int], *, condition: dict[str, Any] | None, seed: int,
                      gene_names: list[str] | None) -> dict[str, Any]:
    """What a trained model records about its data (saved in the run's metadata)."""
    return {
        "dim": snaps.dim, "features": snaps.features, "times": snaps.times, "seed": seed,
        "train_times": [snaps.times[i] for i in train_idx],
        "holdout_times": [t for i, t in enumerate(snaps.times) if i not in train_idx],
        "t_first": snaps.times[0], "t_last": snaps.times[-1], "time_key": snaps.time_key,
        "use_rep": snaps.use_rep, "layer": snaps.layer, "version": __version__,
        "condition": {k: str(v) for k, v in (condition or {}).items()},
        "gene_names": gene_names, "cells_per_time": snaps.sizes,
    }


def scaler_buffers(scaler: str, stats: dict) -> dict[str, Tensor]:
    """float64 ``shift`` / ``scale`` of the scaler from per-feature ``stats`` (``min``, ``max``, ``mean``, ``std``):
    ``minmax``, ``standard`` or ``none``; a constant feature gets scale 1."""
    if scaler == "minmax":
        shift, scale = torch.as_tensor(stats["min"]), torch.as_tensor(stats["max"]) - torch.as_tensor(stats["min"])
    elif scaler == "standard":
        shift, scale = torch.as_tensor(stats["mean"]), torch.as_tensor(stats["std"])
    else:
        shift, scale = torch.zeros(len(stats["min"])), torch.ones(len(stats["min"]))
    scale = scale.double()
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    return {"shift": shift.double(), "scale": scale}


def pca_buffers(snaps: Snapshots, adata: Any) -> dict[str, Tensor]:
    """``pca_components`` / ``pca_mean`` for ``use_rep="X_pca"`` after :func:`~scigen.singlecell.preprocess`."""
    if snaps.use_rep == "X_pca" and has_pca_inverse(adata):
        return {"pca_components": torch.as_tensor(np.ascontiguousarray(adata.varm["PCs"], dtype=np.float64)),
                "pca_mean": torch.as_tensor(adata.uns[PREPROCESS_KEY]["mean"], dtype=torch.float64)}
    return {}


def source_subset(n: int, max_source_cells: int, seed: int) -> Tensor | None:
    """Which first-marginal cells trajectories start from: a seeded subsample of ``max_source_cells``
    positions, or ``None`` (all) when there are at most that many."""
    if n <= max_source_cells:
        return None
    return torch.randperm(n, generator=torch.Generator().manual_seed(seed))[:max_source_cells]


def snapshot_buffers(snaps: Snapshots, train_idx: list[int], adata: Any, *, scaler: str, max_source_cells: int,
                     seed: int) -> dict[str, Tensor]:
    """float64 ``shift`` / ``scale`` of the scaler on the training marginals (``minmax``, ``standard`` or
    ``none``; a constant feature gets scale 1), ``source`` (at most ``max_source_cells`` first-marginal
    cells, a seeded subsample) and, for ``use_rep="X_pca"`` after :func:`~scigen.singlecell.preprocess`,
    ``pca_components`` / ``pca_mean``."""
    stacked = torch.cat([snaps.data[i] for i in train_idx]).double()
    stats = {"min": stacked.min(0).values, "max": stacked.max(0).values}
    if scaler == "standard":
        stats.update(mean=stacked.mean(0), std=stacked.std(0))
    buffers = scaler_buffers(scaler, stats)
    first = snaps.data[0]
    sel = source_subset(len(first), max_source_cells, seed)
    buffers["source"] = (first if sel is None else first[sel]).double()
    buffers.update(pca_buffers(snaps, adata))
    return buffers


def index_table(sizes: list[int], seed: int) -> Tensor:
    """``[L, M]`` long: row ``i`` picks cell ``perm_m[i mod n_m]`` of marginal ``m`` (``L = max n_m``).

    Training iterates over its rows in minibatches, so one batch draws ``batch_size`` cells from every
    marginal (marginals smaller than ``L`` are cycled through)."""
    g = torch.Generator().manual_seed(seed + 7919)
    L = max(sizes)
    cols = [torch.randperm(n, generator=g)[torch.arange(L) % n] for n in sizes]
    return torch.stack(cols, 1)
