"""Shared pieces of the hostile-input suite: run the CLI in-process and check the one-line error rule."""

from __future__ import annotations

from typer.testing import CliRunner

from scigen.core.cli import build_app

_runner = CliRunner()


def cli(*args: str):
    """Invoke ``scigen ARGS`` in-process; returns the click Result (``output`` has stdout + stderr)."""
    return _runner.invoke(build_app(list(args)), list(args))


def assert_one_line_error(result, *needles: str) -> None:
    """Exit status 2, an ``error:`` line naming every needle, and no traceback."""
    out = result.output
    assert result.exit_code == 2, (result.exit_code, out, result.exception)
    assert "Traceback" not in out, out
    assert "error:" in out, out
    for n in needles:
        assert n in out, (n, out)
