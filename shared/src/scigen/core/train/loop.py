"""``fit``'s default training loop: the step written out on Lightning Fabric, with the Trainer's semantics.

Lightning's ``Trainer`` runs every optimizer step through its loop objects, a dozen hook dispatches, a
closure, progress counters and the logger connector: about 1–1.5 ms a step on one CPU thread, as much
as the whole forward and backward pass of a small MLP. :class:`FabricLoop` keeps what the Trainer does
for ``fit`` and drops the machinery: Lightning Fabric sets up the accelerator, the strategy (single
device, DDP with the same script launcher), the precision plugin and the distributed environment, and
the step is the plain sequence

    batch -> device -> on_train_batch_start -> loss (under the precision's autocast) -> non-finite guard
    -> zero_grad -> backward -> on_before_optimizer_step -> clip -> optimizer step -> lr schedule
    -> log (every ``log_every_n_steps``) -> on_train_batch_end

in the Trainer's order (same operations, same random numbers: a run gives the Trainer's per-step losses
bit for bit). Callbacks are Lightning ``Callback`` objects called with this loop in the ``trainer``
argument: it has the attributes they use (``global_step``, ``max_steps``, ``should_stop``,
``is_global_zero``, ``world_size``, ``strategy``, ``loggers``, ``callbacks``, ``optimizers``,
``save_checkpoint`` ...). Checkpoints have the Trainer's layout (``state_dict``, ``optimizer_states``,
``lr_schedulers``, ``callbacks``, ``loops``, ``global_step``), so a run started on one loop resumes on
the other.

What stays on the Trainer (``fit(..., loop="trainer")``, and what ``loop="auto"`` picks by itself):
strategies other than single-device and script-launched DDP (spawned processes, FSDP, DeepSpeed, XLA,
strategy objects) and Lightning's own callbacks (``ModelCheckpoint``, ``LearningRateMonitor``, ...), which
reach into the Trainer's internals.
"""

from __future__ import annotations

import copy
import itertools
import math
import time
from collections.abc import Sequence
from typing import Any

import torch
from lightning.pytorch.callbacks import Callback, Checkpoint
from torch import Tensor, nn
from torch.utils.data import DataLoader

from scigen.core.errors import InvalidInputError
from scigen.core.samplers._progress import no_progress_bars
from scigen.core.train.errors import NonFiniteLossError

__all__ = ["LOOPS", "FabricLoop", "fabric_unsupported", "trainer_loops_state"]

LOOPS = ("auto", "fabric", "trainer")

#: hooks the Fabric loop calls; the validation / test / predict / sanity-check hooks are called by neither loop
#: (``fit`` validates in a callback), so a callback may define them too
_CALLED = ("setup", "teardown", "on_fit_start", "on_fit_end", "on_train_start", "on_train_end", "on_train_epoch_start",
           "on_train_epoch_end", "on_train_batch_start", "on_train_batch_end", "on_before_backward",
           "on_after_backward", "on_before_optimizer_step", "on_before_zero_grad", "on_exception",
           "on_save_checkpoint", "on_load_checkpoint")


def _progress(completed: int, ready: int | None = None, started: bool = False, processed: bool = False) -> dict:
    ready = completed if ready is None else ready
    d = {"ready": ready, "completed": completed}
    if started:
        d["started"] = ready
    if processed:
        d["processed"] = ready
    return d


