"""Probabilistic time-series forecasting with diffusion (NsDiff, D3U) on pandas and xarray.

``from scigen.timeseries import NsDiff, D3U`` (imported lazily, so ``scigen list`` stays fast).
"""

from __future__ import annotations

__version__ = "0.1.0"

#: systems advertised to ``scigen`` through the ``scigen.systems`` entry point
SYSTEMS = {"nsdiff": "scigen.timeseries.nsdiff.system:NsDiff", "d3u": "scigen.timeseries.d3u.system:D3U"}

__all__ = ["SYSTEMS", "D3U", "D3UConfig", "NsDiff", "NsDiffConfig"]


def __getattr__(name: str):
    if name in ("NsDiff", "NsDiffConfig"):
        from scigen.timeseries.nsdiff import system

        return getattr(system, name)
    if name in ("D3U", "D3UConfig"):
        from scigen.timeseries.d3u import system as d3u_system

        return getattr(d3u_system, name)
    raise AttributeError(f"module 'scigen.timeseries' has no attribute {name!r}")
