"""Systems: the base class users meet, its config, the registry and safe persistence.

Names are imported lazily (PEP 562), so ``scigen list`` and ``--help``, which need only the
registry, never import torch.
"""

from __future__ import annotations

import importlib

_WHERE = {
    "DemoResult": "base", "System": "base", "torch_threads": "base", "write_report": "base",
    "SystemConfig": "config", "make_config": "config",
    "SystemSpec": "registry", "discover": "registry", "register_system": "registry",
    "TrainingHistory": "training", "TrainingOptions": "training", "training_defaults": "training",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(f"scigen.core.system.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'scigen.core.system' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
