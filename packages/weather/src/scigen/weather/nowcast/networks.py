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


class Estimator(nn.Module):
    """``context [B, C, H, W] -> mean [B, L, H, W]``: the last context frame plus a U-Net residual (the
    zero-initialised output makes the untrained estimator persistence)."""

    def __init__(self, cfg) -> None:
        super().__init__()
        self.horizon = cfg.horizon
        self.unet = _unet(cfg, cfg.context_frames, cfg.horizon)

    def forward(self, context: Tensor) -> Tensor:
        t = torch.zeros(context.shape[0], device=context.device, dtype=context.dtype)
        return context[:, -1:] + self.unet(context, t)


class FlowNet(nn.Module):
    """``v(x_t [B, L, H, W], t [B]; context, mean) -> [B, L, H, W]``: the rectified-flow velocity, with the
    context and the stage-1 mean stacked onto ``x_t`` as channels."""

    def __init__(self, cfg) -> None:
        super().__init__()
        self.unet = _unet(cfg, cfg.horizon + cfg.context_frames + cfg.horizon, cfg.horizon)

    def forward(self, x: Tensor, t: Tensor, *, context: Tensor, mean: Tensor) -> Tensor:
        return self.unet(torch.cat([x, context, mean], dim=1), t)


class NowcastNet(nn.Module):
    """Both stages, plus the training data's last context (``last_context [C, H, W]``, in model units) that
    the CLI forecasts from."""

    def __init__(self, cfg, height: int, width: int) -> None:
        super().__init__()
        self.estimator = Estimator(cfg)
        self.flow = FlowNet(cfg)
        self.register_buffer("last_context", torch.zeros(cfg.context_frames, height, width))
