"""One way for every ``scigen`` verb (built-in or a system's extra command) to report a user error:
one line on standard error, exit status 2, no traceback unless ``--debug`` (or ``SCIGEN_DEBUG=1``).

User-supplied text (file names, values) is printed verbatim, never parsed as rich markup, so a file
named ``run[/2024].csv`` is shown as it is. Usage::

    from scigen.core.cli.errors import cli_errors

    @app.command("place")
    def place(...):
        with cli_errors():
            ...
"""

from __future__ import annotations

import contextlib
import os
import sys

import typer

from scigen.core.errors import ScigenError

__all__ = ["USER_ERRORS", "cli_errors", "debug_enabled", "fail", "set_debug"]

#: exceptions that mean "the input was wrong", shown as one line
USER_ERRORS: tuple[type[BaseException], ...] = (
    ScigenError, ValueError, TypeError, KeyError, FileNotFoundError, NotADirectoryError, IsADirectoryError,
    PermissionError, NotImplementedError, OSError,
)


def set_debug(on: bool) -> None:
    """Show full tracebacks for user errors (``scigen --debug``)."""
    os.environ["SCIGEN_DEBUG"] = "1" if on else "0"


def debug_enabled() -> bool:
    return os.environ.get("SCIGEN_DEBUG", "0") not in ("", "0", "false", "no")


def _message(exc: BaseException) -> str:
    text = str(exc) if not isinstance(exc, KeyError) or isinstance(exc, ScigenError) else str(exc.args[0] if exc.args else exc)
    text = " ".join(text.split()) if "\n" not in text else text.strip()
    return text or type(exc).__name__


def fail(message: str | BaseException, code: int = 2) -> None:
    """Print ``error: <message>`` to stderr (no markup) and exit with ``code``."""
    text = _message(message) if isinstance(message, BaseException) else str(message)
    sys.stderr.write(f"error: {text}\n")
    sys.stderr.flush()
    raise typer.Exit(code)


@contextlib.contextmanager
def cli_errors():
    """Turn :data:`USER_ERRORS` raised inside the block into :func:`fail` (re-raised with ``--debug``)."""
    try:
        yield
    except typer.Exit:
        raise
    except USER_ERRORS as exc:
        if debug_enabled():
            raise
        fail(exc)
