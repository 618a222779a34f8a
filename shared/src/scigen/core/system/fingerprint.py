"""Which run a checkpoint folder belongs to: system, config and data fingerprints.

``fit(..., checkpoint_dir=ck, resume=True)`` must continue *this* run, never hand back another model's
weights. ``System.train_network`` writes ``fingerprint.json`` into the folder it checkpoints to and,
before resuming, compares it with the run at hand; a folder holding a checkpoint is refused unless
``resume=True`` and all three fingerprints agree (so nothing is overwritten unasked either).

* system: the registry key ``"<domain>/<name>"``;
* config: SHA-256 of the canonical JSON of the config without the fields that may change between an
  interrupted run and its continuation (``train.max_steps`` — a resumed run may go further —,
  progress, logging, checkpoint placement, resume, accelerator, DataLoader workers, compile — a compiled run gives
  the eager one's losses, and either resumes the other);
* data: SHA-256 of the training tensor's bytes (shape and dtype included), or for a Dataset of its
  length, type and the bytes of up to 16 evenly spaced items.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import torch

from scigen.core.errors import CheckpointError
from scigen.core.files import atomic_write_text

__all__ = ["FINGERPRINT_FILE", "check_checkpoint_dir_is_ours", "claim_checkpoint_dir", "data_fingerprint", "run_fingerprint"]

FINGERPRINT_FILE = "fingerprint.json"
_RUNTIME_FIELDS = ("max_steps", "progress", "logger", "log_dir", "checkpoint_dir", "checkpoint_every",
                   "keep_every", "checkpoint_seconds", "resume", "accelerator", "num_workers", "compile")


def _feed(h, obj: Any) -> None:
    if isinstance(obj, torch.Tensor):
        t = obj.detach().to("cpu").contiguous()
        h.update(f"tensor{tuple(t.shape)}{t.dtype}".encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    elif isinstance(obj, dict):
        for k in sorted(obj, key=str):
            h.update(str(k).encode())
            _feed(h, obj[k])
    elif isinstance(obj, (list, tuple)):
        h.update(f"seq{len(obj)}".encode())
        for v in obj:
            _feed(h, v)
    else:
        h.update(repr(obj).encode())


def data_fingerprint(data: Any) -> str:
    """SHA-256 of a training Tensor, or of a Dataset's length, type and up to 16 evenly spaced items."""
    h = hashlib.sha256()
    if isinstance(data, torch.Tensor):
        _feed(h, data)
        return h.hexdigest()
    try:
        n = len(data)
    except TypeError:
        return "unhashable:" + type(data).__name__
    h.update(f"{type(data).__module__}.{type(data).__qualname__}:{n}".encode())
    if n:
        for i in sorted({round(j * (n - 1) / 15) for j in range(16)}):
            _feed(h, data[i])
    return h.hexdigest()


def run_fingerprint(system: str, config: dict[str, Any], data: Any) -> dict[str, str]:
    """``{"system", "config_sha256", "data_sha256"}`` of a training run (module docstring)."""
    cfg = json.loads(json.dumps(config, default=str))
    train = cfg.get("train")
    if isinstance(train, dict):
        cfg["train"] = {k: v for k, v in train.items() if k not in _RUNTIME_FIELDS}
    text = json.dumps(cfg, sort_keys=True, separators=(",", ":"))
    return {"system": system, "config_sha256": hashlib.sha256(text.encode()).hexdigest(),
            "data_sha256": data_fingerprint(data)}


#: what the engine writes into a checkpoint folder (``fit``'s checkpoints, their temporary files, the default
#: log folder, the fingerprint, and the stage records of ``System.train_stages``); anything else is someone else's
_CHECKPOINT_ENTRY = re.compile(r"(last|best|step-\d+)\.ckpt|\..*\.tmp(\..*)?|logs|stages\.json|stage\.(json|pt)")


def _is_fingerprint(path: Path) -> bool:
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(saved, dict) and {"system", "config_sha256", "data_sha256"} <= set(saved)


def check_checkpoint_dir_is_ours(directory: str | Path) -> None:
    """Refuse a checkpoint folder holding anything scigen did not write, before any training.

    Allowed: nothing (a new or empty folder), a scigen ``fingerprint.json``, ``last.ckpt``, ``best.ckpt``,
    ``step-*.ckpt``, hidden temporary files of those, the default ``logs`` folder, the stage records
    (``stages.json``, ``stage.json``, ``stage.pt``), and sub-folders that are
    themselves scigen checkpoint folders (one per training stage). A ``fingerprint.json`` that is not
    scigen's, or any other entry, raises :class:`CheckpointError` naming it, so a user's file is never
    overwritten by a run pointed at the wrong folder."""
    d = Path(directory)
    if not d.is_dir():
        return
    for entry in sorted(d.iterdir()):
        if entry.name == FINGERPRINT_FILE:
            if not _is_fingerprint(entry):
                raise CheckpointError(f"checkpoint_dir {d} holds a {FINGERPRINT_FILE} that scigen did not write; "
                                      "refusing to overwrite it: choose an empty or new checkpoint folder")
        elif _CHECKPOINT_ENTRY.fullmatch(entry.name):
            continue
        elif entry.is_dir() and not entry.is_symlink() and (entry / FINGERPRINT_FILE).exists():
            check_checkpoint_dir_is_ours(entry)
        else:
            raise CheckpointError(f"checkpoint_dir {d} holds {entry.name!r}, which scigen did not write; refusing "
                                  "to checkpoint into it: choose an empty or new checkpoint folder")


def claim_checkpoint_dir(directory: str | Path, fingerprint: dict[str, str], *, resume: bool) -> None:
    """Check that ``directory`` may be checkpointed into by this run, then record ``fingerprint`` there.

    Raises :class:`CheckpointError` when the folder holds a checkpoint and ``resume`` is False (it would
    be overwritten), or when it holds another run's checkpoint (naming what differs)."""
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise CheckpointError(f"checkpoint_dir {d} exists and is not a directory")
    check_checkpoint_dir_is_ours(d)
    has_ckpt = (d / "last.ckpt").exists()
    if has_ckpt and not resume:
        raise CheckpointError(f"checkpoint_dir {d} already holds a checkpoint (last.ckpt); pass resume=True "
                              "(CLI: --resume) to continue that run, or choose an empty checkpoint folder")
    if has_ckpt:
        f = d / FINGERPRINT_FILE
        try:
            saved = json.loads(f.read_text())
        except (OSError, ValueError):
            raise CheckpointError(f"{d}: last.ckpt has no readable {FINGERPRINT_FILE}, so it cannot be shown to "
                                  "belong to this run; refusing to resume from it") from None
        what = {"system": "system", "config_sha256": "config", "data_sha256": "training data"}
        differ = [what[k] for k in what if saved.get(k) != fingerprint[k]]
        if differ:
            raise CheckpointError(
                f"{d} holds a checkpoint of another run ({', '.join(differ)} differ"
                f"{'; it was ' + repr(saved.get('system')) if 'system' in differ else ''}); refusing to resume "
                "from it: choose another checkpoint folder for this run")
    d.mkdir(parents=True, exist_ok=True)
    atomic_write_text(d / FINGERPRINT_FILE, json.dumps(fingerprint, indent=2, sort_keys=True) + "\n")
