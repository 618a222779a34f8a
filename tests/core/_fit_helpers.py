"""What the fit tests share: a small MLP, a loss that draws from every global RNG, a callback that stops a run."""

from __future__ import annotations

import random

import numpy as np
import torch
from lightning.pytorch.callbacks import Callback
from torch import nn

QUIET = {"progress": False, "logger": None}


def mlp(seed: int = 0, width: int = 16) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(3, width), nn.SiLU(), nn.Linear(width, 3))


def noisy_mse(module: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Denoising MSE whose noise uses torch's, numpy's and Python's global RNGs (resume must restore all three; a
    compiled step must draw what eager draws: the numpy and Python draws break the graph and run eagerly)."""
    noise = torch.randn_like(x) * (0.5 + float(np.random.rand())) * (0.5 + random.random())
    return ((module(x + noise) - x) ** 2).mean()


class StopAt(Callback):
    """Stops the run once ``step`` optimizer steps are done (an interrupted run)."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if trainer.global_step >= self.step:
            trainer.should_stop = True
