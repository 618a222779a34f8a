"""D3U (Li et al., ICLR 2025): a frozen point forecaster plus a conditional diffusion (PatchDN) over its residual."""

from scigen.timeseries.d3u.config import D3UConfig

__all__ = ["D3UConfig"]