def trainer_loops_state(global_step: int, epoch: int = 0, batch_in_epoch: int | None = None) -> dict:
    """The ``loops`` entry a Lightning Trainer writes into a ``fit`` checkpoint after ``global_step``
    optimizer steps (``epoch`` passes over the data finished, ``batch_in_epoch`` batches of the current
    one done), so that ``loop="trainer"`` resumes a checkpoint of the Fabric loop at the same step."""
    b = global_step if batch_in_epoch is None else batch_in_epoch
    both = lambda d: {"total": dict(d), "current": dict(d)}  # noqa: E731
    batch = {"total": _progress(global_step, started=True, processed=True),
             "current": _progress(b, started=True, processed=True), "is_last_batch": False}
    empty_batch = {**both(_progress(0, started=True, processed=True)), "is_last_batch": False}
    return {
        "fit_loop": {
            "state_dict": {},
            "epoch_loop.state_dict": {"_batches_that_stepped": global_step},
            "epoch_loop.batch_progress": batch,
            "epoch_loop.scheduler_progress": both(_progress(global_step)),
            "epoch_loop.automatic_optimization.state_dict": {},
            "epoch_loop.automatic_optimization.optim_progress": {"optimizer": {
                "step": both(_progress(global_step)), "zero_grad": both(_progress(global_step, started=True))}},
            "epoch_loop.manual_optimization.state_dict": {},
            "epoch_loop.manual_optimization.optim_step_progress": both(_progress(0)),
            "epoch_loop.val_loop.state_dict": {},
            "epoch_loop.val_loop.batch_progress": copy.deepcopy(empty_batch),
            "epoch_progress": {"total": {"ready": epoch + 1, "started": epoch + 1, "processed": epoch,
                                         "completed": epoch},
                               "current": {"ready": epoch + 1, "started": epoch + 1, "processed": epoch,
                                           "completed": epoch}},
        },
        "validate_loop": {"state_dict": {}, "batch_progress": copy.deepcopy(empty_batch)},
        "test_loop": {"state_dict": {}, "batch_progress": copy.deepcopy(empty_batch)},
        "predict_loop": {"state_dict": {}, "batch_progress": both(_progress(0, started=True, processed=True))},
    }


def _overrides(cb: Callback, hook: str) -> bool:
    return getattr(type(cb), hook, None) is not getattr(Callback, hook)


def fabric_unsupported(strategy, callbacks: Sequence[Callback]) -> str | None:
    """Why the Fabric loop cannot run this configuration (``None`` when it can): a strategy object, or one of
    Lightning's own callbacks (they use the Trainer's internals)."""
    if not isinstance(strategy, str):
        return f"strategy {type(strategy).__name__} objects run on the Trainer"
    for cb in callbacks:
        if type(cb).__module__.startswith(("lightning.", "pytorch_lightning.")):
            return f"Lightning's own {type(cb).__name__} callback needs the Trainer"
    return None


def make_fabric(*, accelerator, devices, strategy: str, precision: str, loggers, num_nodes: int = 1):
    """A Fabric for these settings, or the reason the Fabric loop cannot use it (``(None, reason)``)."""
    from lightning.fabric import Fabric
    from lightning.fabric.strategies import DDPStrategy, SingleDeviceStrategy
    from lightning.fabric.strategies.launchers.subprocess_script import _SubprocessScriptLauncher

    try:
        fabric = Fabric(accelerator=accelerator, devices=devices, num_nodes=num_nodes, strategy=strategy,
                        precision=precision, loggers=loggers)
    except (ValueError, TypeError, RuntimeError) as exc:  # e.g. a strategy name only the Trainer knows
        return None, f"Fabric does not take these settings ({str(exc).splitlines()[0][:160]})"
    kind = type(fabric.strategy)
    launcher = fabric.strategy.launcher
    if kind not in (SingleDeviceStrategy, DDPStrategy) or not (launcher is None
                                                                or isinstance(launcher, _SubprocessScriptLauncher)):
        return None, (f"the {kind.__name__} strategy"
                      f"{' with a ' + type(launcher).__name__ if launcher is not None else ''} runs on the Trainer")
    return fabric, None


