"""Lazy public names for package ``__init__`` files (PEP 562), so importing a package (what
``scigen list`` does to read a domain's ``SYSTEMS``) loads neither torch nor any other heavy module.

    __getattr__, __dir__ = lazy_names(__name__, {"Netlist": "scigen.placement.netlist", ...})
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable

__all__ = ["lazy_names"]


def lazy_names(package: str, names: dict[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``names`` maps a public name to the module defining it;
    the module is imported on first access and the value cached in the package."""

    def __getattr__(name: str):
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(names) | set(vars(sys.modules[package])))

    return __getattr__, __dir__
