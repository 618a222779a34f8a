"""Safe persistence of a trained system: a JSON config plus safetensors weights.

A saved system is a directory::

    run/
      scigen.json          # {"format": "scigen-system", "format_version": 1, "system": "core/toy",
                           #  "scigen_core_version": ..., "config": {...}, "metadata": {...}}
      weights.safetensors  # every tensor, flat names -> tensors

Nothing is ever unpickled: weights are read with ``safetensors`` only and the config is JSON, so a
checkpoint cannot execute code. A directory is written into a temporary sibling and moved into
place with ``os.replace``, so an interrupted save never leaves a half-written run behind.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch

from scigen.core.errors import CheckpointError

FORMAT = "scigen-system"
FORMAT_VERSION = 1
CONFIG_FILE = "scigen.json"
WEIGHTS_FILE = "weights.safetensors"


def _scigen_core_version() -> str:
    from scigen.core import __version__

    return __version__


def save_system_files(
    directory: str | os.PathLike[str],
    *,
    system: str,
    config: dict[str, Any],
    tensors: dict[str, torch.Tensor],
    metadata: dict[str, Any] | None = None,
) -> Path:
    """Write ``config`` (JSON) and ``tensors`` (safetensors) into ``directory`` atomically.

    ``system`` is the registry key ``"<domain>/<name>"``. An existing directory at that path is
    replaced only once the new one is completely written.
    """
    from safetensors.torch import save_file

    target = Path(directory)
    target.parent.mkdir(parents=True, exist_ok=True)
    header = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "system": system,
        "scigen_core_version": _scigen_core_version(),
        "config": config,
        "metadata": metadata or {},
    }
    try:
        text = json.dumps(header, indent=2, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"cannot save {system}: config or metadata is not plain JSON ({exc})") from exc
    flat = {}
    seen: set[tuple[int, int]] = set()
    for name, value in tensors.items():
        if not isinstance(value, torch.Tensor):
            raise CheckpointError(f"cannot save {system}: entry {name!r} is {type(value).__name__}, not a tensor")
        value = value.detach().to("cpu").contiguous()
        key = (value.untyped_storage().data_ptr(), value.storage_offset())
        if value.numel() and key in seen:
            value = value.clone()  # tied weights: safetensors stores each name on its own storage
        seen.add(key)
        flat[name] = value
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        (tmp / CONFIG_FILE).write_text(text + "\n")
        save_file(flat, str(tmp / WEIGHTS_FILE))
        if target.exists():
            old = target.parent / f".{target.name}.old-{os.getpid()}"
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def read_system_header(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate ``scigen.json`` of a saved system; raise :class:`CheckpointError` if bad."""
    path = Path(directory)
    if not path.exists():
        raise CheckpointError(f"{path}: no such saved system (directory does not exist)")
    if path.is_file():
        raise CheckpointError(f"{path}: expected a directory written by System.save(), got a file")
    cfg = path / CONFIG_FILE
    if not cfg.is_file():
        raise CheckpointError(f"{path}: not a scigen system directory ({CONFIG_FILE} is missing)")
    try:
        header = json.loads(cfg.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{cfg}: corrupted or truncated JSON ({exc})") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise CheckpointError(f"{cfg}: not a scigen system file (field 'format' is not {FORMAT!r})")
    version = header.get("format_version")
    if not isinstance(version, int):
        raise CheckpointError(f"{cfg}: field 'format_version' is missing or not an integer")
    if version > FORMAT_VERSION:
        raise CheckpointError(
            f"{cfg}: written with format_version {version}, newer than this scigen-core "
            f"({_scigen_core_version()}) reads (up to {FORMAT_VERSION}); upgrade scigen-core"
        )
    for key, kind in (("system", str), ("config", dict), ("metadata", dict)):
        if not isinstance(header.get(key), kind):
            raise CheckpointError(f"{cfg}: field {key!r} is missing or not a {kind.__name__}")
    return header


def load_system_files(
    directory: str | os.PathLike[str], *, expected_system: str | None = None
) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """Return ``(header, tensors)`` of a saved system, validating both files.

    ``expected_system`` (``"<domain>/<name>"``) guards against loading another system's run.
    """
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    header = read_system_header(directory)
    if expected_system is not None and header["system"] != expected_system:
        raise CheckpointError(
            f"{directory}: holds a {header['system']!r} system, not {expected_system!r}; "
            f"load it with the matching class"
        )
    weights = Path(directory) / WEIGHTS_FILE
    if not weights.is_file():
        raise CheckpointError(f"{weights}: weights file is missing")
    try:
        tensors = load_file(str(weights))
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"{weights}: corrupted or truncated safetensors file ({exc})") from exc
    return header, tensors