class _Bar:
    """A rich progress bar over the optimizer steps, redrawn at most ten times a second."""

    def __init__(self, total: int, done: int) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._p = Progress(TextColumn("training"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                           TimeRemainingColumn(), TextColumn("{task.fields[info]}"), console=Console(stderr=True))
        self._task = self._p.add_task("training", total=total, completed=done, info="")
        self._p.start()
        self._next = 0.0

    def update(self, step: int, loss: float, force: bool = False) -> None:
        now = time.monotonic()
        if force or now >= self._next:
            self._p.update(self._task, completed=step, info=f"loss {loss:.4g}")
            self._next = now + 0.1

    def close(self) -> None:
        self._p.stop()


class FabricLoop:
    """Train a :class:`~scigen.core.train.module.GenerativeModule` on Fabric; the ``trainer`` its callbacks see.

    Built by :func:`~scigen.core.train.fit` (``loop="fabric"`` or ``"auto"``). Attributes a callback may read:
    ``global_step`` (optimizer steps done), ``max_steps``, ``should_stop`` (set it to stop after this
    step), ``current_epoch``, ``is_global_zero``, ``global_rank``, ``local_rank``, ``world_size``,
    ``num_devices``, ``strategy`` and ``precision_plugin`` (Fabric's), ``loggers`` / ``logger``,
    ``callbacks``, ``optimizers``, ``lr_scheduler_configs`` (``.scheduler``), ``lightning_module``,
    ``log_every_n_steps``, ``callback_metrics`` (``train_loss`` and ``lr`` of the last logged step),
    ``default_root_dir``, ``log_dir``, and ``save_checkpoint(path)``.
    """

    def __init__(self, fabric, gm, *, callbacks: Sequence[Callback], max_steps: int, grad_clip: float | None,
                 log_every_n_steps: int, progress: bool, default_root_dir: str) -> None:
        for cb in callbacks:
            if not isinstance(cb, Callback):
                raise TypeError(f"callbacks must be lightning.pytorch.callbacks.Callback objects, got "
                                f"{type(cb).__name__}")
        self.fabric, self.gm = fabric, gm
        # the Trainer runs Checkpoint callbacks after all others, so they save the finished step's state
        self.callbacks = [cb for cb in callbacks if not isinstance(cb, Checkpoint)] + \
                         [cb for cb in callbacks if isinstance(cb, Checkpoint)]
        self.max_steps, self.grad_clip = max_steps, grad_clip
        self.log_every_n_steps, self.progress = log_every_n_steps, progress
        self.default_root_dir = default_root_dir
        self.global_step, self.current_epoch = 0, 0
        self._batch_in_epoch = 0  # batches of the current pass done (the Trainer's batch index)
        self.should_stop = False
        self.callback_metrics: dict[str, Any] = {}
        self.optimizers: list = []
        self.lr_scheduler_configs: list = []
        self.progress_bar_callback = None
        self.lightning_module = gm
        self._hooks = {h: [cb for cb in self.callbacks if _overrides(cb, h)] for h in _CALLED}

    # ---- what callbacks read -------------------------------------------------------------------
    @property
    def strategy(self):
        return self.fabric.strategy

    @property
    def precision_plugin(self):
        return self.fabric.strategy.precision

    @property
    def loggers(self) -> list:
        return self.fabric.loggers

    @property
    def logger(self):
        return self.fabric.loggers[0] if self.fabric.loggers else None

    @property
    def log_dir(self) -> str | None:
        lg = self.logger
        return getattr(lg, "log_dir", None) if lg is not None else self.default_root_dir

    @property
    def is_global_zero(self) -> bool:
        return self.fabric.is_global_zero

    @property
    def global_rank(self) -> int:
        return self.fabric.global_rank

    @property
    def local_rank(self) -> int:
        return self.fabric.local_rank

    @property
    def world_size(self) -> int:
        return self.fabric.world_size

    @property
    def num_devices(self) -> int:
        return len(getattr(self.fabric.strategy, "parallel_devices", None) or [self.fabric.device])

    @property
    def model(self):
        return self.gm

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"trainer.{name} is not available in fit's Fabric loop; pass loop='trainer' to run the "
                             "callback on Lightning's Trainer")

    def _call(self, hook: str, *args) -> None:
        for cb in self._hooks[hook]:
            getattr(cb, hook)(self, self.gm, *args)

    # ---- checkpoints (the Trainer's layout) ---------------------------------------------------------
    def _dump_checkpoint(self, weights_only: bool = False) -> dict:
        import lightning

        ckpt: dict[str, Any] = {
            "epoch": self.current_epoch, "global_step": self.global_step,
            "pytorch-lightning_version": lightning.__version__, "state_dict": self.gm.state_dict(),
            "loops": trainer_loops_state(self.global_step, self.current_epoch, self._batch_in_epoch),
        }
        if not weights_only:
            states = {}
            for cb in self.callbacks:
                state = cb.state_dict()
                if state:
                    states[cb.state_key] = state
            ckpt["callbacks"] = states
            ckpt["optimizer_states"] = [self.fabric.strategy.get_optimizer_state(o) for o in self.optimizers]
            ckpt["lr_schedulers"] = [c.scheduler.state_dict() for c in self.lr_scheduler_configs]
            prec = self.precision_plugin.state_dict()
            if prec:
                ckpt[type(self.precision_plugin).__qualname__] = prec
            for cb in self.callbacks:
                cb.on_save_checkpoint(self, self.gm, ckpt)
        self.gm.on_save_checkpoint(ckpt)
        return ckpt

    def save_checkpoint(self, filepath, weights_only: bool = False, storage_options: Any = None) -> None:
        """Write a Trainer-layout checkpoint of the current step to ``filepath`` (rank 0 writes; all ranks call)."""
        ckpt = self._dump_checkpoint(weights_only)
        self.fabric.strategy.save_checkpoint(filepath, ckpt, storage_options=storage_options)
        self.fabric.strategy.barrier("Trainer.save_checkpoint")

    def _restore_module_and_callbacks(self, ckpt: dict) -> None:
        self.gm.on_load_checkpoint(ckpt)
        for cb in self.callbacks:
            cb.on_load_checkpoint(self, self.gm, ckpt)
        states = ckpt.get("callbacks", {})
        for cb in self.callbacks:
            state = states.get(cb.state_key, states.get(getattr(cb, "_legacy_state_key", None)))
            if state:
                cb.load_state_dict(copy.deepcopy(state))
        self.gm.load_state_dict(ckpt["state_dict"], strict=True)

    def _restore_training_state(self, ckpt: dict, optimizer, scheduler) -> None:
        prec = ckpt.get(type(self.precision_plugin).__qualname__)
        if prec:
            self.precision_plugin.load_state_dict(prec)
        self.global_step = int(ckpt["global_step"])
        self.current_epoch = int(ckpt.get("epoch", 0))
        batch = ckpt.get("loops", {}).get("fit_loop", {}).get("epoch_loop.batch_progress", {})
        self._batch_in_epoch = int(batch.get("current", {}).get("completed", self.global_step))
        if ckpt.get("optimizer_states"):
            optimizer.load_state_dict(ckpt["optimizer_states"][0])
        if ckpt.get("lr_schedulers"):
            scheduler.load_state_dict(ckpt["lr_schedulers"][0])

    # ---- the run ----------------------------------------------------------------------------------
    def run(self, ckpt_path: str | None) -> None:
        """Launch (DDP: the other processes re-run the script), restore, train to ``max_steps``, tear down."""
        from scigen.core.train.module import LossStep, compile_step, make_optimizer, mixed_precision

        fabric, gm = self.fabric, self.gm
        fabric.launch()
        gm.trainer = self
        bar = None
        try:
            self._call("setup", "fit")
            ckpt = None
            if ckpt_path is not None:
                ckpt = torch.load(ckpt_path, map_location="cpu", weights_only=True)
                self._restore_module_and_callbacks(ckpt)
            optimizer, scheduler = make_optimizer(gm.parameters(), gm.optimizer_name, lr=gm.lr,
                                                  weight_decay=gm.weight_decay, lr_lambda=gm.schedule_lambda(),
                                                  fused=not mixed_precision(fabric.strategy.precision))
            # compiled, Fabric unwraps it, wraps the plain module (DDP) and compiles the wrapper (_reapply_compile)
            step_module, fopt = fabric.setup(compile_step(gm) if gm.use_compile else LossStep(gm), optimizer)
            self.optimizers = [optimizer]
            self.lr_scheduler_configs = [_SchedulerConfig(scheduler)]
            if ckpt is not None:
                self._restore_training_state(ckpt, optimizer, scheduler)
                del ckpt
            self._call("on_fit_start")
            gm.zero_grad(set_to_none=True)
            for lg in self.loggers:
                lg.log_hyperparams({})
                lg.save()
            if self.global_step < self.max_steps:
                if self.progress and self.is_global_zero:
                    _summary(gm.module, fabric)
                    bar = _Bar(self.max_steps, self.global_step)
                self._call("on_train_start")
                with torch.enable_grad():
                    self._train(step_module, fopt, optimizer, scheduler, bar)
                if bar is not None:
                    bar.close()
                    bar = None
                self._call("on_train_end")
            self._call("on_fit_end")
        except BaseException as exc:
            if bar is not None:
                bar.close()
            self._call("on_exception", exc)
            for lg in self.loggers:
                lg.finalize("failed")
            self._teardown()
            raise
        self._teardown()
        self._call("teardown", "fit")
        for lg in self.loggers:
            lg.finalize("success")

    def _teardown(self) -> None:
        # as the Trainer's strategy teardown: the module (and the optimizer state) go back to the CPU
        for opt in self.optimizers:
            for state in opt.state.values():
                for k, v in state.items():
                    if isinstance(v, Tensor) and v.device.type != "cpu":
                        state[k] = v.cpu()
        self.gm.cpu()
        self.gm._trainer = None

    def _batches(self, loader):
        """Endless ``(batch_idx, batch)``: a DataLoader is iterated pass after pass (``current_epoch`` counts
        them, the sampler's ``set_epoch`` is called as the Trainer does), ``TensorBatches`` is endless itself."""
        from lightning.fabric.utilities.data import _set_sampler_epoch

        while True:
            if isinstance(loader, DataLoader):
                _set_sampler_epoch(loader, self.current_epoch)
            try:  # a pass ends after len(loader) batches, without asking the exhausted iterator once more (as
                n = len(loader)  # the Trainer: a shuffling sampler would draw its next permutation there)
            except TypeError:
                n = None
            empty = True
            for _, batch in zip(range(n) if n is not None else itertools.count(), loader, strict=False):
                empty = False
                yield self._batch_in_epoch, batch
            if empty:
                raise InvalidInputError("the training data loader yielded no batch")
            self._call("on_train_epoch_end")
            self.current_epoch += 1
            self._batch_in_epoch = 0
            self._call("on_train_epoch_start")

    def _train(self, step_module, fopt, optimizer, scheduler, bar) -> None:
        from lightning.fabric.plugins.precision.double import DoublePrecision
        from lightning.fabric.plugins.precision.half import HalfPrecision
        from lightning.fabric.plugins.precision.precision import Precision

        from scigen.core.train.module import LossStep, mean_over_ranks

        fabric, gm = self.fabric, self.gm
        strategy, precision = fabric.strategy, fabric.strategy.precision
        # the (compiled) DDP wrapper or the (compiled) LossStep: Fabric's forward minus its output hooks
        forward = step_module._forward_module
        # the plain LossStep (no DDP, no compile) is only call_loss: _loss(batch, None) calls that without
        # nn.Module's call machinery
        step = None if type(forward).forward is LossStep.forward and not gm.use_compile else forward
        # the base plugin's forward context is a nullcontext: not entered at every step
        context = None if type(precision).forward_context is Precision.forward_context else precision.forward_context
        # the Trainer converts inputs for the "true" precisions only (not for the mixed ones, unlike Fabric)
        convert = precision.convert_input if isinstance(precision, (DoublePrecision, HalfPrecision)) else None
        on_cpu = fabric.device.type == "cpu"
        distributed = fabric.world_size > 1
        scaler = getattr(precision, "scaler", None)
        params = [p for group in optimizer.param_groups for p in group["params"]]
        # where Fabric's backward and optimizer step only forward to torch's, call torch's (fewer calls a step)
        direct = _identity_wrappers(fabric)
        hooks = self._hooks
        log_every = self.log_every_n_steps if self.loggers else 0
        losses = gm.losses
        loader = gm.train_dataloader()
        if distributed and isinstance(gm.train_data, DataLoader):  # a user's DataLoader: sharded as by the Trainer
            loader = fabric.setup_dataloaders(loader, move_to_device=False)._dataloader
        self._call("on_train_epoch_start")
        batches = self._batches(loader)
        with no_progress_bars():  # a sampler inside the loss never draws a bar into the training run
            while self.global_step < self.max_steps and not self.should_stop:
                batch_idx, batch = next(batches)
                if convert is not None:
                    batch = convert(batch)
                if not (on_cpu and isinstance(batch, Tensor) and batch.device.type == "cpu"):
                    batch = strategy.batch_to_device(batch)
                for cb in hooks["on_train_batch_start"]:
                    cb.on_train_batch_start(self, gm, batch, batch_idx)
                if context is None:
                    loss = gm._loss(batch, step)
                else:
                    with context():
                        loss = gm._loss(batch, step)
                value = float(loss.item())  # of a bf16 / fp16 loss too (item() converts exactly)
                if distributed:  # the union batch's loss on every rank (GenerativeModule.training_step)
                    value = mean_over_ranks(strategy, value, loss.device)
                if not math.isfinite(value):
                    raise _non_finite(self, batch_idx, value)
                losses.append(value)
                for cb in hooks["on_before_zero_grad"]:
                    cb.on_before_zero_grad(self, gm, optimizer)
                optimizer.zero_grad()
                for cb in hooks["on_before_backward"]:
                    cb.on_before_backward(self, gm, loss)
                if direct:
                    loss.backward()
                else:
                    strategy.backward(loss, None)
                for cb in hooks["on_after_backward"]:
                    cb.on_after_backward(self, gm)
                if scaler is not None:
                    scaler.unscale_(optimizer)  # the Trainer's hooks and clipping see unscaled gradients
                for cb in hooks["on_before_optimizer_step"]:
                    cb.on_before_optimizer_step(self, gm, optimizer)
                if self.grad_clip:
                    torch.nn.utils.clip_grad_norm_(params, self.grad_clip)
                lr = optimizer.param_groups[0]["lr"]
                if direct:
                    optimizer.step()
                else:
                    fopt.step()
                self.global_step += 1
                self._batch_in_epoch += 1
                scheduler.step()
                log = log_every and self.global_step % log_every == 0
                if log:
                    self.callback_metrics.update(train_loss=value, lr=lr)
                if bar is not None:
                    bar.update(self.global_step, value)
                for cb in hooks["on_train_batch_end"]:
                    cb.on_train_batch_end(self, gm, {"loss": loss.detach()}, batch, batch_idx)
                if log:  # after the callbacks (validation logs there), as the Trainer's logger connector
                    for lg in self.loggers:
                        lg.log_metrics({"train_loss": value, "lr": lr, "epoch": self.current_epoch},
                                       step=self.global_step - 1)
                        if self.global_step % (100 * log_every) == 0:
                            lg.save()
                if distributed:
                    self.should_stop = strategy.reduce_boolean_decision(bool(self.should_stop), all=False)
        if bar is not None:
            bar.update(self.global_step, losses[-1] if losses else float("nan"), force=True)
        self._call("on_train_epoch_end")


