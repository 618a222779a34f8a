"""Lightning callbacks of :func:`~scigen.core.train.fit`: EMA, atomic checkpoints, RNG state.

* :class:`EMA` — exponential moving average of the weights, ``θ̄ ← d_n·θ̄ + (1 − d_n)·θ`` after every
  optimizer step (Polyak & Juditsky 1992; used for diffusion models since Ho et al. 2020, App. B and
  Song & Ermon 2020, §3.3), with the warm-up ``d_n = min(d, (1 + n)/(10 + n))`` at update ``n``
  (TensorFlow's ``ExponentialMovingAverage(num_updates=)``) unless switched off. Its weights are part
  of the checkpoint.
* :class:`AtomicCheckpoint` — writes ``last.ckpt`` every ``every_n_steps`` and at the end of
  training, optionally keeps ``step-XXXXXXXX.ckpt`` every ``keep_every`` steps and ``best.ckpt`` by
  ``val_loss``. Every file is written to a temporary name, flushed to disk and moved into place with
  ``os.replace``, so the previous good file is never half-overwritten.
* :class:`PeriodicValidation` — the validation loss every N global steps.
* :class:`EarlyStopping` — stop when the validation loss has not improved by more than
  ``min_delta`` for ``patience`` validations (Prechelt 1998, "Early stopping — but when?"), and
  hand back the weights of the best validation.
* :class:`RNGState` — saves the global RNG states (torch, CUDA, numpy, Python) in the checkpoint and
  restores them just before the first training step of a resumed run.
"""

from __future__ import annotations

import copy
import math
import os
import time
from collections.abc import Callable
from pathlib import Path

import lightning.pytorch as pl
import torch
from lightning.pytorch.callbacks import Callback, Checkpoint
from torch import nn

from scigen.core.errors import InvalidInputError
from scigen.core.train.rng import get_rng_state, set_rng_state

__all__ = ["EMA", "AtomicCheckpoint", "EarlyStopping", "PeriodicValidation", "RNGState", "atomic_save_checkpoint"]


class EMA(Callback):
    """Keep ``ema_module``, an exponential moving average of ``pl_module.module``'s weights.

    With ``warmup`` (the default) update ``n = 0, 1, ...`` uses the decay ``min(decay, (1 + n)/(10 + n))``:
    without it, after ``n`` steps a share ``decay**n`` of the average is still the random initialisation
    (0.37 after 1,000 steps at 0.999); with it that share is ``∏_k d_k ≤ 9!·n!/(n + 9)!`` until the cap
    is reached (below 1e-21 after 1,000 steps) and the average forgets the start like a running mean.
    Buffers (e.g. BatchNorm statistics) are copied, not averaged.
    """

    def __init__(self, decay: float, *, warmup: bool = True) -> None:
        if not 0.0 < decay < 1.0:
            raise InvalidInputError(f"ema_decay must be in (0, 1), got {decay}")
        self.decay = float(decay)
        self.warmup = bool(warmup)
        self.num_updates = 0
        self.ema_module: nn.Module | None = None
        self._pending: dict | None = None
        self._cache: tuple | None = None  # (live module, EMA module, their matched tensors)

    def decay_at(self, n: int) -> float:
        """The decay used by update number ``n`` (0-based)."""
        return min(self.decay, (1.0 + n) / (10.0 + n)) if self.warmup else self.decay

    @property
    def state_key(self) -> str:
        return "scigen.EMA"

    def on_fit_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if self.ema_module is None:
            self.ema_module = copy.deepcopy(pl_module.module).eval().requires_grad_(False)
        if self._pending is not None:  # restored from a checkpoint (loaded before on_fit_start)
            self.ema_module.load_state_dict(self._pending)
            self._pending = None

    def _pairs(self, live: nn.Module) -> tuple[list, list, list, list, bool]:
        """(EMA params, live params, EMA buffers, live buffers, one dtype and device per pair), matched by
        name; built on the first update of a module."""
        if self._cache is None or self._cache[0] is not live or self._cache[1] is not self.ema_module:
            ema_p, ema_b = dict(self.ema_module.named_parameters()), dict(self.ema_module.named_buffers())
            live_p, live_b = list(live.named_parameters()), list(live.named_buffers())
            pairs = ([ema_p[n] for n, _ in live_p], [p for _, p in live_p], [ema_b[n] for n, _ in live_b],
                     [b for _, b in live_b])
            alike = all(e.dtype == p.dtype and e.device == p.device for e, p in zip(pairs[0], pairs[1], strict=True))
            self._cache = (live, self.ema_module, (*pairs, alike))
        return self._cache[2]

    @torch.no_grad()
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        ema_p, live_p, ema_b, live_b, alike = self._pairs(pl_module.module)
        weight = 1.0 - self.decay_at(self.num_updates)
        if alike:  # one multi-tensor lerp: the arithmetic of a lerp_ per tensor, in a few kernel calls
            torch._foreach_lerp_(ema_p, live_p, weight)
        else:  # e.g. a bf16-true module: the average keeps its own dtype
            for e, p in zip(ema_p, live_p, strict=True):
                e.lerp_(p.detach().to(e.dtype, e.device), weight)
        for e, b in zip(ema_b, live_b, strict=True):
            e.copy_(b)
        self.num_updates += 1

    def state_dict(self) -> dict:
        weights = self.ema_module.state_dict() if self.ema_module is not None else self._pending
        return {"decay": self.decay, "warmup": self.warmup, "num_updates": self.num_updates, "weights": weights}

    def load_state_dict(self, state_dict: dict) -> None:
        self.num_updates = int(state_dict["num_updates"])
        self._pending = state_dict["weights"]
        if self.ema_module is not None:
            self.ema_module.load_state_dict(self._pending)
            self._pending = None


