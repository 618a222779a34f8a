"""Systems: the base class users meet, its config, the registry and safe persistence."""

from scigen.core.system.base import DemoResult, System, torch_threads, write_report
from scigen.core.system.config import SystemConfig, make_config
from scigen.core.system.registry import SystemSpec, discover, get_system, register_system

__all__ = [
    "DemoResult",
    "System",
    "SystemConfig",
    "SystemSpec",
    "discover",
    "get_system",
    "make_config",
    "register_system",
    "torch_threads",
    "write_report",
]
