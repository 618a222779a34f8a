"""Safe persistence of a trained system: a JSON config plus safetensors weights.

A saved system is a directory::

    run/
      scigen.json          # {"format": "scigen-system", "format_version": 2, "system": "core/toy",
                           #  "scigen_core_version": ..., "config": {...}, "metadata": {...},
                           #  "checksum": {"weights_sha256": ..., "config_sha256": ...}}
      weights.safetensors  # every tensor, flat names -> tensors

Nothing is ever unpickled: weights are read with ``safetensors`` only and the config is JSON, so a
checkpoint cannot execute code. ``load`` verifies the SHA-256 of the weights file and of the
canonical config + metadata JSON (format 2), so a flipped byte is refused, naming the file; format
versions other than 1 (no checksum, read as before) and 2 are refused.

A directory is written into a temporary sibling and renamed into place, so an interrupted save
never leaves a half-written run behind. An existing path is never replaced unasked: ``overwrite=True``
replaces only a previous scigen run holding nothing but the files ``save`` writes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch

from scigen.core.errors import CheckpointError

FORMAT = "scigen-system"
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
CONFIG_FILE = "scigen.json"
WEIGHTS_FILE = "weights.safetensors"
RUN_FILES = (CONFIG_FILE, WEIGHTS_FILE)


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _sha256_json(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def check_replaceable(target: Path, overwrite: bool) -> None:
    """Refuse to replace anything but a previous scigen run (and that only with ``overwrite``)."""
    if not target.exists() and not target.is_symlink():
        return
    if not target.is_dir() or target.is_symlink():
        raise CheckpointError(f"{target} already exists and is not a saved scigen run; choose another path "
                              "(save never replaces a file)")
    if not overwrite:
        raise CheckpointError(f"{target} already exists; pass overwrite=True to replace a saved scigen run "
                              "(or choose a new path)")
    entries = sorted(p.name for p in target.iterdir())
    if CONFIG_FILE not in entries:
        raise CheckpointError(f"{target} is not a saved scigen run ({CONFIG_FILE} is missing); "
                              "refusing to replace it")
    foreign = [e for e in entries if e not in RUN_FILES]
    if foreign:
        raise CheckpointError(f"{target} holds files save did not write ({', '.join(foreign[:5])}); "
                              "refusing to replace it: move them or save elsewhere")


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
    history: dict[str, Any] | None = None,
    overwrite: bool = False,
) -> Path:
    """Write ``config`` (JSON) and ``tensors`` (safetensors) into ``directory`` atomically.

    ``system`` is the registry key ``"<domain>/<name>"``. An existing ``directory`` is refused unless
    ``overwrite`` and it is a scigen run holding only ``scigen.json`` and ``weights.safetensors``; it is
    then replaced only once the new run is completely written.
    """
    from safetensors.torch import save_file

    target = Path(directory)
    check_replaceable(target, overwrite)
    target.parent.mkdir(parents=True, exist_ok=True)
    header = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "system": system,
        "scigen_core_version": _scigen_core_version(),
        "config": config,
        "metadata": metadata or {},
        "history": history or {},
    }
    try:
        json.dumps(header, allow_nan=False)
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
        save_file(flat, str(tmp / WEIGHTS_FILE))
        header["checksum"] = {"weights_sha256": _sha256_file(tmp / WEIGHTS_FILE),
                              "config_sha256": _sha256_json(_checked_part(header))}
        (tmp / CONFIG_FILE).write_text(json.dumps(header, indent=2, sort_keys=True, allow_nan=False) + "\n")
        if target.exists():
            aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
            os.replace(target, aside / target.name)  # an exclusive folder: never a name of the user's
            os.replace(tmp, target)
            shutil.rmtree(aside, ignore_errors=True)
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
    if isinstance(version, bool) or not isinstance(version, int):
        raise CheckpointError(f"{cfg}: field 'format_version' is missing or not an integer")
    if version < 1:
        raise CheckpointError(f"{cfg}: invalid format_version {version} (readable: {READABLE_VERSIONS})")
    if version > FORMAT_VERSION:
        raise CheckpointError(
            f"{cfg}: written with format_version {version}, newer than this scigen-core "
            f"({_scigen_core_version()}) reads (up to {FORMAT_VERSION}); upgrade scigen-core"
        )
    for key, kind in (("system", str), ("config", dict), ("metadata", dict)):
        if not isinstance(header.get(key), kind):
            raise CheckpointError(f"{cfg}: field {key!r} is missing or not a {kind.__name__}")
    if version >= 2:
        checksum = header.get("checksum")
        if not isinstance(checksum, dict) or not all(isinstance(checksum.get(k), str)
                                                     for k in ("weights_sha256", "config_sha256")):
            raise CheckpointError(f"{cfg}: field 'checksum' is missing or malformed (format_version {version})")
        try:
            ok = _sha256_json(_checked_part(header)) == checksum["config_sha256"]
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise CheckpointError(f"{cfg}: config/metadata do not match their checksum (the file was edited "
                                  "or corrupted); refusing to load")
    return header


def _checked_part(header: dict[str, Any]) -> dict[str, Any]:
    """What ``config_sha256`` covers: everything in the header but the checksum itself."""
    return {k: v for k, v in header.items() if k != "checksum"}


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
    expected = header.get("checksum", {}).get("weights_sha256") if header["format_version"] >= 2 else None
    if expected is not None and _sha256_file(weights) != expected:
        raise CheckpointError(f"{weights}: contents do not match the checksum in {CONFIG_FILE} (corrupted or "
                              "altered weights); refusing to load")
    try:
        tensors = load_file(str(weights))
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"{weights}: corrupted or truncated safetensors file ({exc})") from exc
    for name, value in tensors.items():
        if value.is_floating_point() and bool(torch.isnan(value).any()):
            raise CheckpointError(f"{weights}: tensor {name!r} holds NaN values; refusing to load a broken model")
    return header, tensors
