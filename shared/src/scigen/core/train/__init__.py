"""Training with Lightning underneath: ``fit(module, loss_fn, data, max_steps=...)``.

This is the only part of ``scigen.core`` that imports Lightning. See :func:`fit` for the guarantees
(exact resume, atomic checkpoints, non-finite guard, EMA, DDP) and :mod:`scigen.core.train.loop` for the
default loop (Lightning Fabric; ``loop="trainer"`` runs on Lightning's Trainer).
"""

from scigen.core.train.callbacks import EMA, AtomicCheckpoint, EarlyStopping, RNGState, atomic_save_checkpoint
from scigen.core.train.data import StepBatchSampler
from scigen.core.train.errors import NonFiniteLossError
from scigen.core.train.fit import FitResult, fit
from scigen.core.train.loop import FabricLoop
from scigen.core.train.module import GenerativeModule
from scigen.core.train.stages import FreezeCheck, Stage, split_budget

__all__ = [
    "EMA", "AtomicCheckpoint", "EarlyStopping", "FabricLoop", "FitResult", "FreezeCheck", "GenerativeModule",
    "NonFiniteLossError", "RNGState", "Stage", "StepBatchSampler", "atomic_save_checkpoint", "fit", "split_budget",
]