class RNGState(Callback):
    """Save the global RNG states in checkpoints; restore them before the first step after resuming."""

    def __init__(self) -> None:
        self._pending: dict | None = None

    @property
    def state_key(self) -> str:
        return "scigen.RNGState"

    def state_dict(self) -> dict:
        return get_rng_state()

    def load_state_dict(self, state_dict: dict) -> None:
        self._pending = state_dict

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        if self._pending is not None:
            set_rng_state(self._pending)
            self._pending = None


def atomic_save_checkpoint(trainer: pl.Trainer, path: Path) -> Path:
    """``trainer.save_checkpoint`` to a temporary file, fsync, then ``os.replace`` onto ``path``.

    Must be called on every rank (Lightning synchronises inside ``save_checkpoint``); rank 0 writes.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")  # inside the claimed checkpoint folder: only scigen writes there
    trainer.save_checkpoint(tmp)
    if trainer.is_global_zero:
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    trainer.strategy.barrier("scigen.atomic_save_checkpoint")
    return path


class PeriodicValidation(Callback):
    """Every ``every_n_steps`` optimizer steps, compute ``pl_module.validation_loss()``.

    Scheduled on the global step (not Lightning's per-epoch batch index), so a resumed run validates
    at the same steps as an uninterrupted one. The value is appended to ``pl_module.val_losses`` and
    sent to the logger as ``val_loss``.
    """

    def __init__(self, every_n_steps: int) -> None:
        if every_n_steps < 1:
            raise InvalidInputError(f"val_every must be >= 1, got {every_n_steps}")
        self.every_n_steps = every_n_steps

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        step = trainer.global_step
        if step % self.every_n_steps and step != trainer.max_steps:
            return
        value = pl_module.validation_loss()
        pl_module.val_losses.append((step, value))
        if trainer.is_global_zero:
            for logger in trainer.loggers:
                logger.log_metrics({"val_loss": value}, step=step)


class EarlyStopping(Callback):
    """Stop training after ``patience`` validations without an improvement of more than ``min_delta``.

    Reads the ``(step, val_loss)`` pairs that :class:`PeriodicValidation` appends to
    ``pl_module.val_losses`` (pass it to :func:`~scigen.core.train.fit` as ``early_stopping=``, which
    orders it after the validation and the EMA update of the same step). With ``restore_best`` the
    weights ``fit`` returns (the EMA copy when EMA is on, else the trained module) are reset at the end
    to those of the best validation. Its counters and best weights are part of the checkpoint, so a
    resumed run stops at the same step as an uninterrupted one.

    Attributes:
        best: the lowest validation loss seen; ``best_step`` its step; ``stopped_step`` the step at
            which training was stopped (``None`` if it ran to ``max_steps``).
    """

    def __init__(self, patience: int, min_delta: float = 0.0, restore_best: bool = True) -> None:
        if isinstance(patience, bool) or not isinstance(patience, int) or patience < 1:
            raise InvalidInputError(f"early stopping patience must be a positive int, got {patience!r}")
        if not float(min_delta) >= 0.0:
            raise InvalidInputError(f"early stopping min_delta must be >= 0, got {min_delta!r}")
        self.patience, self.min_delta, self.restore_best = patience, float(min_delta), bool(restore_best)
        self.best: float = float("inf")
        self.best_step: int | None = None
        self.best_state: dict | None = None
        self.stopped_step: int | None = None
        self._seen = 0
        self._bad = 0
        self._target = None  # callable -> the module whose weights are kept (set by fit)

    @property
    def state_key(self) -> str:
        return "scigen.EarlyStopping"

    def _module(self, pl_module) -> nn.Module:
        return self._target() if self._target is not None else pl_module.module

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        vals = pl_module.val_losses
        if len(vals) == self._seen:
            return
        self._seen = len(vals)
        step, value = vals[-1]
        if value < self.best - self.min_delta:
            self.best, self.best_step, self._bad = float(value), int(step), 0
            if self.restore_best:
                self.best_state = {k: v.detach().clone() for k, v in self._module(pl_module).state_dict().items()}
            return
        self._bad += 1
        if self._bad >= self.patience:
            self.stopped_step = int(step)
            trainer.should_stop = True

    def on_train_end(self, trainer, pl_module) -> None:
        if self.restore_best and self.best_state is not None:
            self._module(pl_module).load_state_dict(self.best_state)

    def state_dict(self) -> dict:
        return {"best": self.best, "best_step": self.best_step, "best_state": self.best_state,
                "stopped_step": self.stopped_step, "seen": self._seen, "bad": self._bad}

    def load_state_dict(self, state_dict: dict) -> None:
        self.best, self.best_step = float(state_dict["best"]), state_dict["best_step"]
        self.best_state, self.stopped_step = state_dict["best_state"], state_dict["stopped_step"]
        self._seen, self._bad = int(state_dict["seen"]), int(state_dict["bad"])


class AtomicCheckpoint(Checkpoint):
    """``last.ckpt`` every ``every_n_steps``, at least every ``every_seconds`` of wall time (so a long run
    killed early still leaves something to resume) and at the end; optional ``step-*.ckpt`` and ``best.ckpt``.

    Subclassing Lightning's ``Checkpoint`` makes Lightning run it after every other callback, so the
    EMA and RNG states it saves are those of the finished step.
    """

    def __init__(self, dirpath: str | os.PathLike, every_n_steps: int, keep_every: int | None = None, *,
                 every_seconds: float | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        if every_n_steps < 1:
            raise InvalidInputError(f"checkpoint_every must be >= 1, got {every_n_steps}")
        if every_seconds is not None and not (every_seconds > 0 and math.isfinite(every_seconds)):
            raise InvalidInputError(f"checkpoint_seconds must be a positive number of seconds or None, got {every_seconds}")
        self.every_seconds, self._clock = every_seconds, clock
        self._saved_at = clock()
        if keep_every is not None and keep_every < 1:
            raise InvalidInputError(f"keep_every must be >= 1 or None, got {keep_every}")
        self.dirpath = Path(dirpath)
        self.every_n_steps, self.keep_every = every_n_steps, keep_every
        self.last_path: Path | None = None
        self.best_path: Path | None = None
        self.best_score: float | None = None
        self._last_step = -1

    @property
    def state_key(self) -> str:
        return "scigen.AtomicCheckpoint"

    def setup(self, trainer, pl_module, stage: str) -> None:
        if trainer.is_global_zero:
            self.dirpath.mkdir(parents=True, exist_ok=True)

    def _save_last(self, trainer) -> None:
        self.last_path = atomic_save_checkpoint(trainer, self.dirpath / "last.ckpt")
        self._last_step = trainer.global_step
        self._saved_at = self._clock()

    def _time_is_up(self, trainer) -> bool:
        """True when ``every_seconds`` of wall time passed since the last ``last.ckpt`` (rank 0's clock
        decides, so every rank takes part in the same collective save)."""
        if self.every_seconds is None:
            return False
        due = self._clock() - self._saved_at >= self.every_seconds
        return bool(trainer.strategy.broadcast(due, src=0)) if trainer.world_size > 1 else due

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        step = trainer.global_step
        if step % self.every_n_steps == 0 or self._time_is_up(trainer):
            self._save_last(trainer)
        val = getattr(pl_module, "val_losses", None)
        if val and val[-1][0] == step and (self.best_score is None or val[-1][1] < self.best_score):
            self.best_score = val[-1][1]
            self.best_path = atomic_save_checkpoint(trainer, self.dirpath / "best.ckpt")
        if self.keep_every and step % self.keep_every == 0:
            atomic_save_checkpoint(trainer, self.dirpath / f"step-{step:08d}.ckpt")

    def on_train_end(self, trainer, pl_module) -> None:
        if trainer.global_step != self._last_step:
            self._save_last(trainer)


    def state_dict(self) -> dict:
        return {"best_score": self.best_score, "best_path": str(self.best_path) if self.best_path else None}

    def load_state_dict(self, state_dict: dict) -> None:
        self.best_score = state_dict.get("best_score")
        best = state_dict.get("best_path")
        self.best_path = Path(best) if best else None
