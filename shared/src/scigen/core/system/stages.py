"""The stage loop behind :meth:`System.train_stages <scigen.core.system.System.train_stages>`.

Each :class:`~scigen.core.train.stages.Stage` runs through ``System.train_network`` →
:func:`scigen.core.train.fit` with its own loss, budget and checkpoint sub-folder
(``checkpoint_dir/<stage name>``), its non-trainable parameters frozen and checked. When a stage has
finished, ``checkpoint_dir/<stage>/stage.json`` (its step count and history) and ``stage.pt`` (the
network's state after the stage) are written atomically; a resumed run (``resume=True``) skips a stage
whose record shows it finished (all planned steps, or stopped early), loading its weights and history,
and continues a stage without a record from its ``last.ckpt``, exactly (``fit``'s resume guarantee).
``checkpoint_dir/stages.json`` names the plan; resuming with a different list of stages is refused.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import torch

from scigen.core.errors import CheckpointError, InvalidInputError
from scigen.core.files import atomic_path, atomic_write_text

if TYPE_CHECKING:
    from scigen.core.system.base import System
    from scigen.core.train.stages import Stage

__all__ = ["PLAN_FILE", "RECORD_FILE", "WEIGHTS_FILE", "data_rules", "run_stages"]

PLAN_FILE = "stages.json"
RECORD_FILE = "stage.json"
WEIGHTS_FILE = "stage.pt"


def _rows(data: Any) -> int | None:
    try:
        return len(data)
    except TypeError:  # a DataLoader of an iterable dataset: its batch size is its own
        return None


def data_rules(system: System, data: Any, val_data: Any, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with the two data rules of a (staged) fit applied: the batch size is at most the number of
    training rows, and without ``val_data`` early stopping is off (it watches the validation loss)."""
    out = dict(options)
    n_rows = _rows(data)
    if n_rows is not None and out.get("batch_size", system.training_options().batch_size) > n_rows:
        out["batch_size"] = n_rows
    if val_data is None:
        out["early_stopping"] = None
    return out


def _check_plan(root: Path, names: list[str], resume: bool) -> None:
    f = root / PLAN_FILE
    used = [n for n in names if (root / n / "last.ckpt").exists()]
    if used and not resume:  # refused before anything in the folder is touched
        raise CheckpointError(f"checkpoint_dir {root} already holds checkpoints of stages {used}; pass resume=True "
                              "(CLI: --resume) to continue that run, or choose an empty checkpoint folder")
    if resume and f.exists():
        try:
            saved = json.loads(f.read_text())["stages"]
        except (OSError, ValueError, KeyError, TypeError):
            raise CheckpointError(f"{f} is not a readable stage plan; refusing to resume from {root}") from None
        if saved != names:
            raise CheckpointError(f"{root} holds a staged run with stages {saved}, not {names}; refusing to resume "
                                  "from it: choose another checkpoint folder for this run")
    root.mkdir(parents=True, exist_ok=True)
    atomic_write_text(f, json.dumps({"stages": names}, indent=2) + "\n")


def _read_record(d: Path) -> dict | None:
    f = d / RECORD_FILE
    if not f.exists() or not (d / WEIGHTS_FILE).exists():
        return None
    try:
        rec = json.loads(f.read_text())
        int(rec["steps"]), list(rec["losses"])
    except (OSError, ValueError, KeyError, TypeError):
        raise CheckpointError(f"{f} is not a readable stage record; remove the folder {d} to retrain that stage") from None
    return rec


def _write_record(d: Path, network: torch.nn.Module, name: str, planned: int, result) -> None:
    with atomic_path(d / WEIGHTS_FILE) as tmp:
        torch.save({k: v.detach().cpu().clone() for k, v in network.state_dict().items()}, str(tmp))
    rec = {"stage": name, "steps": len(result.losses), "planned": planned, "losses": [float(v) for v in result.losses],
           "val_losses": [[int(s), float(v)] for s, v in result.val_losses], "best_step": result.best_step,
           "stopped_step": result.stopped_step}
    atomic_write_text(d / RECORD_FILE, json.dumps(rec) + "\n")


def _load_weights(system: System, d: Path) -> None:
    try:
        state = torch.load(d / WEIGHTS_FILE, map_location=system.device, weights_only=True)
        system.network.load_state_dict(state)
    except Exception as exc:  # noqa: BLE001 - a truncated, foreign or mismatched file all mean the same here
        raise CheckpointError(f"cannot load the finished stage's weights {d / WEIGHTS_FILE}: "
                              f"{str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__}"
                              ) from None


