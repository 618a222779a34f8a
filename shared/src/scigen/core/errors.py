"""Exceptions shared by the engine and every domain package.

Each names the file, field, shape or value at fault, so a user can fix the input without reading a
traceback from deep inside torch.
"""

from __future__ import annotations


class ScigenError(Exception):
    """Base class of every error scigen raises on purpose."""


class InvalidInputError(ScigenError, ValueError):
    """User input (an array, a file, a config field) that does not meet the documented contract."""


class NotTrainedError(InvalidInputError):
    """A verb that needs a trained model (sample, evaluate, predict) was called on an untrained one."""


class CheckpointError(ScigenError, ValueError):
    """A saved system that cannot be loaded: missing, truncated, foreign, or from a newer format."""


class UnknownNameError(ScigenError, KeyError):
    """A name (system, domain, dataset, method) that is not registered; the message lists valid ones."""

    def __str__(self) -> str:  # KeyError quotes its message; show it plainly instead
        return str(self.args[0]) if self.args else ""


class FrozenParameterError(ScigenError, RuntimeError):
    """A staged fit changed (or sent a gradient to) a parameter its stage declares frozen."""
