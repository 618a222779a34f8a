"""The two networks of the nowcast: the stage-1 MSE estimator and the stage-2 velocity field.

Both are the engine's :class:`scigen.core.nn.UNet` over frames stacked as channels (a spatio-temporal
U-Net, as in the ICML 2025 nowcasting paper's estimator; Ronneberger et al. 2015).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from scigen.core.nn import UNet

__all__ = ["Estimator", "FlowNet", "NowcastNet"]


def _unet(cfg, c_in: int, c_out: int) -> UNet:
    return UNet(c_in, c_out, dims=2, base_channels=cfg.base_channels, channel_mults=tuple(cfg.channel_mults),
                n_res_blocks=cfg.n_res_blocks, attention=cfg.attention, groups=cfg.groups)


def _extra(cfg) -> int:
    """Channels of the advection input (``cfg.advection_input``, ours): ``horizon`` or none."""
    return cfg.horizon if cfg.advection_input else 0


class Estimator(nn.Module):
    """``context [B, C, H, W] -> mean [B, L, H, W]``: the last context frame plus a U-Net residual (the
    zero-initialised output makes the untrained estimator persistence). With ``advection_input`` (ours)
    the U-Net also sees ``adv [B, L, H, W]`` (the extrapolated context) and the residual is on ``adv``
    (the untrained estimator is the extrapolation)."""

    def __init__(self, cfg) -> None:
        super().__init__()
        self.horizon = cfg.horizon
        self.advection = bool(_extra(cfg))
        self.unet = _unet(cfg, cfg.context_frames + _extra(cfg), cfg.horizon)

    def forward(self, context: Tensor, adv: Tensor | None = None) -> Tensor:
        t = torch.zeros(context.shape[0], device=context.device, dtype=context.dtype)
        if self.advection:
            if adv is None:
                raise ValueError("this estimator was built with advection_input: pass adv [B, L, H, W]")
            return adv + self.unet(torch.cat([context, adv], dim=1), t)
        return context[:, -1:] + self.unet(context, t)


class FlowNet(nn.Module):
    """``v(x_t [B, L, H, W], t [B]; context, mean) -> [B, L, H, W]``: the rectified-flow velocity, with the
    context and the stage-1 mean stacked onto ``x_t`` as channels (and ``adv``, the extrapolated context,
    with ``advection_input``, ours)."""

    def __init__(self, cfg) -> None:
        super().__init__()
        self.advection = bool(_extra(cfg))
        self.unet = _unet(cfg, cfg.horizon + cfg.context_frames + cfg.horizon + _extra(cfg), cfg.horizon)

    def forward(self, x: Tensor, t: Tensor, *, context: Tensor, mean: Tensor, adv: Tensor | None = None) -> Tensor:
        parts = [x, context, mean]
        if self.advection:
            if adv is None:
                raise ValueError("this flow was built with advection_input: pass adv [B, L, H, W]")
            parts.append(adv)
        return self.unet(torch.cat(parts, dim=1), t)


class NowcastNet(nn.Module):
    """Both stages, plus the training data's last context (``last_context [C, H, W]``, in model units) that
    the CLI forecasts from."""

    def __init__(self, cfg, height: int, width: int) -> None:
        super().__init__()
        self.estimator = Estimator(cfg)
        self.flow = FlowNet(cfg)
        self.register_buffer("last_context", torch.zeros(cfg.context_frames, height, width))
