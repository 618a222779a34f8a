"""``fit``: train any ``nn.Module`` on ``loss_fn(module, batch)`` with Lightning underneath.

What it guarantees:

* **Exact resume** (for Tensor / Dataset data): the batch of optimizer step ``k`` is a pure
  function of ``(seed, k)`` (:mod:`~scigen.core.train.data`), and the checkpoint stores the global
  RNG states (torch, CUDA, numpy, Python), the optimizer, the learning-rate schedule, the EMA weights
  and the loss history. A run stopped after step ``k`` and resumed to ``N`` reproduces the per-step
  losses of an uninterrupted ``N``-step run bit for bit (same device, same thread settings). A
  user-supplied DataLoader is used as given; its order after resuming is whatever it yields then.
* **Atomic checkpoints**: temp file + ``os.replace``; ``last.ckpt`` is always a complete file.
* **No side effects on the caller**: ``fit`` seeds the global generators for the run (``seed``) and
  restores torch (CPU, CUDA), numpy and Python ``random`` afterwards (:func:`scigen.core.rng.preserved_rng`).
* **Non-finite guard**: a NaN/inf loss raises :class:`NonFiniteLossError` naming the step and batch
  index before the optimizer touches the weights; ``last.ckpt`` stays as it was.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import lightning.pytorch as pl
import torch
from lightning.fabric.utilities.seed import seed_everything
from lightning.pytorch.callbacks import Callback, RichProgressBar
from torch import Tensor, nn
from torch.utils.data import DataLoader

from scigen.core.errors import CheckpointError, InvalidInputError
from scigen.core.train.batchnorm import plan_sync_batchnorm, synced_batchnorm
from scigen.core.train.callbacks import EMA, AtomicCheckpoint, EarlyStopping, PeriodicValidation, RNGState
from scigen.core.train.data import as_dataset, check_num_workers
from scigen.core.train.loop import LOOPS, FabricLoop, fabric_unsupported, make_fabric
from scigen.core.train.module import GenerativeModule
from scigen.core.train.quiet import quiet_lightning
from scigen.core.train.rng import preserved_rng

__all__ = ["FitResult", "fit"]

PRECISIONS = ("32-true", "32", "64-true", "bf16-mixed", "16-mixed", "bf16-true", "16-true")
RNG_MODES = ("global", "per_sample")
LOGGERS = ("csv", "tensorboard", None)


@dataclass
class FitResult:
    """What :func:`fit` returns.

    Attributes:
        module: the module to use for sampling — the EMA copy when ``ema_decay`` was given (with the
            trained module's ``requires_grad`` flags, so it can be passed to ``fit`` again), else the
            trained module itself (which ``fit`` trained in place).
        ema_module: the EMA copy (``None`` without EMA).
        losses: the training loss of every optimizer step ``0 .. steps-1`` (across resumes).
        val_losses: ``(step, mean val loss)`` at every validation.
        last_checkpoint, best_checkpoint: paths (``None`` without ``checkpoint_dir`` / ``val_data``).
        steps: the optimizer steps completed.
        log_dir: where the CSV / TensorBoard logs went (``None`` without a logger).
        best_step, stopped_step: with ``early_stopping``, the step of the best validation (whose
            weights ``module`` holds when ``restore_best``) and the step training stopped at
            (``None`` when it ran to ``max_steps``).
    """

    module: nn.Module
    ema_module: nn.Module | None
    losses: list[float]
    val_losses: list[tuple[int, float]] = field(default_factory=list)
    last_checkpoint: Path | None = None
    best_checkpoint: Path | None = None
    steps: int = 0
    log_dir: Path | None = None
    best_step: int | None = None
    stopped_step: int | None = None


def _resolve_resume(resume, checkpoint_dir: Path | None) -> str | None:
    if resume is False or resume is None:
        return None
    if resume is True:
        if checkpoint_dir is not None and (checkpoint_dir / "last.ckpt").is_file():
            return _checked_checkpoint(checkpoint_dir / "last.ckpt")
        return None
    if isinstance(resume, (str, os.PathLike)):
        path = Path(resume)
        if not path.is_file():
            raise FileNotFoundError(f"resume checkpoint {str(path)!r} does not exist")
        return _checked_checkpoint(path)
    raise TypeError(f"resume must be True, False or a checkpoint path, got {type(resume).__name__}")


DDP_STRATEGIES = ("ddp", "ddp_spawn", "ddp_fork", "ddp_notebook")


def ddp_strategy(strategy, unused_parameters: bool):
    """``strategy`` as Lightning should get it: a DDP name becomes its ``_find_unused_parameters_true`` variant
    when ``unused_parameters`` (DDP's reducer then walks the autograd graph each step to find the parameters a
    step did not use; without it such a step stops with "Expected to have finished reduction")."""
    if not isinstance(unused_parameters, bool):
        raise InvalidInputError(f"unused_parameters must be True or False, got {unused_parameters!r}")
    if unused_parameters and isinstance(strategy, str) and strategy in DDP_STRATEGIES:
        return f"{strategy}_find_unused_parameters_true"
    return strategy


def _checked_checkpoint(path: Path) -> str:
    """``path`` if it is a complete Lightning checkpoint; a :class:`CheckpointError` naming it otherwise.

    Read with ``weights_only=True``: a pickle that would run code is refused by torch and reported here,
    as are truncated files and foreign ones (an image, a plain tensor file, a dict without training state).
    """
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch raises many kinds for a bad file; all mean the same here
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise CheckpointError(f"cannot resume from {path}: not a readable scigen training checkpoint "
                              f"(truncated, foreign, or holding pickled code; {first})") from None
    if not isinstance(ckpt, dict) or "state_dict" not in ckpt or "global_step" not in ckpt:
        raise CheckpointError(f"cannot resume from {path}: not a scigen training checkpoint "
                              "(no state_dict / global_step)")
    return str(path)


def _logger(kind, log_dir: Path | None):
    from lightning.pytorch.loggers import Logger

    if isinstance(kind, Logger):  # a user's own Lightning logger (WandbLogger, MLFlowLogger, ...)
        return kind
    if isinstance(kind, (list, tuple)) and kind and all(isinstance(k, Logger) for k in kind):
        return list(kind)
    if kind not in LOGGERS:
        raise InvalidInputError(f"logger must be one of {LOGGERS} or a Lightning Logger instance, got {kind!r}")
    if kind is None or log_dir is None:
        return False
    if kind == "csv":
        from lightning.pytorch.loggers import CSVLogger

        return CSVLogger(save_dir=str(log_dir), name="", version="")
    import importlib.util

    if importlib.util.find_spec("tensorboard") is None and importlib.util.find_spec("tensorboardX") is None:
        raise InvalidInputError("logger='tensorboard' needs TensorBoard: pip install 'scigen-core[tensorboard]' "
                                "(or use logger='csv', which needs nothing extra)")
    from lightning.pytorch.loggers import TensorBoardLogger

    return TensorBoardLogger(save_dir=str(log_dir), name="", version="")


def _log_dir(logger, logs: Path | None) -> Path | None:
    """Where the logs went: ``logs`` for a named logger, the object's own ``log_dir`` for a Logger."""
    if logger is None:
        return None
    if isinstance(logger, str):
        return logs
    own = getattr(logger, "log_dir", None)
    return Path(own) if own else None


def fit(
    module: nn.Module,
    loss_fn: Callable[[nn.Module, object], Tensor],
    data,
    *,
    max_steps: int,
    batch_size: int | None = None,
    lr: float = 1e-3,
    optimizer: str | Callable = "adamw",
    weight_decay: float = 0.0,
    lr_schedule: str | None = None,
    warmup_steps: int | None = None,
    lr_step_size: int | None = None,
    lr_gamma: float = 0.5,
    ema_decay: float | None = None,
    ema_warmup: bool = True,
    grad_clip: float | None = 1.0,
    precision: str = "32-true",
    compile: bool = False,
    seed: int = 0,
    checkpoint_dir: str | os.PathLike | None = None,
    checkpoint_every: int | None = None,
    keep_every: int | None = None,
    checkpoint_seconds: float | None = 300.0,
    resume: bool | str | os.PathLike = True,
    strategy: str = "auto",
    devices: int | str = 1,
    num_nodes: int = 1,
    accelerator: str = "auto",
    logger: str | None = "csv",
    log_dir: str | os.PathLike | None = None,
    progress: bool | None = None,
    val_data=None,
    val_every: int | None = None,
    callbacks: Sequence[Callback] = (),
    collate_fn: Callable | None = None,
    early_stopping: int | EarlyStopping | None = None,
    loop: str = "auto",
    rng: str = "global",
    num_workers: int = 0,
    unused_parameters: bool = False,
    sync_batchnorm: bool | str = "auto",
) -> FitResult:
    """Train ``module`` for ``max_steps`` optimizer steps on ``loss_fn(module, batch)``.

    Args:
        module: any ``nn.Module``; trained in place.
        loss_fn: ``loss_fn(module, batch) -> scalar Tensor``. ``batch`` is a Tensor ``[B, ...]`` when
            ``data`` is a Tensor, otherwise what the Dataset's collate / the DataLoader yields.
        data: a Tensor ``[N, ...]`` (rows are samples), a map-style Dataset, or a DataLoader.
        max_steps: total optimizer steps (a resumed run continues up to this number).
        batch_size: per-process batch size for Tensor / Dataset data (default ``min(N, 128)``).
        lr, optimizer ("adamw" | "adam" | "sgd" | callable params -> Optimizer), weight_decay.
        lr_schedule: ``None`` (constant), "warmup" (linear warm-up then constant), "cosine"
            (warm-up then cosine to 0) or "step" (the lr times ``lr_gamma`` every ``lr_step_size`` steps;
            ``lr_step_size=None`` = one epoch of ``data``, ``ceil(N / (batch_size · processes))`` steps: the official
            time-series codes' ``lradj="type1"`` with ``lr_gamma=0.5``); ``warmup_steps`` defaults to
            ``max_steps // 20`` (0 for "step").
        ema_decay: keep an EMA of the weights with this decay (e.g. 0.999); ``None`` = no EMA.
        ema_warmup: ramp the EMA decay up as ``min(ema_decay, (1 + n)/(10 + n))`` at update ``n``
            (:class:`EMA`), so short runs do not keep the random initialisation in the average;
            ``False`` = the constant decay from the first step.
        grad_clip: clip the global gradient 2-norm to this value; ``None`` or 0 = no clipping.
        precision: a Lightning precision ("32-true", "bf16-mixed", "16-mixed", ...). "bf16-mixed" runs the loss
            under ``torch.autocast`` in bfloat16 (matrix products and convolutions in bf16, reductions and the
            weights, gradients and optimizer state in fp32; Micikevicius et al., "Mixed Precision Training",
            ICLR 2018; Kalamkar et al., "A Study of BFLOAT16 for Deep Learning Training", 2019), on CPU and GPU.
        compile: ``torch.compile`` the training step (``loss_fn(module, batch)``, forward and backward; under DDP
            the DDP wrapper is compiled, so its gradient buckets split the graph). Random ops fall back to torch's
            own kernels (inductor ``fallback_random``): the compiled run draws the same random numbers and gives the
            eager per-step losses to float tolerance. The first step pays the compilation (seconds to a minute);
            validation and sampling run eagerly. Checkpoints hold the plain module's keys (no ``_orig_mod.``):
            they load into an uncompiled module and resume with or without ``compile``.
        seed: seeds torch / numpy / Python for the run (restored on return) and fixes the data order.
        checkpoint_dir: where ``last.ckpt`` (every ``checkpoint_every`` steps, default
            ``max(1, max_steps // 10)``, at least every ``checkpoint_seconds`` of wall time (default
            300; ``None``: by steps only), and at the end), ``step-*.ckpt`` (every ``keep_every``) and
            ``best.ckpt`` (lowest ``val_loss``) go. ``None`` = no checkpoints.
        resume: ``True`` resumes from ``checkpoint_dir/last.ckpt`` when it exists, a path resumes
            from that file, ``False`` starts afresh. Checkpoints load with ``weights_only=True``.
        strategy, devices, num_nodes, accelerator: passed to Lightning (Fabric or Trainer; "ddp" on CPU uses
            gloo; the script is re-launched once per extra process, so call ``fit`` under
            ``if __name__ == "__main__"``). ``num_nodes`` > 1: one copy of the script per node, started by the
            cluster (SLURM's ``srun``, ``torchrun --nnodes``; Lightning reads their environment variables).
        logger: "csv", "tensorboard", ``None``, or a Lightning ``Logger`` instance (or a list of them),
            used as given; the named ones log to ``log_dir`` (default ``checkpoint_dir/logs``); with
            neither directory nothing is logged.
        progress: rich progress bar; ``None`` = only when stderr is a terminal.
        val_data: optional Tensor / Dataset / DataLoader evaluated every ``val_every`` steps (default
            ``checkpoint_every``) with ``loss_fn`` (logged as ``val_loss``).
        callbacks: extra Lightning callbacks (their ``trainer`` argument is the Fabric loop under
            ``loop="fabric"``: see :class:`~scigen.core.train.loop.FabricLoop` for what it offers).
        early_stopping: a patience (int) or an :class:`EarlyStopping` (``patience``, ``min_delta``,
            ``restore_best``): stop when ``val_loss`` has not improved for that many validations and
            return the weights of the best one. Needs ``val_data``.
        collate_fn: batches the items of a Dataset (train and validation), e.g. padding variable-size
            graphs or molecules; default: row stacking for a Tensor, torch's default collate otherwise.
        num_workers: DataLoader worker processes loading the training batches of a Dataset (persistent;
            0 = in the training process). The batch order and exact resume are unchanged (see
            :func:`~scigen.core.train.data.train_loader`); worth it when a batch is read from disk (backed
            AnnData, memory-mapped arrays). Not used for a Tensor (indexed in memory) or a DataLoader (as given).
        loop: "fabric" runs the steps in :class:`~scigen.core.train.loop.FabricLoop` (Lightning Fabric underneath:
            the Trainer's step, hooks and checkpoints without its per-step machinery); "trainer" runs them on
            ``lightning.Trainer``; "auto" (default) takes "fabric" unless the strategy or a callback needs the
            Trainer (strategy objects, spawned processes, FSDP / DeepSpeed / XLA, Lightning's own callbacks).
            Both give the same per-step losses bit for bit and resume each other's checkpoints.
        rng: "global" (default): the loss draws its noise from torch's global generator, seeded by ``seed``;
            "per_sample": draws inside ``loss_fn`` that go through the engine (losses, time samplers, paths,
            samplers, :mod:`scigen.core.streams`) come from one counter-based stream per training example, keyed
            by ``(seed, step, dataset index)``: the run is then the same for any number of processes (two DDP
            ranks with batch ``B`` each equal one process with batch ``2B``) and any split of the batch. Needs
            ``data`` (and ``val_data``) as a Tensor or Dataset; each draw must have one row per example
            (or name its rows, see :class:`~scigen.core.streams.SampleStreams`).
        unused_parameters: some parameters may get no gradient in a step (a head used by part of the batch
            only, a parameter of another backend): under a DDP strategy ("ddp", "ddp_spawn", "ddp_fork",
            "ddp_notebook") Lightning's ``*_find_unused_parameters_true`` variant is taken, so each step finds them
            (:func:`ddp_strategy`). Ignored for one process.
        sync_batchnorm: "auto" (default): with several GPU processes, BatchNorm layers normalise with the statistics
            of the union batch (torch's ``SyncBatchNorm``, swapped in for the run and back after it); with several
            CPU processes each rank uses its own batch, with a warning (SyncBatchNorm needs GPUs); ``True``: sync, and
            an error on CPU processes; ``False``: never (:mod:`scigen.core.train.batchnorm`).

    Returns:
        :class:`FitResult`.

    Raises:
        NonFiniteLossError: the loss became NaN / inf (the step and batch index are named).
    """
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    if not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable (module, batch) -> Tensor, got {type(loss_fn).__name__}")
    if not isinstance(max_steps, int) or max_steps < 1:
        raise InvalidInputError(f"max_steps must be a positive int, got {max_steps!r}")
    if precision not in PRECISIONS:
        raise InvalidInputError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not lr > 0 or lr == float("inf"):
        raise InvalidInputError(f"lr must be a finite number > 0, got {lr!r}")
    if loop not in LOOPS:
        raise InvalidInputError(f"loop must be one of {LOOPS}, got {loop!r}")
    if rng not in RNG_MODES:
        raise InvalidInputError(f"rng must be one of {RNG_MODES}, got {rng!r}")
    if isinstance(num_nodes, bool) or not isinstance(num_nodes, int) or num_nodes < 1:
        raise InvalidInputError(f"num_nodes must be a positive int, got {num_nodes!r}")
    if not isinstance(compile, bool):
        raise InvalidInputError(f"compile must be True or False, got {compile!r}")

    check_num_workers(num_workers)
    sync_bn = plan_sync_batchnorm(module, sync_batchnorm, accelerator=accelerator, devices=devices,
                                  num_nodes=num_nodes)
    strategy = ddp_strategy(strategy, unused_parameters)
    train_data = data if isinstance(data, DataLoader) else as_dataset(data, "data")
    if batch_size is None:
        batch_size = (data.batch_size or 1) if isinstance(data, DataLoader) else min(len(train_data), 128)
    if not isinstance(batch_size, int) or batch_size < 1:
        raise InvalidInputError(f"batch_size must be a positive int, got {batch_size!r}")
    val = None
    if val_data is not None:
        val = val_data if isinstance(val_data, DataLoader) else as_dataset(val_data, "val_data")
    stopper = None
    if early_stopping is not None:
        if val is None:
            raise InvalidInputError("early_stopping needs val_data (it watches the validation loss)")
        stopper = early_stopping if isinstance(early_stopping, EarlyStopping) else EarlyStopping(early_stopping)

    ckpt_dir = Path(checkpoint_dir) if checkpoint_dir is not None else None
    every = checkpoint_every or max(1, max_steps // 10)
    logs = Path(log_dir) if log_dir is not None else (ckpt_dir / "logs" if ckpt_dir is not None else None)
    ckpt_path = _resolve_resume(resume, ckpt_dir)
    if progress is None:
        progress = sys.stderr.isatty()

    module.train()  # a module left in eval mode (e.g. after sampling) would train with eval-mode layers
    gm = GenerativeModule(
        module, loss_fn, train_data, batch_size=batch_size, max_steps=max_steps, val_data=val, lr=lr,
        optimizer=optimizer, weight_decay=weight_decay, lr_schedule=lr_schedule,
        warmup_steps=(0 if lr_schedule == "step" else max_steps // 20) if warmup_steps is None else warmup_steps,
        seed=seed, collate_fn=collate_fn, lr_step_size=lr_step_size, lr_gamma=lr_gamma, num_workers=num_workers,
        per_sample_rng=rng == "per_sample", compile=compile,
    )
    ema = EMA(ema_decay, warmup=ema_warmup) if ema_decay is not None else None
    ckpt_cb = (AtomicCheckpoint(ckpt_dir, every, keep_every, every_seconds=checkpoint_seconds)
               if ckpt_dir is not None else None)
    cbs: list[Callback] = [RNGState()] + ([ema] if ema else [])
    if val is not None:
        cbs.append(PeriodicValidation(val_every or every))
    if stopper is not None:  # after the validation and the EMA update of the same step
        stopper._target = (lambda: ema.ema_module) if ema is not None else (lambda: module)
        cbs.append(stopper)
    cbs += ([ckpt_cb] if ckpt_cb else []) + list(callbacks)
    log_every = max(1, min(50, max_steps // 10))
    why_not = fabric_unsupported(strategy, callbacks) if loop != "trainer" else None
    if why_not is not None and loop == "fabric":
        raise InvalidInputError(f"loop='fabric' cannot run this: {why_not}; use loop='trainer' (or 'auto')")

    # seed_everything seeds the global generators (and sets PL_GLOBAL_SEED): all put back on the way out
    synced = (synced_batchnorm(module, also=lambda: [ema.ema_module] if ema is not None and ema.ema_module is not None
                               else []) if sync_bn else contextlib.nullcontext())
    with synced, preserved_rng(), quiet_lightning(not progress), \
            tempfile.TemporaryDirectory(prefix="scigen-fit-") as scratch:
        root = str(ckpt_dir) if ckpt_dir is not None else scratch
        runner = None
        if loop != "trainer" and why_not is None:
            fabric, why_not = make_fabric(accelerator=accelerator, devices=devices, num_nodes=num_nodes, strategy=strategy,
                                          precision=precision, loggers=_logger(logger, logs) or [])
            if fabric is None and loop == "fabric":
                raise InvalidInputError(f"loop='fabric' cannot run this: {why_not}; use loop='trainer' (or 'auto')")
            if fabric is not None:
                runner = FabricLoop(fabric, gm, callbacks=cbs, max_steps=max_steps, grad_clip=grad_clip,
                                    log_every_n_steps=log_every, progress=bool(progress), default_root_dir=root)
        seed_everything(seed, workers=True, verbose=False)
        if runner is not None:
            runner.run(ckpt_path)
        else:
            if progress:
                cbs.append(RichProgressBar())
            runner = pl.Trainer(
                max_steps=max_steps, max_epochs=-1, accelerator=accelerator, devices=devices, num_nodes=num_nodes,
                strategy=strategy,
                precision=precision, gradient_clip_val=grad_clip or None, gradient_clip_algorithm="norm",
                logger=_logger(logger, logs), callbacks=cbs, enable_checkpointing=ckpt_cb is not None,
                enable_progress_bar=bool(progress), enable_model_summary=bool(progress), num_sanity_val_steps=0,
                limit_val_batches=0, log_every_n_steps=log_every, default_root_dir=root,
                use_distributed_sampler=isinstance(data, DataLoader),
            )
            runner.fit(gm, ckpt_path=ckpt_path, weights_only=True)

    if ema is not None:
        ema.ema_module.to(next((p.device for p in module.parameters()), torch.device("cpu")))
        # a drop-in for the trained module: same requires_grad flags, so fit(result.module, ...) continues
        for p_ema, p in zip(ema.ema_module.parameters(), module.parameters(), strict=True):
            p_ema.requires_grad_(p.requires_grad)
    return FitResult(
        module=ema.ema_module if ema is not None else module,
        ema_module=ema.ema_module if ema is not None else None,
        losses=list(gm.losses),
        val_losses=list(gm.val_losses),
        last_checkpoint=ckpt_cb.last_path if ckpt_cb is not None else None,
        best_checkpoint=ckpt_cb.best_path if ckpt_cb is not None else None,
        steps=int(runner.global_step),
        log_dir=_log_dir(logger, logs),
        best_step=stopper.best_step if stopper is not None else None,
        stopped_step=stopper.stopped_step if stopper is not None else None,
    )