class _SchedulerConfig:
    """What ``trainer.lr_scheduler_configs`` holds for a callback: the scheduler, stepped every step."""

    interval, frequency = "step", 1

    def __init__(self, scheduler) -> None:
        self.scheduler = scheduler


def _identity_wrappers(fabric) -> bool:
    """Whether Fabric's ``strategy.backward`` and ``optimizer.step`` only forward to ``loss.backward()`` and the
    torch optimizer's ``step()``: the strategy and precision plugin keep Lightning's base methods (no scaling,
    no DeepSpeed engine) and Fabric has no callbacks to call after a step."""
    from lightning.fabric.plugins.precision.precision import Precision
    from lightning.fabric.strategies.strategy import Strategy

    strategy = fabric.strategy
    kind, plugin = type(strategy), type(strategy.precision)
    return (kind.backward is Strategy.backward and kind.optimizer_step is Strategy.optimizer_step
            and all(getattr(plugin, m) is getattr(Precision, m)
                    for m in ("pre_backward", "backward", "post_backward", "optimizer_step"))
            and not getattr(fabric, "_callbacks", None) and not hasattr(strategy, "model"))


def _non_finite(loop: FabricLoop, batch_idx: int, value: float) -> NonFiniteLossError:
    from scigen.core.train.callbacks import AtomicCheckpoint

    ckpts = [cb.last_path for cb in loop.callbacks if isinstance(cb, AtomicCheckpoint)]
    return NonFiniteLossError(loop.global_step, batch_idx, value,
                              str(ckpts[0]) if ckpts and ckpts[0] is not None else None)


def _summary(module: nn.Module, fabric) -> None:
    from rich.console import Console

    total = sum(p.numel() for p in module.parameters())
    trainable = sum(p.numel() for p in module.parameters() if p.requires_grad)
    Console(stderr=True).print(f"{type(module).__name__}: {trainable:,} trainable of {total:,} parameters; "
                               f"{fabric.device}, {fabric.world_size} process(es), precision "
                               f"{fabric.strategy.precision.precision}")
