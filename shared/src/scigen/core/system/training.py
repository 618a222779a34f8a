"""The training section of every system's config and the persisted training history.

:class:`TrainingOptions` is the one place where a system's training settings (``lr``, batch size,
EMA, clipping, seed, validation cadence, early stopping, progress, logger, checkpoints, resume) are
named; :meth:`TrainingOptions.fit_kwargs` maps them, plus per-call overrides, onto
:func:`scigen.core.train.fit`. Overrides never write back into the config.

:class:`TrainingHistory` accumulates what ``fit`` returned across calls (per-step loss, validation
losses, steps) with **one** definition of the final loss, and is saved and loaded with the model.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Literal

import pydantic
import torch

from scigen.core.errors import InvalidInputError
from scigen.core.system.config import SystemConfig

__all__ = ["FINAL_LOSS_WINDOW", "TrainingHistory", "TrainingOptions", "training_defaults"]

#: the final loss is the mean of the last this-many per-step training losses
FINAL_LOSS_WINDOW = 50


class TrainingOptions(SystemConfig):
    """Training settings, mapped onto :func:`scigen.core.train.fit` by ``System.fit``.

    ``max_steps`` is the default number of optimiser steps of ``fit`` (a call's ``max_steps=``
    overrides it for that call only). ``early_stopping`` is a patience in validations (needs
    ``val_data``). ``progress=None`` shows a bar only when standard error is a terminal.
    ``logger`` is ``"csv"``, ``"tensorboard"``, ``None`` — or, per call, a Lightning logger object.
    """

    max_steps: int = pydantic.Field(1000, gt=0)
    batch_size: int = pydantic.Field(64, gt=0)
    lr: float = pydantic.Field(1e-3, gt=0, allow_inf_nan=False)
    optimizer: Literal["adamw", "adam", "sgd"] = "adamw"
    weight_decay: float = pydantic.Field(0.0, ge=0, allow_inf_nan=False)
    lr_schedule: Literal["warmup", "cosine", "step"] | None = None
    warmup_steps: int | None = pydantic.Field(None, ge=0)
    #: "step" schedule: steps between decays (None = one epoch of the training data) and the factor
    lr_step_size: int | None = pydantic.Field(None, gt=0)
    lr_gamma: float = pydantic.Field(0.5, gt=0, le=1, allow_inf_nan=False)
    ema_decay: float | None = pydantic.Field(None, ge=0, lt=1)
    ema_warmup: bool = True
    grad_clip: float | None = pydantic.Field(1.0, gt=0, allow_inf_nan=False)
    seed: int = 0
    val_every: int | None = pydantic.Field(None, gt=0)
    early_stopping: int | None = pydantic.Field(None, gt=0)
    progress: bool | None = None
    logger: Literal["csv", "tensorboard"] | None = None
    log_dir: str | None = None
    checkpoint_dir: str | None = None
    checkpoint_every: int | None = pydantic.Field(None, gt=0)
    keep_every: int | None = pydantic.Field(None, gt=0)
    checkpoint_seconds: float | None = pydantic.Field(300.0, gt=0, allow_inf_nan=False)
    resume: bool = False
    precision: str = "32-true"
    #: ``torch.compile`` the training step (:func:`scigen.core.train.fit`'s ``compile``); sampling runs eagerly
    compile: bool = False
    accelerator: str = "auto"
    #: "per_sample" keys the loss's engine draws by seed, step and example index, so a run is the same on any
    #: number of processes (``scigen.core.train.fit``'s ``rng``)
    rng: Literal["global", "per_sample"] = "global"
    #: DataLoader worker processes for Dataset training data read from disk (0 = in the training process)
    num_workers: int = pydantic.Field(0, ge=0)

    def fit_kwargs(self, **overrides: Any) -> dict[str, Any]:
        """Keyword arguments of :func:`scigen.core.train.fit`: these options with ``overrides`` applied.

        An override must name a field of this class (or one of ``callbacks``, ``collate_fn``,
        ``strategy``, ``devices``, ``num_nodes``, ``loop``, ``unused_parameters``, ``sync_batchnorm``, which only
        ``fit`` takes); ``None`` for ``max_steps`` means "the
        configured value". Values are validated like the fields (``max_steps=0`` and ``lr=nan`` are
        refused, never replaced by defaults). ``optimizer`` may also be a callable ``params ->
        torch.optim.Optimizer`` (e.g. AdamW with parameter groups), passed to ``fit`` as given; the
        config field itself stays one of the names.
        """
        passthrough = {"callbacks", "collate_fn", "strategy", "devices", "num_nodes", "loop", "unused_parameters",
                       "sync_batchnorm"}
        unknown = sorted(set(overrides) - set(type(self).model_fields) - passthrough)
        if unknown:
            valid = ", ".join(sorted(set(type(self).model_fields) | passthrough))
            raise InvalidInputError(f"unknown training option(s) {unknown}; valid: {valid}")
        extra = {k: overrides.pop(k) for k in list(overrides) if k in passthrough}
        if callable(overrides.get("optimizer")):
            extra["optimizer"] = overrides.pop("optimizer")
        if overrides.get("max_steps", 0) is None:
            overrides.pop("max_steps")
        logger = overrides.pop("logger", self.logger)
        from scigen.core.system.config import make_config

        merged = make_config(type(self), self.model_dump(), **overrides)
        kw = merged.model_dump()
        kw["logger"] = logger  # may be a Lightning Logger object, which the field cannot hold
        kw.update(extra)
        return kw


def training_defaults(**defaults: Any):
    """A pydantic field whose default is ``TrainingOptions(**defaults)`` (a fresh copy per config):
    ``train: TrainingOptions = training_defaults(lr=2e-3, batch_size=256, max_steps=1500)``."""
    TrainingOptions(**defaults)  # fail at class definition on a bad default
    return pydantic.Field(default_factory=lambda: TrainingOptions(**defaults))


@dataclasses.dataclass
class TrainingHistory:
    """Every ``fit`` of a system, accumulated: per-step training losses, ``(step, loss)`` validations."""

    losses: list[float] = dataclasses.field(default_factory=list)
    val_losses: list[tuple[int, float]] = dataclasses.field(default_factory=list)
    fits: int = 0
    best_step: int | None = None
    stopped_step: int | None = None
    #: ``(stage name, first step, end step)`` of every stage a staged fit trained (``System.train_stages``):
    #: steps ``first .. end-1`` of :attr:`losses` belong to that stage
    stages: list[tuple[str, int, int]] = dataclasses.field(default_factory=list)

    @property
    def steps(self) -> int:
        """Optimiser steps trained so far (all ``fit`` calls together)."""
        return len(self.losses)

    def stage_of(self, step: int) -> str | None:
        """The name of the stage that trained step ``step`` (0-based), ``None`` outside every stage."""
        for name, start, end in self.stages:
            if start <= step < end:
                return name
        return None

    def stage_losses(self, name: str) -> list[float]:
        """The per-step training losses of stage ``name`` (all its spans, in order)."""
        return [v for n, a, b in self.stages if n == name for v in self.losses[a:b]]

    @property
    def final_loss(self) -> float | None:
        """Mean of the last :data:`FINAL_LOSS_WINDOW` per-step training losses (``None`` untrained)."""
        if not self.losses:
            return None
        tail = self.losses[-FINAL_LOSS_WINDOW:]
        return float(sum(tail) / len(tail))

    def extend(self, result) -> None:
        """Append what :func:`scigen.core.train.fit` returned (a ``FitResult``).

        ``fit`` reports the losses of its own steps ``0 .. steps-1``. A ``fit`` that resumed the run this
        history already holds reports that run from its start (its losses begin with this history's),
        so then only the steps beyond it are appended; any other ``fit`` is appended after this history."""
        new = [float(v) for v in result.losses]
        held = self.steps
        resumed_this_run = 0 < held <= len(new) and new[:held] == self.losses
        offset = 0 if resumed_this_run else held
        self.losses.extend(new[held:] if resumed_this_run else new)
        self.val_losses.extend((offset + int(s), float(v)) for s, v in result.val_losses
                               if offset + int(s) >= held or not resumed_this_run)
        self.fits += 1
        self.best_step = None if result.best_step is None else offset + int(result.best_step)
        self.stopped_step = None if result.stopped_step is None else offset + int(result.stopped_step)

    # ------------------------------------------------------------------ persistence
    def to_tensors(self) -> dict[str, torch.Tensor]:
        """``history.losses [steps]`` and ``history.val_losses [n, 2]`` (float64) for the weights file."""
        val = torch.tensor(self.val_losses, dtype=torch.float64).reshape(-1, 2)
        return {"history.losses": torch.tensor(self.losses, dtype=torch.float64), "history.val_losses": val}

    def to_json(self) -> dict[str, Any]:
        """The scalar part (JSON-able) for the header; the arrays go through :meth:`to_tensors`."""
        return {"fits": self.fits, "steps": self.steps, "best_step": self.best_step,
                "stopped_step": self.stopped_step, "final_loss": _finite_or_none(self.final_loss),
                "final_loss_window": FINAL_LOSS_WINDOW, "stages": [list(s) for s in self.stages]}

    @classmethod
    def from_saved(cls, info: dict[str, Any] | None, tensors: dict[str, torch.Tensor]) -> TrainingHistory:
        """Inverse of :meth:`to_json` + :meth:`to_tensors` (an old run without a history is untrained
        unless its metadata says ``trained_steps``)."""
        losses = tensors.get("history.losses")
        val = tensors.get("history.val_losses")
        h = cls(losses=[] if losses is None else [float(v) for v in losses.tolist()],
                val_losses=[] if val is None else [(int(s), float(v)) for s, v in val.tolist()])
        info = info or {}
        h.fits = int(info.get("fits", 1 if h.losses else 0))
        h.best_step = info.get("best_step")
        h.stopped_step = info.get("stopped_step")
        h.stages = [(str(n), int(a), int(b)) for n, a, b in info.get("stages") or []]
        return h


def _finite_or_none(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None
