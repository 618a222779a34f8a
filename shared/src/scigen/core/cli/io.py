"""Reading the small user files the CLI takes (``--config``), with errors that name the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scigen.core.errors import InvalidInputError

__all__ = ["read_config_file"]


def read_config_file(path: Path) -> dict[str, Any]:
    """A JSON object of config fields from ``path``; ``InvalidInputError`` naming the file otherwise."""
    path = Path(path)
    if not path.exists():
        raise InvalidInputError(f"--config {path}: no such file")
    if not path.is_file():
        raise InvalidInputError(f"--config {path}: not a file (a JSON file of config fields is expected)")
    try:
        cfg = json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInputError(f"--config {path}: not valid JSON ({exc})") from None
    if not isinstance(cfg, dict):
        raise InvalidInputError(f"--config {path}: expected a JSON object of config fields, got {type(cfg).__name__}")
    return cfg
