"""The two training losses, for :func:`scigen.core.train.fit` (batches are windows ``[B, C + L, H, W]``, or
``[B, C + L + L, H, W]`` with ``advection_input``, ours: the extrapolated context appended, see
:func:`split_batch`).

Stage 1: the MSE of the estimator (its minimiser is the posterior mean ``E[x0 | context]``).
Stage 2: the engine's flow-matching loss (:class:`scigen.core.generative.FlowMatching`, velocity target
``x1 − x0`` on :class:`~scigen.core.paths.LinearPath`) with ``x1 = mean + sigma_s·eps`` (PMRF, Ohayon et al.
2025, Alg. 1), the estimator frozen, and lead ``l`` kept in the loss with probability ``w_l``
(``NowcastConfig.lead_weights``), a Bernoulli mask drawn from the RNG that ``fit`` seeds and checkpoints.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from scigen.core import streams

__all__ = ["estimator_loss_fn", "flow_loss_fn", "flow_process", "lead_mask", "source_noise", "split_batch"]


def split_batch(cfg, batch: Tensor) -> tuple[Tensor, Tensor, Tensor | None]:
    """``(context, target, adv)`` of a training batch; ``adv`` (the extrapolated context, the last ``L``
    channels) only with ``cfg.advection_input`` (ours), else ``None``."""
    C, L = cfg.context_frames, cfg.horizon
    adv = batch[:, C + L : C + 2 * L] if cfg.advection_input else None
    return batch[:, :C], batch[:, C : C + L], adv


def flow_process(net: nn.Module, cfg):
    """The stage-2 flow: the engine's FlowMatching around ``net`` (a :class:`FlowNet`)."""
    from scigen.core.generative import FlowMatching

    return FlowMatching(net, method=cfg.method, steps=cfg.steps)


def estimator_loss_fn(cfg) -> Callable[[nn.Module, Tensor], Tensor]:
    def loss_fn(net: nn.Module, batch: Tensor) -> Tensor:
        ctx, target, adv = split_batch(cfg, batch)
        return F.mse_loss(net.estimator(ctx, adv), target)

    return loss_fn


def source_noise(cfg, like: Tensor) -> Tensor:
    """``[1, L, 1, 1]``: the source noise ``sigma_l`` per lead (``NowcastConfig.source_noise``), on ``like``'s
    device and dtype."""
    return torch.tensor(cfg.source_noise(), device=like.device, dtype=like.dtype).view(1, -1, 1, 1)


def lead_mask(weights: Tensor, batch: int, generator: torch.Generator | None = None) -> Tensor:
    """Boolean ``[batch, L, 1, 1]``: lead ``l`` counts with probability ``weights[l]``."""
    u = streams.rand((batch, weights.numel(), 1, 1), generator=generator, device=weights.device)
    return u < weights.view(1, -1, 1, 1)


def flow_loss_fn(cfg) -> Callable[[nn.Module, Tensor], Tensor]:
    def loss_fn(net: nn.Module, batch: Tensor) -> Tensor:
        ctx, target, adv = split_batch(cfg, batch)
        with torch.no_grad():
            mean = net.estimator(ctx, adv)
        x1 = mean + source_noise(cfg, mean) * streams.randn(mean.shape, device=mean.device, dtype=mean.dtype)
        w = torch.tensor(cfg.lead_weights(), device=batch.device, dtype=batch.dtype)
        mask = lead_mask(w, batch.shape[0]).expand_as(target)
        return flow_process(net.flow, cfg).loss(target, x1=x1, mask=mask, network=net.flow, context=ctx, mean=mean,
                                              adv=adv)

    return loss_fn
