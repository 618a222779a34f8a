"""Precipitation nowcasting with a posterior-mean estimator and a rectified flow, on xarray.

``from scigen.weather import Nowcast`` (imported lazily, so ``scigen list`` stays fast).
"""

from __future__ import annotations

from scigen.core.lazy import lazy_names

__version__ = "0.1.0"

SYSTEMS = {"nowcast": "scigen.weather.nowcast.system:Nowcast"}

#: extra CLI verbs (``forecast``), registered without importing the system class
CLI_COMMANDS = {"nowcast": "scigen.weather.nowcast.cli:register"}

_LAZY = {
    **dict.fromkeys(("Nowcast", "NowcastConfig"), "scigen.weather.nowcast.system"),
    **dict.fromkeys(("as_field", "make_field", "open_field", "read_field", "write_field", "write_field_blocks", "synthetic_storms", "load_sevir",
                     "load_meteonet", "convert", "to_units"), "scigen.weather.data"),
}

__all__ = sorted([*_LAZY, "CLI_COMMANDS", "SYSTEMS"])

__getattr__, __dir__ = lazy_names(__name__, _LAZY)
