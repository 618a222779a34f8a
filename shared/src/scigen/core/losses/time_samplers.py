"""Samplers of training times ``t ∈ [t_min, t_max] ⊂ [0, 1]`` (t = 0 data, t = 1 noise).

Each base sampler returns ``n`` values in ``[0, 1]``; :func:`sample_times` maps them affinely to
``[t_min, t_max]``.

* ``uniform``: i.i.d. ``U(0, 1)``.
* ``stratified``: one draw per stratum ``[(i)/n, (i + 1)/n)``, in random order (lower-variance
  Monte Carlo over ``t``; Kingma et al. 2021, App. I "low-discrepancy sampler" in spirit).
* ``logit_normal``: ``sigmoid(N(mean, std²))`` (Esser et al. 2024, SD3, §3.1).
* ``antithetic``: ``u`` and ``1 − u`` pairs (NsDiff / CARD training; odd ``n`` drops the last). Under per-sample
  streams (:mod:`scigen.core.streams`) the pairs are samples ``2m`` and ``2m + 1`` by key, so each sample's time is
  the same in any batch on any rank (within-batch pairing, and its variance reduction, is then lost).
* :func:`edm_lognormal_times` (needs the path, so not in the registry): EDM's
  ``ln σ ~ N(P_mean, P_std²)`` (Karras et al. 2022, Table 1) mapped to ``t`` through
  ``path.t_from_edm_sigma``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from scigen.core import streams

__all__ = [
    "TIME_SAMPLERS",
    "antithetic_times",
    "edm_lognormal_times",
    "logit_normal_times",
    "sample_times",
    "stratified_times",
    "uniform_times",
]


def _check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n (number of times) must be an int >= 1, got {n!r}")
    return n


def _batch_coupled(name: str, generator) -> None:
    """Stratified times couple the rows of a batch (one per stratum): no per-sample stream can give them."""
    if isinstance(generator, streams.SampleStreams) or (generator is None and streams.current_streams() is not None):
        raise ValueError(f"time_sampler={name!r} couples the rows of a batch, so it has no per-sample random "
                         "streams (fit(rng='per_sample'), distributed sampling): use 'uniform' or 'logit_normal'")


def uniform_times(n: int, *, generator=None, device=None, dtype=None) -> Tensor:
    """``n`` i.i.d. ``U(0, 1)`` draws."""
    return streams.rand((_check_n(n),), generator=generator, device=device, dtype=dtype)


def stratified_times(n: int, *, generator=None, device=None, dtype=None) -> Tensor:
    """Exactly one ``U(i/n, (i+1)/n)`` draw for each ``i``, randomly permuted."""
    n = _check_n(n)
    _batch_coupled("stratified", generator)
    u = torch.rand(n, generator=generator, device=device, dtype=dtype)
    perm = torch.randperm(n, generator=generator, device=device)
    return (perm.to(u.dtype) + u) / n


def logit_normal_times(
    n: int, *, mean: float = 0.0, std: float = 1.0, generator=None, device=None, dtype=None
) -> Tensor:
    """``sigmoid(mean + std·N(0, 1))`` (SD3's logit-normal time density)."""
    if not std > 0:
        raise ValueError(f"std must be > 0, got {std}")
    z = streams.randn((_check_n(n),), generator=generator, device=device, dtype=dtype)
    return torch.sigmoid(mean + std * z)


def antithetic_times(n: int, *, generator=None, device=None, dtype=None) -> Tensor:
    """``[u_1 … u_m, 1 − u_1 … 1 − u_m]`` truncated to ``n`` (``m = ceil(n/2)``)."""
    n = _check_n(n)
    keyed = streams.as_streams(generator)
    if keyed is not None:  # per-sample streams: pairs by key (2m, 2m + 1), whichever batch each is in
        u, odd = keyed.paired_rand(device=device, dtype=dtype)
        if u.shape[0] != n:
            raise ValueError(f"antithetic times under per-sample streams: {n} times for {u.shape[0]} samples")
        return torch.where(odd, 1 - u, u)
    u = torch.rand((n + 1) // 2, generator=generator, device=device, dtype=dtype)
    return torch.cat([u, 1 - u])[:n]


def edm_lognormal_times(
    n: int, path, *, p_mean: float = -1.2, p_std: float = 1.2, generator=None, device=None, dtype=None
) -> Tensor:
    """Times whose EDM noise level ``path.edm_sigma(t)`` is log-normal(``p_mean``, ``p_std``), clamped to [0, 1]."""
    if not hasattr(path, "t_from_edm_sigma"):
        raise TypeError(f"path must be a GaussianPath (with t_from_edm_sigma), got {type(path).__name__}")
    if not p_std > 0:
        raise ValueError(f"p_std must be > 0, got {p_std}")
    z = streams.randn((_check_n(n),), generator=generator, device=device, dtype=dtype)
    return path.t_from_edm_sigma(torch.exp(p_mean + p_std * z)).clamp(0.0, 1.0)


TIME_SAMPLERS: dict[str, Callable[..., Tensor]] = {
    "uniform": uniform_times,
    "stratified": stratified_times,
    "logit_normal": logit_normal_times,
    "antithetic": antithetic_times,
}


def sample_times(
    sampler: str | Callable[..., Tensor] = "uniform",
    n: int = 1,
    *,
    t_min: float = 0.0,
    t_max: float = 1.0,
    generator=None,
    device=None,
    dtype=None,
    **options,
) -> Tensor:
    """Draw ``n`` times with ``sampler`` (a name in :data:`TIME_SAMPLERS` or a callable with the
    same signature) and map them to ``t_min + (t_max − t_min)·u``."""
    if isinstance(sampler, str):
        if sampler not in TIME_SAMPLERS:
            raise ValueError(
                f"time_sampler must be one of {sorted(TIME_SAMPLERS)} or a callable, got {sampler!r}"
            )
        sampler = TIME_SAMPLERS[sampler]
    elif not callable(sampler):
        raise TypeError(f"time_sampler must be a name or a callable, got {type(sampler).__name__}")
    if not 0.0 <= t_min < t_max <= 1.0:
        raise ValueError(f"need 0 <= t_min < t_max <= 1, got t_min={t_min}, t_max={t_max}")
    u = sampler(_check_n(n), generator=generator, device=device, dtype=dtype, **options)
    if not isinstance(u, Tensor) or u.shape != (n,):
        raise ValueError(
            f"time_sampler must return a tensor of shape [{n}], got {getattr(u, 'shape', type(u))}"
        )
    return t_min + (t_max - t_min) * u
