"""Silence Lightning's start-up banners and advisory warnings for non-interactive runs."""

from __future__ import annotations

import contextlib
import logging
import warnings

__all__ = ["quiet_lightning"]

_LOGGERS = (
    "lightning.pytorch.utilities.rank_zero",
    "lightning.pytorch.accelerators.cuda",
    "lightning.pytorch.trainer.connectors.checkpoint_connector",
    "lightning.fabric.utilities.seed",
    "lightning.fabric.utilities.rank_zero",
    "lightning.fabric.accelerators.cuda",
    "lightning.fabric.utilities.distributed",
    "lightning.pytorch.utilities.distributed",
)
_MESSAGES = (
    r".*does not have many workers.*",
    r".*resuming from a checkpoint that ended before the epoch ended.*",
    r".*number of training batches.*smaller than the logging interval.*",
    r".*`weights_only` was not set.*",
    r".*GPU available but not used.*",
    r".*sync_dist=True.*",
    r".*Total length of .* across ranks is zero.*",
    r".*Consider setting `persistent_workers=True`.*",
    r".*isn.t a list of int.*",
    r".*LeafSpec.*",
)


@contextlib.contextmanager
def quiet_lightning(enabled: bool = True):
    """Within the block, raise Lightning's info loggers to WARNING and ignore its advisory warnings."""
    if not enabled:
        yield
        return
    saved = {name: logging.getLogger(name).level for name in _LOGGERS}
    try:
        for name in _LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
        with warnings.catch_warnings():
            for msg in _MESSAGES:
                warnings.filterwarnings("ignore", message=msg)
            yield
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)
