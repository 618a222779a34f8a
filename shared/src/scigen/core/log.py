"""Runtime messages of every scigen package go through the standard ``logging`` tree under ``"scigen"``.

    from scigen.core.log import get_logger
    log = get_logger(__name__)          # "scigen.placement.diffusion.system", ...
    log.info("placing %d samples", n)

:func:`set_verbosity` (``"quiet"`` = warnings and errors, ``"info"`` (default), ``"debug"``, or a
``logging`` level) sets the level of the whole tree and, the first time, attaches one stderr handler
to the ``"scigen"`` logger when the application has configured none; an application that configures
``logging`` itself keeps full control (``logging.getLogger("scigen").setLevel(...)`` works as usual).
The CLI maps ``--verbose`` / ``--quiet`` onto it.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["ROOT", "get_logger", "set_verbosity"]

ROOT = "scigen"
_LEVELS = {"quiet": logging.WARNING, "warning": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG}
_handler: logging.Handler | None = None


def get_logger(name: str = ROOT) -> logging.Logger:
    """The logger ``name`` inside the ``scigen`` tree (a module's ``__name__`` already is)."""
    if name != ROOT and not name.startswith(ROOT + "."):
        name = f"{ROOT}.{name}"
    _ensure_handler()
    return logging.getLogger(name)


def _ensure_handler() -> None:
    global _handler
    root = logging.getLogger(ROOT)
    if _handler is None and not root.handlers and not logging.getLogger().handlers:
        _handler = logging.StreamHandler(sys.stderr)
        _handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(_handler)
        if root.level == logging.NOTSET:
            root.setLevel(logging.INFO)


def set_verbosity(level: str | int) -> None:
    """Set the level of every scigen logger: ``"quiet"``, ``"info"``, ``"debug"`` or a ``logging`` level."""
    if isinstance(level, str):
        if level.lower() not in _LEVELS:
            from scigen.core.errors import InvalidInputError

            raise InvalidInputError(f"verbosity must be one of {sorted(_LEVELS)} or a logging level, got {level!r}")
        level = _LEVELS[level.lower()]
    _ensure_handler()
    logging.getLogger(ROOT).setLevel(int(level))
