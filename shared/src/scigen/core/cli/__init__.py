"""The ``scigen`` command-line interface (typer + rich)."""

from scigen.core.cli.main import build_app, main

__all__ = ["build_app", "main"]
