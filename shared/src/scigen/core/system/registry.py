"""Where systems are found: the ``scigen.systems`` entry-point group plus in-process registration.

A distribution advertises its systems with one entry point per domain whose object is a mapping
``{system_name: "module:Class"}``; the strings are imported only when a system is used, so
``scigen list`` stays fast and core never imports a domain package::

    [project.entry-points."scigen.systems"]
    timeseries = "scigen.timeseries:SYSTEMS"      # SYSTEMS = {"nsdiff": "scigen.timeseries.nsdiff:NsDiff"}

Scripts can also call :func:`register_system` on their own subclass.
"""

from __future__ import annotations

import dataclasses
import importlib
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scigen.core.system.base import System

GROUP = "scigen.systems"
_LOCAL: dict[str, dict[str, type[System]]] = {}


@dataclasses.dataclass(frozen=True)
class SystemSpec:
    """A registered system: where it lives, loaded on demand by :meth:`load`."""

    domain: str
    name: str
    target: str | type  # "module:Class" or the class itself
    distribution: str = ""
    cli: str | None = None  # "module:function(cls, app)" adding extra verbs, importable without the class

    def lazy_class(self) -> LazyClass:
        """A stand-in for the class that imports it on first attribute access (for extra CLI verbs, so
        ``--help`` does not import torch)."""
        return LazyClass(self)

    def load(self) -> type[System]:
        if not isinstance(self.target, str):
            return self.target
        module, _, attr = self.target.partition(":")
        try:
            obj = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise ImportError(
                f"system {self.domain}/{self.name} is registered as {self.target!r} "
                f"by {self.distribution or 'an installed package'} but cannot be imported: {exc}"
            ) from exc
        return obj


class LazyClass:
    """Forwards attribute access to ``spec.load()``, importing the system class only when a verb runs."""

    def __init__(self, spec: SystemSpec) -> None:
        self._spec = spec

    def __getattr__(self, name: str):
        return getattr(self._spec.load(), name)

    def __repr__(self) -> str:
        return f"LazyClass({self._spec.domain}/{self._spec.name})"


def register_system(cls: type[System]) -> type[System]:
    """Register ``cls`` under ``cls.domain``/``cls.name`` for this process (usable as a decorator)."""
    if not cls.domain or not cls.name:
        raise ValueError(f"{cls.__name__} must set class attributes 'domain' and 'name' to be registered")
    _LOCAL.setdefault(cls.domain, {})[cls.name] = cls
    return cls


def discover() -> tuple[dict[str, dict[str, SystemSpec]], list[str]]:
    """All systems by domain, and a list of problems met while reading entry points."""
    found: dict[str, dict[str, SystemSpec]] = {}
    problems: list[str] = []
    for ep in entry_points(group=GROUP):
        dist = ep.dist.name if ep.dist is not None else ""
        try:
            table = ep.load()
        except Exception as exc:  # a broken plugin must not break `scigen list`
            problems.append(f"entry point {ep.name!r} of {dist or '?'} failed to load: {exc}")
            continue
        if not isinstance(table, dict):
            problems.append(f"entry point {ep.name!r} of {dist or '?'} is not a mapping name -> 'module:Class'")
            continue
        import sys

        clis = getattr(sys.modules.get(ep.module), "CLI_COMMANDS", {}) or {}
        for name, target in table.items():
            found.setdefault(ep.name, {})[name] = SystemSpec(ep.name, name, target, dist, clis.get(name))
    for domain, table in _LOCAL.items():
        for name, cls in table.items():
            found.setdefault(domain, {})[name] = SystemSpec(domain, name, cls, "(registered in-process)")
    return found, problems
