"""``GenerativeModule``: the LightningModule that :func:`~scigen.core.train.fit` runs.

It wraps any ``nn.Module`` and a loss ``loss_fn(module, batch) -> scalar Tensor``; it owns the
optimizer / learning-rate schedule, the non-finite-loss guard, the per-step loss record (kept in
checkpoints so that a resumed run reports the whole history), and the data loaders whose order is a
function of the optimizer step (see :mod:`scigen.core.train.data`).
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable

import lightning.pytorch as pl
import torch
from torch import Tensor, nn
from torch.overrides import TorchFunctionMode
from torch.utils.data import DataLoader, Dataset

from scigen.core.errors import CheckpointError, InvalidInputError
from scigen.core.samplers._progress import bars_silenced, no_progress_bars
from scigen.core.streams import SampleStreams, sample_streams
from scigen.core.train.callbacks import AtomicCheckpoint
from scigen.core.train.data import (
    KeyedBatch,
    keyed_train_batches,
    keyed_val_batches,
    train_loader,
    val_loader,
)
from scigen.core.train.errors import NonFiniteLossError
from scigen.core.train.rng import get_rng_state, set_rng_state

__all__ = ["COMPILE_OPTIONS", "GenerativeModule", "LossStep", "compile_step", "fused_supported", "lr_lambda",
           "make_optimizer", "mixed_precision"]

OPTIMIZERS = ("adamw", "adam", "sgd")
_PLAIN = (str, int, float, bool, type(None))
SCHEDULES = (None, "constant", "warmup", "cosine", "step")


def lr_lambda(schedule: str | None, max_steps: int, warmup_steps: int, step_size: int | None = None,
              gamma: float = 0.5) -> Callable[[int], float]:
    """The learning-rate multiplier at step ``s``.

    ``None``/"constant": 1. "warmup": linear warm-up ``(s + 1) / warmup_steps`` then 1 (Goyal et al.
    2017). "cosine": the same warm-up, then ``½(1 + cos(π (s − w) / (max_steps − w)))`` down to 0
    (SGDR without restarts, Loshchilov & Hutter 2017, Eq. 5 with η_min = 0). "step": the same warm-up
    (none unless ``warmup_steps`` > 0), then ``gamma^⌊(s − w) / step_size⌋`` — step decay (the
    Time-Series-Library's ``lradj="type1"``: ``step_size`` one epoch, ``gamma`` 0.5, halving the lr every
    epoch, as PatchTST, NS-Transformer and D3U's official code train).
    """
    if schedule not in SCHEDULES:
        raise InvalidInputError(f"lr_schedule must be one of {SCHEDULES}, got {schedule!r}")
    if schedule == "step":
        if isinstance(step_size, bool) or not isinstance(step_size, int) or step_size < 1:
            raise InvalidInputError(f"lr_schedule='step' needs lr_step_size, a positive int, got {step_size!r}")
        if not 0 < gamma <= 1:
            raise InvalidInputError(f"lr_gamma must lie in (0, 1], got {gamma!r}")

    def f(s: int) -> float:
        if schedule in (None, "constant"):
            return 1.0
        if s < warmup_steps:
            return (s + 1) / warmup_steps
        if schedule == "warmup":
            return 1.0
        if schedule == "step":
            return gamma ** ((s - warmup_steps) // step_size)
        span = max(1, max_steps - warmup_steps)
        return 0.5 * (1.0 + math.cos(math.pi * min(1.0, (s - warmup_steps) / span)))

    return f


def fused_supported(params: list[Tensor]) -> bool:
    """Whether torch's fused Adam/AdamW kernel takes every one of ``params``: real floating-point tensors on a
    device with fused optimizer kernels (CPU, CUDA, ...); complex parameters are not."""
    from torch.utils._foreach_utils import _get_fused_kernels_supported_devices

    devices = _get_fused_kernels_supported_devices()
    return bool(params) and all(p.is_floating_point() and p.device.type in devices for p in params)


def mixed_precision(plugin) -> bool:
    """Whether a Lightning precision plugin runs automatic mixed precision (``"16-mixed"``, ``"bf16-mixed"``)."""
    return str(getattr(plugin, "precision", "32-true")).endswith("-mixed")


def make_optimizer(parameters, name: str | Callable, *, lr: float, weight_decay: float,
                   lr_lambda: Callable[[int], float], fused: bool = True):
    """The optimizer over the trainable ``parameters`` and its per-step ``LambdaLR`` schedule.

    Adam and AdamW use torch's *fused* kernel where it takes every parameter (:func:`fused_supported`) and ``fused``
    is true (``fit`` passes false under mixed precision, whose gradient clipping Lightning's Trainer refuses for an
    optimizer that unscales its own gradients); else the multi-tensor ``foreach`` one. The fused kernel makes one
    pass over each parameter's elements per step instead of the ~10 whole-tensor operations of torch's default
    loop, 3-7x faster per optimizer step on the CPU (``benchmarks/core/results/fit_throughput.md``). It is the
    same update up to float rounding (a few ulp after hundreds of steps, tested against the default loop),
    deterministic, and the same in every process (the DDP equality tests). SGD (momentum 0.9) uses ``foreach``: the same update, bit for bit, as torch's default loop.
    A callable ``name`` builds the optimizer as it likes.

    A checkpoint keeps its optimizer's settings: resuming one written with the ``foreach`` kernel continues with it
    (torch restores the parameter groups' flags), so the resumed run is the uninterrupted one, bit for bit.
    """
    params = [p for p in parameters if p.requires_grad]
    kernel = {"fused": True} if fused and fused_supported(params) else {"foreach": True}
    if callable(name):
        opt = name(params)
    elif name == "adamw":
        opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, **kernel)
    elif name == "adam":
        opt = torch.optim.Adam(params, lr=lr, weight_decay=weight_decay, **kernel)
    else:
        opt = torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=weight_decay, foreach=True)
    return opt, torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)


#: inductor options of ``fit(compile=True)``: random ops (noise, diffusion times, masks) call torch's own kernels
#: on the global generator, so a compiled run draws the eager run's random numbers (same losses, exact resume)
COMPILE_OPTIONS = {"fallback_random": True}


class LossStep(nn.Module):
    """``forward(batch)`` is ``loss_fn(module, batch)``: what Fabric wraps (and DDP synchronises) and what
    ``fit(compile=True)`` hands to ``torch.compile``.

    Its state dict is the GenerativeModule's (``module.*``); a compiled copy is never registered as a sub-module
    of anything that is saved, so checkpoints hold the plain keys (no ``_orig_mod.``) whether compiled or not.
    """

    def __init__(self, gm: GenerativeModule) -> None:
        super().__init__()
        self.module = gm.module
        object.__setattr__(self, "_gm", gm)  # not a sub-module: its parameters are ``module``'s

    def forward(self, batch) -> Tensor:
        return self._gm.call_loss(batch)


class _NoNoneGenerator(TorchFunctionMode):
    """Drops an explicit ``generator=None`` from torch calls inside a compiled step: with a size Dynamo traces as
    symbolic (a batch of graphs or molecules whose node count varies), ``torch.rand(n, generator=None)`` selects
    the ``.generator`` overload, whose kernel needs concrete sizes, and tracing fails ("SymIntArrayRef expected to
    contain only concrete integers", the error of pytorch/pytorch#121897 for ``out=``); without the argument it is
    the same draw from the global generator. Samplers and losses pass ``generator=generator`` everywhere, so this
    is done once here instead of at every call. Dynamo cannot trace numpy code under a torch function mode (it
    hands the mode its numpy wrappers): numpy-backed solvers in a loss (POT's exact OT,
    :func:`scigen.core.couplings.exact.emd_plan`) are marked ``torch.compiler.disable`` and run eagerly."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if "generator" in kwargs and kwargs["generator"] is None:
            kwargs = {k: v for k, v in kwargs.items() if k != "generator"}
        return func(*args, **kwargs)


#: one LossStep class per loss function (its code object): see :func:`compile_step`
_STEP_CLASSES: dict = {}


def _loss_code(loss_fn):
    fn = getattr(loss_fn, "__func__", loss_fn)  # a bound method: its function
    return getattr(fn, "__code__", None) or type(fn)  # a callable object: its class


def compile_step(gm: GenerativeModule) -> nn.Module:
    """``torch.compile(LossStep(gm))`` with :data:`COMPILE_OPTIONS` (TorchDynamo + Inductor; Ansel et al., "PyTorch
    2: Faster Machine Learning Through Dynamic Python Bytecode Transformation and Graph Compilation", ASPLOS 2024).

    Code Dynamo cannot trace (``.item()``, data-dependent Python branches) runs eagerly between the compiled graphs
    (graph breaks), so every loss compiles; how much of it is fused depends on the loss. Dynamo keeps its compiled
    graphs on the code object of the compiled ``forward`` and, after 8 recompilations of one code object, runs it
    eagerly for the rest of the process; so that a process training many systems (a sweep, a test session) keeps
    compiling, every loss function gets a ``LossStep`` whose ``forward`` is its own code object (a fit of the same
    loss on a new model of the same shapes reuses the compiled graph).
    """
    key = _loss_code(gm.loss_fn)
    cls = _STEP_CLASSES.get(key)
    if cls is None:
        f = LossStep.forward
        forward = types.FunctionType(f.__code__.replace(), f.__globals__, f.__name__, f.__defaults__, f.__closure__)
        cls = _STEP_CLASSES[key] = type("LossStep", (LossStep,), {"forward": forward, "__module__": __name__,
                                                                  "__qualname__": "LossStep"})
    return torch.compile(cls(gm), options=dict(COMPILE_OPTIONS))


def sum_over_ranks(strategy, values: list[float], device) -> list[float]:
    """``values`` summed over every process of ``strategy`` (Lightning's own all-reduce: ``all_reduce`` of a
    Fabric strategy, ``reduce`` of a Trainer strategy; one process: unchanged). Every rank must call it."""
    if getattr(strategy, "world_size", 1) <= 1:
        return list(values)
    t = torch.tensor(values, dtype=torch.float64 if device.type == "cpu" else torch.float32, device=device)
    reduce = getattr(strategy, "all_reduce", None) or strategy.reduce
    return [float(v) for v in reduce(t, reduce_op="sum").tolist()]


def mean_over_ranks(strategy, value: float, device) -> float:
    """The mean of ``value`` over the processes of ``strategy`` (:func:`sum_over_ranks`)."""
    world = getattr(strategy, "world_size", 1)
    return value if world <= 1 else sum_over_ranks(strategy, [value], device)[0] / world


class GenerativeModule(pl.LightningModule):
    """Train ``module`` by minimising ``loss_fn(module, batch)``.

    Args:
        module: any ``nn.Module`` (stored as ``self.module``; its weights are trained in place).
        loss_fn: ``loss_fn(module, batch) -> scalar Tensor``.
        train_data: a Dataset (batched by step, see :mod:`~scigen.core.train.data`) or a DataLoader
            (used as given).
        val_data: optional Dataset / DataLoader; ``val_loss`` is the mean of ``loss_fn`` over it,
            computed with the global RNG re-seeded to ``seed`` (common random numbers across
            evaluations) and the training RNG state restored afterwards.
    """

    def __init__(
        self, module: nn.Module, loss_fn: Callable[[nn.Module, object], Tensor], train_data: Dataset | DataLoader,
        *, batch_size: int, max_steps: int, val_data: Dataset | DataLoader | None = None, lr: float = 1e-3,
        optimizer: str | Callable = "adamw", weight_decay: float = 0.0, lr_schedule: str | None = None,
        warmup_steps: int = 0, seed: int = 0, collate_fn: Callable | None = None, lr_step_size: int | None = None,
        lr_gamma: float = 0.5, num_workers: int = 0, per_sample_rng: bool = False, compile: bool = False,
    ) -> None:
        super().__init__()
        if per_sample_rng and isinstance(train_data, DataLoader):
            raise InvalidInputError("rng='per_sample' needs the training data as a Tensor or Dataset (the keys of the "
                                    "random streams are dataset indices); a DataLoader's batches carry no indices")
        if per_sample_rng and isinstance(val_data, DataLoader):
            raise InvalidInputError("rng='per_sample' needs val_data as a Tensor or Dataset, not a DataLoader")
        self.per_sample_rng = per_sample_rng
        if not isinstance(optimizer, str) and not callable(optimizer):
            raise TypeError(f"optimizer must be one of {OPTIMIZERS} or a callable params -> Optimizer")
        if isinstance(optimizer, str) and optimizer not in OPTIMIZERS:
            raise InvalidInputError(f"optimizer must be one of {OPTIMIZERS} or a callable, got {optimizer!r}")
        self.lr_step_size = lr_step_size  # None with "step": one epoch, known once the world size is (optimizers)
        self._schedule = (lr_schedule, max_steps, warmup_steps, lr_gamma)
        if lr_schedule != "step" or lr_step_size is not None:
            self._lr_lambda = lr_lambda(lr_schedule, max_steps, warmup_steps, lr_step_size, lr_gamma)
        self.module = module
        self.loss_fn = loss_fn
        self.train_data, self.val_data = train_data, val_data
        self.batch_size, self.seed = batch_size, seed
        self.collate_fn = collate_fn
        self.num_workers = num_workers
        self.lr, self.optimizer_name, self.weight_decay, self.lr_schedule = lr, optimizer, weight_decay, lr_schedule
        self.losses: list[float] = []
        self.val_losses: list[tuple[int, float]] = []
        self.use_compile = bool(compile)
        # the compiled training step of the Trainer loop (built at its first step): a plain attribute, not a
        # sub-module, so the state dict never holds its ``_orig_mod.`` keys
        object.__setattr__(self, "_compiled_step", None)

    def __setattr__(self, name: str, value) -> None:
        # Lightning sets plain attributes (``_current_fx_name`` and the like) around every hook, a dozen
        # times a step; nn.Module.__setattr__ checks each against Parameter / Module / buffer first. Plain
        # values under names that are none of those take the direct path (same result, ~0.3 ms a step less).
        if type(value) in _PLAIN and name not in self.__dict__.get("_parameters", ()) \
                and name not in self.__dict__.get("_modules", ()) and name not in self.__dict__.get("_buffers", ()):
            object.__setattr__(self, name, value)
        else:
            super().__setattr__(name, value)

    # ---- data -----------------------------------------------------------------------------------
    def train_dataloader(self) -> DataLoader:
        if isinstance(self.train_data, DataLoader):
            return self.train_data
        # built after checkpoint restore: start the step-indexed stream at the restored step
        loader = train_loader(self.train_data, self.batch_size, seed=self.seed, start_step=self.trainer.global_step,
                              rank=self.trainer.global_rank, world_size=self.trainer.world_size,
                              collate_fn=self.collate_fn, num_workers=self.num_workers)
        return keyed_train_batches(loader) if self.per_sample_rng else loader

    def val_batches(self) -> DataLoader | list:
        if self.val_data is None:
            return []
        if isinstance(self.val_data, DataLoader):
            return self.val_data
        loader = val_loader(self.val_data, self.batch_size, collate_fn=self.collate_fn)
        return keyed_val_batches(loader) if self.per_sample_rng else loader

    # ---- optimisation ---------------------------------------------------------------------------
    def _epoch_steps(self) -> int:
        """Optimizer steps per pass over the training data: every rank takes its own batch each step."""
        if isinstance(self.train_data, DataLoader):
            return max(1, len(self.train_data))
        world = getattr(self._trainer, "world_size", 1) if self._trainer is not None else 1
        return max(1, -(-len(self.train_data) // (self.batch_size * max(1, int(world)))))

    def schedule_lambda(self) -> Callable[[int], float]:
        """The learning-rate multiplier per step (:func:`lr_lambda`); the "step" schedule's default period, one
        epoch, is resolved here, once the processes are known (an epoch is shorter on more ranks)."""
        schedule, max_steps, warmup_steps, gamma = self._schedule
        if schedule == "step" and self.lr_step_size is None:
            self.lr_step_size = self._epoch_steps()
            self._lr_lambda = lr_lambda(schedule, max_steps, warmup_steps, self.lr_step_size, gamma)
        return self._lr_lambda

    def configure_optimizers(self):
        opt, sched = make_optimizer(self.parameters(), self.optimizer_name, lr=self.lr,
                                    weight_decay=self.weight_decay, lr_lambda=self.schedule_lambda(),
                                    fused=not mixed_precision(self.trainer.precision_plugin))
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step", "frequency": 1}}

    def call_loss(self, batch) -> Tensor:
        """``loss_fn(module, batch)``; a :class:`KeyedBatch` (``rng="per_sample"``) is unwrapped and its draws come
        from per-sample streams: row i's draws depend on (seed, step, dataset index i) only."""
        if isinstance(batch, KeyedBatch):
            with sample_streams(SampleStreams(self.seed * 2**32 + batch.step + 1, batch.keys)):
                return self.loss_fn(self.module, batch.batch)
        return self.loss_fn(self.module, batch)

    def _loss(self, batch, step: nn.Module | None = None) -> Tensor:
        """The scalar loss of ``batch``: :meth:`call_loss`, or ``step(batch)`` (a :class:`LossStep`, wrapped by
        Fabric / DDP / ``torch.compile``) when given; its type and size checked. Always inside
        :func:`~scigen.core.samplers.no_progress_bars` (a sampler inside the loss never draws a bar into the
        training run), entered here unless the caller already is (the Fabric loop enters it once per run)."""
        if not bars_silenced():
            with no_progress_bars():
                return self._loss(batch, step)
        if step is None:
            loss = self.call_loss(batch)
        elif self.use_compile:
            with _NoNoneGenerator():
                loss = step(batch)
        else:
            loss = step(batch)
        return self.checked_loss(loss)

    @staticmethod
    def checked_loss(loss) -> Tensor:
        """``loss`` as a 0-d Tensor; a TypeError naming what ``loss_fn`` returned when it is not a scalar Tensor."""
        if not isinstance(loss, Tensor) or loss.numel() != 1:
            raise TypeError(
                f"loss_fn must return a scalar torch.Tensor, got {type(loss).__name__}"
                f"{' of shape ' + str(tuple(loss.shape)) if isinstance(loss, Tensor) else ''}"
            )
        return loss if loss.ndim == 0 else loss.reshape(())

    def training_step(self, batch, batch_idx: int) -> Tensor:
        if self.use_compile and self._compiled_step is None:
            object.__setattr__(self, "_compiled_step", compile_step(self))
        loss = self._loss(batch, self._compiled_step)
        # the mean over the ranks (each rank's loss is the mean over its batch): the loss of the union batch,
        # the same on every rank; one non-finite rank makes it non-finite everywhere, so all ranks stop together
        value = mean_over_ranks(self.trainer.strategy, float(loss.detach().float().item()), loss.device)
        if not math.isfinite(value):
            ckpts = [cb.last_path for cb in self.trainer.callbacks if isinstance(cb, AtomicCheckpoint)]
            ckpt = str(ckpts[0]) if ckpts and ckpts[0] is not None else None
            raise NonFiniteLossError(self.global_step, batch_idx, value, ckpt)
        self.losses.append(value)
        if self._log_this_step():
            self.log("train_loss", loss.detach(), on_step=True, prog_bar=True, batch_size=self.batch_size)
            self.log("lr", self.trainer.optimizers[0].param_groups[0]["lr"], on_step=True, batch_size=self.batch_size)
        return loss

    def _log_this_step(self) -> bool:
        """Whether this step's ``self.log`` reaches anything: every step under a progress bar, else only
        the steps the loggers write (every ``log_every_n_steps``; none when it is 0, as Lightning), and never
        without a logger. Lightning's ``self.log`` costs about 0.8 ms a call (its metric objects are copied
        and moved every time), four times a tiny model's whole step, so the steps nobody reads are not logged."""
        trainer = self.trainer
        if trainer.progress_bar_callback is not None:
            return True
        if not trainer.loggers or trainer.log_every_n_steps == 0:
            return False
        return (self.global_step + 1) % trainer.log_every_n_steps == 0

    # ---- validation (does not disturb the training RNG stream) -----------------------------------
    @torch.no_grad()
    def validation_loss(self) -> float:
        """Mean of ``loss_fn`` over the validation batches (of every rank under DDP), in eval mode, under the
        seeded RNG.

        The global RNG is re-seeded to ``seed`` (common random numbers across evaluations: the same
        noise / times every time) and the training RNG state is restored afterwards, so validating
        never changes the training run.
        """
        saved = get_rng_state()
        was_training = self.module.training
        try:
            torch.manual_seed(self.seed)
            self.module.eval()
            total, count = 0.0, 0
            for batch in self.val_batches():
                batch = self.trainer.strategy.batch_to_device(batch)
                with self.trainer.precision_plugin.forward_context():
                    total += float(self._loss(batch).float().item())
                count += 1
            # over all ranks' batches: ranks holding different validation data agree on one value (and so on
            # early stopping); ranks holding the same data get the one-process value
            total, count = sum_over_ranks(self.trainer.strategy, [total, float(count)],
                                          next(self.module.parameters(), torch.empty(0)).device)
            return total / max(count, 1.0)
        finally:
            self.module.train(was_training)
            set_rng_state(saved)

    # ---- checkpoint extras ----------------------------------------------------------------------
    # A stateful loss (e.g. a warm-up counter) keeps its state in the checkpoint: when ``loss_fn`` has
    # ``state_dict()`` (tensors, numbers, strings, nested dicts/lists: what ``weights_only`` loads) and
    # ``load_state_dict(state)``, the state is saved with every checkpoint and restored on resume, so a
    # resumed run continues the loss exactly where the killed one stopped.
    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint["scigen"] = {
            "format": 1,
            "losses": torch.tensor(self.losses, dtype=torch.float64),
            "val_losses": torch.tensor(self.val_losses, dtype=torch.float64).reshape(-1, 2),
        }
        if callable(getattr(self.loss_fn, "state_dict", None)):
            checkpoint["scigen"]["loss_state"] = self.loss_fn.state_dict()

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        extra = checkpoint.get("scigen", {})
        if "losses" in extra:
            self.losses = [float(v) for v in extra["losses"].tolist()]
        if "val_losses" in extra:
            self.val_losses = [(int(s), float(v)) for s, v in extra["val_losses"].tolist()]
        if "loss_state" in extra:
            if not callable(getattr(self.loss_fn, "load_state_dict", None)):
                raise CheckpointError("the checkpoint holds the state of a stateful loss (loss_state), but this "
                                      f"loss_fn ({type(self.loss_fn).__name__}) has no load_state_dict to take it")
            self.loss_fn.load_state_dict(extra["loss_state"])
