"""Checking what :meth:`MMSFM.sample` is asked for: the read-out times, the sampler and the start cells."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch
from torch import Tensor

from scigen.core import streams
from scigen.core.errors import InvalidInputError
from scigen.core.validation import check_count
from scigen.singlecell.io import read_rep, rep_dim
from scigen.singlecell.mmsfm.integrate import METHODS

__all__ = ["check_method", "check_times", "start_cells"]


def check_times(times: Any, observed: list[float], t_first: float) -> np.ndarray:
    """Sorted float times (default: the observed ones); every time must be ``>= t_first``. Times after
    the last observed one are extrapolated (the drift was never trained there): a ``UserWarning``."""
    if times is None:
        return np.asarray(observed, dtype=float)
    try:
        t = np.atleast_1d(np.asarray(times, dtype=float))
    except (TypeError, ValueError):
        t = None
    if t is None or t.ndim != 1 or len(t) == 0 or not np.isfinite(t).all():
        raise InvalidInputError(f"times must be a non-empty list of finite numbers, got {times!r}")
    if t.min() < t_first:
        raise InvalidInputError(f"times must be >= the first observed time {t_first:g} (trajectories start "
                                f"there), got {t.min():g}")
    if t.max() > max(observed):
        warnings.warn(f"times up to {t.max():g} extrapolate past the last observed time {max(observed):g}: the "
                      "drift was not trained there", UserWarning, stacklevel=3)
    return np.sort(t)


def check_method(method: str | None, default: str) -> str:
    """``method`` (or ``default``) if it is one of :data:`~scigen.singlecell.mmsfm.integrate.METHODS` (engine
    solver names, checked by ``scigen.core.samplers.check_method``)."""
    from scigen.core.samplers import check_method as engine_check

    method = method or default
    if method == "sde":
        raise InvalidInputError(f"method must be one of {', '.join(METHODS)}, got 'sde' (the SDE sampler is now "
                                "called 'euler_maruyama')")
    return engine_check(method, METHODS)


def start_cells(pool: Tensor, n_samples: int | None, source: Any, rep: dict[str, str | None],
                generator: torch.Generator, keys: Tensor | None = None, seed: int | None = None) -> Tensor:
    """float64 start states ``[n, d]`` on ``pool``'s device: ``n_samples`` of the stored first-marginal
    cells ``pool`` (without replacement while there are enough, else with), or the user's ``source``
    (an AnnData read with ``rep``, or an array ``[n, d]``).

    ``keys`` (sample indices, with ``seed`` and ``generator`` the matching
    :class:`~scigen.core.streams.SampleStreams`): only the rows of those samples, each a function of
    ``(seed, key)`` alone: sample ``i < len(pool)`` is ``pool[π(i)]`` for one permutation ``π`` drawn from
    ``seed`` (so the first ``len(pool)`` samples are without replacement), later samples a keyed uniform
    pool row; with ``source``, sample ``i`` is its row ``i``."""
    dim = pool.shape[1]
    if keys is not None:
        if source is None:
            perm = torch.randperm(len(pool), generator=torch.Generator().manual_seed(int(seed)))
            extra = streams.randint(0, len(pool), (len(keys),), generator=generator)
            k = keys.cpu()
            idx = torch.where(k < len(pool), perm[k.clamp(max=len(pool) - 1)], extra.cpu())
            return pool[idx.to(pool.device)]
        x = start_cells(pool, None, source, rep, generator)
        return x[keys.clamp(max=len(x) - 1).to(x.device)]  # keys past n (the last shard's padding) are dropped
    if source is None:
        n = len(pool) if n_samples is None else check_count(n_samples, "n_samples")
        dev = generator.device
        idx = torch.randperm(len(pool), generator=generator, device=dev)[:n] if n <= len(pool) else \
            torch.randint(len(pool), (n,), generator=generator, device=dev)
        return pool[idx.to(pool.device)]
    import anndata

    if isinstance(source, anndata.AnnData):
        d = rep_dim(source, **rep)
        if d != dim:
            raise InvalidInputError(f"source has {d} features in {rep} but the model was trained on {dim}")
        x = torch.as_tensor(read_rep(source, **rep), dtype=torch.float64)
    else:
        x = torch.as_tensor(np.asarray(source), dtype=torch.float64)
        if x.ndim != 2 or x.shape[1] != dim:
            raise InvalidInputError(f"source must be an AnnData or an array [n, {dim}] (the training "
                                    f"representation), got shape {tuple(x.shape)}")
    if not torch.isfinite(x).all():
        raise InvalidInputError("source has NaN/inf values")
    return x.to(pool.device)
