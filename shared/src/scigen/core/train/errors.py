"""Errors raised by :func:`scigen.core.train.fit`."""

from __future__ import annotations

from scigen.core.errors import ScigenError

__all__ = ["NonFiniteLossError"]


class NonFiniteLossError(ScigenError, FloatingPointError):
    """The training loss became NaN or infinite.

    Attributes:
        step: the 0-based optimizer step whose loss was non-finite (``step`` steps had completed).
        batch_idx: Lightning's batch index within the epoch at that step.
        value: the loss value (``nan``, ``inf`` or ``-inf``).
        checkpoint: the last good checkpoint on disk (``None`` when checkpointing was off).
    """

    def __init__(self, step: int, batch_idx: int, value: float, checkpoint: str | None = None) -> None:
        self.step, self.batch_idx, self.value, self.checkpoint = step, batch_idx, value, checkpoint
        where = f"; the last good checkpoint is {checkpoint}" if checkpoint else ""
        super().__init__(
            f"non-finite training loss ({value}) at step {step} (batch index {batch_idx}); training stopped"
            f"{where}. Lower the learning rate, check the data for NaN/inf, or tighten grad_clip."
        )
