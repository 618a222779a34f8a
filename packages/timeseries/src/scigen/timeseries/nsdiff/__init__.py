"""NsDiff (Ye et al., ICML 2025) and TMDM mode: config, networks, path + loss (process), sampler, system."""

from scigen.timeseries.nsdiff.config import NsDiffConfig

__all__ = ["NsDiffConfig"]
