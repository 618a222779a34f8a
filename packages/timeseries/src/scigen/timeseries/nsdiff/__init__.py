"""NsDiff (Ye et al., ICML 2025) and TMDM mode: config, schedule, networks, loss/sampler, system."""

from scigen.timeseries.nsdiff.config import NsDiffConfig
from scigen.timeseries.nsdiff.schedule import NsDiffSchedule

__all__ = ["NsDiffConfig", "NsDiffSchedule"]
