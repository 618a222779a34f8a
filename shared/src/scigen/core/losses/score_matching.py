"""Denoising score matching with the ``lambda_t`` weighting, and the SF2M bridge objective.

With ``x_t = mu_t + std_t·eps`` the conditional score is ``−eps/std_t``; weighting the score error
by ``lambda_t² `` and choosing ``lambda_t`` to make the target ``−eps`` gives
``E‖lambda_t·s_θ(x_t, t) + eps‖²``:

* Gaussian paths (Song et al. 2021, Eq. 7 with ``λ(t) = sigma_t²``): ``lambda_t = sigma_t``, so
  ``s_θ ≈ ∇ log p_t``;
* Brownian bridges (Tong et al. 2024, SF2M Eq. 10): ``lambda_t = 2·std_t/sigma²``, so the network
  learns ``(sigma²/2)·∇ log p_t``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from scigen.core.losses.denoising import _call_model, prepare_times_and_noise
from scigen.core.losses.reductions import masked_mean
from scigen.core.losses.time_samplers import sample_times
from scigen.core.paths import BrownianBridge, GaussianPath
from scigen.core.validation import check_same_shape

__all__ = ["score_matching_loss", "sf2m_loss"]


def score_matching_loss(
    score_fn: Callable[[Tensor, Tensor], Tensor],
    x0: Tensor,
    path: GaussianPath,
    mask: Tensor | None = None,
    t: Tensor | None = None,
    noise: Tensor | None = None,
    generator: torch.Generator | None = None,
    time_sampler="uniform",
    *,
    t_min: float = 1e-5,
    t_max: float = 1.0,
) -> Tensor:
    """``mean ‖sigma_t·score_fn(x_t, t) + eps‖²`` over valid entries (``lambda_t = sigma_t``), a scalar."""
    if not isinstance(path, GaussianPath):
        raise TypeError(f"path must be a GaussianPath, got {type(path).__name__}")
    t, noise = prepare_times_and_noise(x0, t, noise, generator, time_sampler, t_min, t_max, mask)
    x_t = path.marginal(x0, t, noise)
    s = _call_model(score_fn, x_t, t, x0)
    lam = path.sigma(t).reshape((-1,) + (1,) * (x0.ndim - 1))
    return masked_mean((lam * s + noise) ** 2, mask)


def sf2m_loss(
    drift_fn: Callable[[Tensor, Tensor], Tensor],
    score_fn: Callable[[Tensor, Tensor], Tensor] | None,
    x_a: Tensor,
    x_b: Tensor,
    bridge: BrownianBridge,
    *,
    mu=None,
    dmu=None,
    mask: Tensor | None = None,
    t: Tensor | None = None,
    noise: Tensor | None = None,
    generator: torch.Generator | None = None,
    time_sampler="uniform",
    edge: float = 1e-4,
) -> dict[str, Tensor]:
    """SF2M / MMSFM loss on a bridge between coupled ``x_a`` (at ``t_a``) and ``x_b`` (at ``t_b``).

    ``flow = mean‖drift_fn(x_t, t) − u_t‖²`` with ``u_t = std'_t·eps + mu'_t`` (the bridge's
    conditional drift), ``score = mean‖lambda_t·score_fn(x_t, t) + eps‖²`` with
    ``lambda_t = 2·std_t/sigma²`` (skipped when ``score_fn`` is None, e.g. a fixed-sigma OT bridge).
    Times are drawn window-relative in ``[edge, 1 − edge]`` (the drift is singular at the pinned ends).

    Returns:
        ``{"flow": ..., "score": ..., "loss": flow + score}`` (``score`` is 0 without ``score_fn``).
    """
    if not isinstance(bridge, BrownianBridge):
        raise TypeError(f"bridge must be a BrownianBridge, got {type(bridge).__name__}")
    check_same_shape(x_a, x_b, "x_a", "x_b")
    if t is None:
        if not 0.0 <= edge < 0.5:
            raise ValueError(f"edge must lie in [0, 0.5), got {edge}")
        u = sample_times(
            time_sampler,
            x_a.shape[0],
            t_min=edge,
            t_max=1 - edge,
            generator=generator,
            device=x_a.device,
            dtype=x_a.dtype,
        )
        if bridge.per_sample and bridge.t_a.shape[0] != x_a.shape[0]:
            raise ValueError(f"the bridge has {bridge.t_a.shape[0]} per-sample windows but x_a has "
                             f"{x_a.shape[0]} rows")
        t = bridge.t_a + (bridge.t_b - bridge.t_a) * u
    elif not isinstance(t, Tensor) or t.shape != (x_a.shape[0],):
        raise ValueError(f"t must be a tensor of shape [B] = [{x_a.shape[0]}], got {getattr(t, 'shape', t)}")
    _, noise = prepare_times_and_noise(
        x_a, torch.zeros_like(t), noise, generator, time_sampler, 0.0, 1.0, mask
    )
    x_t = bridge.sample(t, x_a, x_b, noise, mu)
    u_t = bridge.velocity(t, noise, x_a, x_b, dmu)
    flow = masked_mean((_call_model(drift_fn, x_t, t, x_a) - u_t) ** 2, mask)
    score = torch.zeros((), dtype=flow.dtype, device=flow.device)
    if score_fn is not None:
        lam = bridge.score_weight(t).reshape((-1,) + (1,) * (x_a.ndim - 1))
        score = masked_mean((lam * _call_model(score_fn, x_t, t, x_a) + noise) ** 2, mask)
    return {"flow": flow, "score": score, "loss": flow + score}
