"""Inverse Flow's networks: the engine's residual MLP for vectors (cells, the toy; the official ``sMLP``'s
role) and the engine's small U-Net for images (the official ``N2NUNet``'s role, without attention so
full-size images denoise in one pass). Both are ``F(x, t)`` with the raw Karras time ``t``."""

from __future__ import annotations

from torch import nn

from scigen.core.nn import ResidualMLP, UNet

__all__ = ["build_network"]


def build_network(config, kind: str, channels: int) -> nn.Module:
    """``kind`` "vectors" (``channels`` = features) or "images" (``channels`` = image channels)."""
    net = config.network if config.network != "auto" else ("unet" if kind == "images" else "mlp")
    if net == "mlp":
        if kind == "images":
            raise ValueError("network='mlp' cannot denoise images: use network='unet' or 'auto'")
        return ResidualMLP(channels, width=config.width, depth=config.depth, time_dim=config.time_dim)
    if kind != "images":
        raise ValueError("network='unet' needs images ([N, H, W] or [N, C, H, W]); use 'mlp' or 'auto'")
    groups = min(config.groups, config.base_channels)
    return UNet(channels, base_channels=config.base_channels, channel_mults=tuple(config.channel_mults),
                n_res_blocks=config.n_res_blocks, attention=False, groups=groups)
