"""Systems: the base class users meet, its config, the registry and safe persistence."""

from scigen.core.system.base import DemoResult, System, torch_threads, write_report
from scigen.core.system.config import SystemConfig, make_config
from scigen.core.system.registry import SystemSpec, discover, get_system, register_system
from scigen.core.system.training import TrainingHistory, TrainingOptions, training_defaults

__all__ = [
    "DemoResult",
    "System",
    "SystemConfig",
    "SystemSpec",
    "TrainingHistory",
    "TrainingOptions",
    "discover",
    "get_system",
    "make_config",
    "register_system",
    "torch_threads",
    "training_defaults",
    "write_report",
]
