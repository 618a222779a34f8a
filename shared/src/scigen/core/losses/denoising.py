"""Denoising and flow-matching regression losses on a Gaussian path (t = 0 data, t = 1 noise).

``denoising_loss`` draws ``t`` and ``eps``, forms ``x_t = alpha(t)·x0 + sigma(t)·eps``, and
regresses ``model_fn(x_t, t)`` onto the chosen target (Ho et al. 2020, Eq. 14 for ``eps``;
Salimans & Ho 2022 for ``v``; Karras et al. 2022 for ``x0``), weighted per time by
:func:`scigen.core.losses.loss_weight`. The return value is the weighted **mean** squared error
over valid entries: ``Σ_b,i w_b (pred − target)² mask / Σ mask``.

On a :class:`~scigen.core.paths.LocationScalePath` (endpoint ``N(mu, Sigma)``, NsDiff/TMDM) the same loss
takes the path's ``mu``, ``var`` (and ``var2`` for two variance sources) per batch: ``x_t`` and the target
come from that path (``eps`` in standardised coordinates, ``x0`` in data space).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from scigen.core import streams
from scigen.core.losses.reductions import masked_mean
from scigen.core.losses.time_samplers import sample_times
from scigen.core.losses.weighting import loss_weight
from scigen.core.paths import GaussianPath, LinearPath, LocationScalePath, check_kind
from scigen.core.validation import check_same_shape, check_time_range

__all__ = ["REDUCTIONS", "denoising_loss", "flow_matching_loss", "prepare_times_and_noise"]

#: how :func:`denoising_loss` averages the squared errors
REDUCTIONS = ("mean", "per_sample")


def prepare_times_and_noise(x0, t, noise, generator, time_sampler, t_min, t_max, mask=None):
    """Validate ``x0`` and draw/validate ``t`` ``[B]`` and ``noise`` (shared by every loss here).

    Drawn noise is zeroed where ``mask`` is False (padding stays at ``alpha·x0``)."""
    if not isinstance(x0, Tensor) or x0.ndim < 1 or x0.shape[0] < 1 or not x0.is_floating_point():
        raise ValueError(
            f"x0 must be a floating tensor of shape [B, ...] with B >= 1, got {getattr(x0, 'shape', x0)}"
        )
    B = x0.shape[0]
    if t is None:
        t = sample_times(
            time_sampler, B, t_min=t_min, t_max=t_max, generator=generator, device=x0.device, dtype=x0.dtype
        )
    else:
        if not isinstance(t, Tensor) or t.shape != (B,):
            raise ValueError(
                f"t must be a tensor of shape [B] = [{B}], got {getattr(t, 'shape', type(t).__name__)}"
            )
        check_time_range(t, "t")
        t = t.to(device=x0.device, dtype=x0.dtype)
    if noise is None:
        noise = streams.randn(x0.shape, generator=generator, device=x0.device, dtype=x0.dtype)
        if mask is not None:
            noise = noise * mask.to(noise.device).expand(noise.shape)
    else:
        check_same_shape(x0, noise, "x0", "noise")
    return t, noise


def _check_bool_mask(m, x0: Tensor, name: str) -> Tensor:
    if not isinstance(m, Tensor) or m.dtype != torch.bool:
        raise ValueError(f"{name} must be a boolean tensor broadcastable to x0 {tuple(x0.shape)}, got "
                         f"{getattr(m, 'dtype', type(m).__name__)}")
    try:
        return m.to(x0.device).expand(x0.shape)
    except RuntimeError:
        raise ValueError(f"{name} of shape {tuple(m.shape)} does not broadcast to x0 {tuple(x0.shape)}") from None


def _call_model(model_fn, x_t, t, like):
    if not callable(model_fn):
        raise TypeError(f"model_fn must be callable (x, t) -> Tensor, got {type(model_fn).__name__}")
    pred = model_fn(x_t, t)
    if not isinstance(pred, Tensor) or pred.shape != like.shape:
        got = tuple(pred.shape) if isinstance(pred, Tensor) else type(pred).__name__
        raise ValueError(f"model_fn must return a tensor of the input's shape {tuple(like.shape)}, got {got}")
    return pred


def denoising_loss(
    model_fn: Callable[[Tensor, Tensor], Tensor],
    x0: Tensor,
    path: GaussianPath,
    target: str = "eps",
    weighting="uniform",
    mask: Tensor | None = None,
    t: Tensor | None = None,
    noise: Tensor | None = None,
    generator: torch.Generator | None = None,
    time_sampler="uniform",
    *,
    clean: Tensor | None = None,
    gamma: float = 5.0,
    sigma_data: float = 0.5,
    t_min: float = 1e-5,
    t_max: float = 1.0,
    mu: Tensor | None = None,
    var: Tensor | None = None,
    var2: Tensor | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Weighted denoising regression loss (a scalar).

    Args:
        model_fn: ``(x_t [B, ...], t [B]) -> prediction of kind target``.
        x0: clean data ``[B, ...]``. path: a :class:`GaussianPath`, or a :class:`LocationScalePath` with
            its ``mu``, ``var`` (``var2``) given (weighting ``"uniform"`` or a callable there).
        target: ``"eps" | "x0" | "v" | "velocity" | "score"``.
        weighting: ``"uniform" | "min_snr" | "edm"`` or a callable ``t -> [B]``
            (see :mod:`scigen.core.losses.weighting`; ``gamma``, ``sigma_data`` parameterise them).
        mask: boolean, broadcastable to ``x0``; the mean runs over True entries.
        clean: boolean, broadcastable to ``x0``; True entries are held clean in the network input
            (``x_t = x0`` there: fixed objects or known values the model conditions on, never noised)
            and are left out of the mean (they have nothing to predict).
        t, noise: fixed times ``[B]`` / noise (shape of ``x0``); drawn when ``None``.
        time_sampler: name or callable (:mod:`scigen.core.losses.time_samplers`), mapped to
            ``[t_min, t_max]``; the default ``t_min = 1e-5`` avoids ``sigma = 0`` at ``t = 0``.
        reduction: ``"mean"``: one mean over every valid entry of the batch (a sample with more
            valid entries weighs more); ``"per_sample"``: the mean over each sample's valid entries,
            then the mean over samples (every sample weighs the same whatever its size, the per-molecule
            mean of EDM / UniGEM on padded molecule batches).
    """
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    located = isinstance(path, LocationScalePath)
    if not isinstance(path, GaussianPath) and not located:
        raise TypeError(f"path must be a GaussianPath or a LocationScalePath, got {type(path).__name__}")
    if located and (mu is None or var is None):
        raise ValueError("a LocationScalePath needs mu= and var= (and var2= for two variance sources)")
    if not located and not (mu is None and var is None and var2 is None):
        raise ValueError("mu, var and var2 belong to a LocationScalePath; this path takes none")
    if located and not (weighting == "uniform" or callable(weighting)):
        raise ValueError(f"weighting on a LocationScalePath must be 'uniform' or a callable t -> [B], got {weighting!r}")
    check_kind(target, "target")
    t, noise = prepare_times_and_noise(x0, t, noise, generator, time_sampler, t_min, t_max, mask)
    loc = dict(var2=var2) if located else {}
    x_t = path.marginal(x0, t, mu, var, noise, **loc) if located else path.marginal(x0, t, noise)
    if clean is not None:
        clean = _check_bool_mask(clean, x0, "clean")
        x_t = torch.where(clean, x0, x_t)
        keep = ~clean
        mask = keep if mask is None else _check_bool_mask(mask, x0, "mask") & keep
    pred = _call_model(model_fn, x_t, t, x0)
    goal = path.target(x0, noise, t, target, mu, var, **loc) if located else path.target(x0, noise, t, target)
    w = loss_weight(path.base if located else path, t, target, weighting, gamma=gamma, sigma_data=sigma_data)
    w = w.reshape((-1,) + (1,) * (x0.ndim - 1))
    if reduction == "per_sample":
        m = None if mask is None else _check_bool_mask(mask, x0, "mask")
        return masked_mean(w * (pred - goal) ** 2, m, dim=tuple(range(1, x0.ndim))).mean()
    return masked_mean(w * (pred - goal) ** 2, mask)


def flow_matching_loss(
    model_fn: Callable[[Tensor, Tensor], Tensor],
    x0: Tensor,
    x1: Tensor | None = None,
    path: GaussianPath | None = None,
    mask: Tensor | None = None,
    t: Tensor | None = None,
    generator: torch.Generator | None = None,
    time_sampler="uniform",
    *,
    t_min: float = 0.0,
    t_max: float = 1.0,
) -> Tensor:
    """Conditional flow matching (Lipman et al. 2023, Eq. 9; Liu et al. 2023, Eq. 1), scalar MSE.

    ``x_t = alpha(t)·x0 + sigma(t)·x1`` on ``path`` (default :class:`LinearPath`: ``(1 − t)·x0 + t·x1``)
    and the target is ``dx_t/dt = alpha'·x0 + sigma'·x1``. ``x1`` is standard Gaussian noise by
    default, or a coupled sample (e.g. from an OT plan between ``x0`` and the prior/second marginal).
    """
    path = LinearPath() if path is None else path
    return denoising_loss(
        model_fn,
        x0,
        path,
        "velocity",
        "uniform",
        mask,
        t,
        x1,
        generator,
        time_sampler,
        t_min=t_min,
        t_max=t_max,
    )