def _loss(system: System, stage: Stage):
    if stage.loss is None:
        return system.training_loss
    if isinstance(stage.loss, str):
        fn = getattr(system, stage.loss, None)
        if not callable(fn):
            raise InvalidInputError(f"stage {stage.name!r}: loss {stage.loss!r} is not a method of {system.key()}")
        return fn
    if not callable(stage.loss):
        raise InvalidInputError(f"stage {stage.name!r}: loss must be callable or a method name, got {stage.loss!r}")
    return stage.loss


def run_stages(system: System, data: Any, stages: Sequence[Stage], *, val_data: Any = None,
               max_steps: int | None = None, **options: Any) -> dict[str, int]:
    """Train ``system.network`` through ``stages`` in order (see :meth:`System.train_stages`)."""
    from scigen.core.system.fingerprint import claim_checkpoint_dir, run_fingerprint
    from scigen.core.train.stages import (
        FreezeCheck,
        assert_unchanged,
        check_trainable,
        freeze_except,
        frozen_module_names,
        frozen_snapshot,
        split_budget,
        stage_options,
    )

    stages = list(stages)
    merged = system.training_options().fit_kwargs(max_steps=max_steps, **options)  # validates the names
    budget = merged["max_steps"]
    plan = split_budget(stages, budget)
    for s in stages:
        check_trainable(system.network, s)
    options = data_rules(system, data, val_data, options)
    ckpt = None if merged.get("checkpoint_dir") is None else Path(merged["checkpoint_dir"])
    resume = bool(merged.get("resume"))
    options.pop("checkpoint_dir", None)
    if ckpt is not None:
        _check_plan(ckpt, [s.name for s in stages], resume)
    fingerprint = None
    spent = 0
    trained: dict[str, int] = {}
    for i, stage in enumerate(stages):
        n = plan[i]
        if stage.is_rest:  # what the stages before it left (early stopping included) minus what comes after
            n = budget - spent - sum(plan[i + 1:])
        if n < 1:
            continue
        where = None if ckpt is None else ckpt / stage.name
        rec = _read_record(where) if where is not None and resume else None
        if rec is not None and rec["steps"] > n and rec["stopped_step"] is None:
            raise CheckpointError(f"{where}: stage {stage.name!r} already trained {rec['steps']} steps, more than the "
                                  f"{n} planned now; resume with the budget of that run (or a larger one)")
        start = system.history.steps
        if rec is not None and (rec["steps"] == n or rec["stopped_step"] is not None):  # finished: skip it
            if fingerprint is None:
                fingerprint = run_fingerprint(system.key(), system.config.model_dump(mode="json"), data)
            claim_checkpoint_dir(where, fingerprint, resume=True)
            _load_weights(system, where)
            system.history.extend(SimpleNamespace(
                losses=rec["losses"], val_losses=[tuple(v) for v in rec["val_losses"]],
                best_step=rec["best_step"], stopped_step=rec["stopped_step"]))
            steps = int(rec["steps"])
        else:
            if stage.before is not None:
                stage.before()
            net = system.network
            val = val_data if stage.validate else None
            opts = data_rules(system, data, val, stage_options(stage, options))
            snapshot = frozen_snapshot(net, stage.trainable)
            check = FreezeCheck(stage.name, list(snapshot), frozen_module_names(net, stage.trainable),
                                eval_frozen=stage.frozen_eval)
            opts["callbacks"] = [*opts.get("callbacks", ()), check]
            with freeze_except(net, stage.trainable):
                result = system.train_network(data, val_data=val, max_steps=n, loss_fn=_loss(system, stage),
                                              checkpoint_dir=None if where is None else str(where), **opts)
            system.network.requires_grad_(True)  # the EMA copy fit hands back carries the stage's flags
            assert_unchanged(system.network, snapshot, stage.name)
            if where is not None:
                _write_record(where, system.network, stage.name, n, result)
            steps = len(result.losses)
        system.history.stages.append((stage.name, start, system.history.steps))
        trained[stage.name] = steps
        spent += steps
    system.metadata["stage_steps"] = dict(trained)
    system.network.eval()
    return trained

