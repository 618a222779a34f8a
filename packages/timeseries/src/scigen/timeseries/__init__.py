"""Probabilistic time-series forecasting with diffusion (NsDiff) on pandas and xarray.

``from scigen.timeseries import NsDiff`` (imported lazily, so ``scigen list`` stays fast).
"""

from __future__ import annotations

__version__ = "0.1.0"

#: systems advertised to ``scigen`` through the ``scigen.systems`` entry point
SYSTEMS = {"nsdiff": "scigen.timeseries.nsdiff.system:NsDiff"}

__all__ = ["SYSTEMS", "NsDiff", "NsDiffConfig"]


def __getattr__(name: str):
    if name in ("NsDiff", "NsDiffConfig"):
        from scigen.timeseries.nsdiff import system

        return getattr(system, name)
    raise AttributeError(f"module 'scigen.timeseries' has no attribute {name!r}")
