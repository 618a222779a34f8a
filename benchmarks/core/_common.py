"""Shared pieces of the engine benchmark: data split, W2, NFE counting, the model, plain training loops.

Nothing here is part of the library; it only sets up a fair comparison (same data, same model
initialisation, same optimiser, same noise) between scigen.core and its peers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from scigen.core.nn import ResidualMLP
from scigen.core.toy import toy_data

TRAIN_SEED, TEST_SEED, FLOOR_SEED, NOISE_SEED = 0, 1, 2, 3


@dataclass
class Split:
    """Training data, held-out data for W2, a second held-out draw (the metric's floor) and the
    sampling noise shared by every sampler of one dataset."""

    name: str
    train: Tensor
    test: Tensor
    floor: Tensor
    noise: Tensor


def make_split(name: str, n_train: int, n_samples: int) -> Split:
    test = toy_data(name, n_samples, seed=TEST_SEED)
    noise = torch.randn(test.shape, generator=torch.Generator().manual_seed(NOISE_SEED))
    return Split(name, toy_data(name, n_train, seed=TRAIN_SEED), test,
                 toy_data(name, n_samples, seed=FLOOR_SEED), noise)


def w2(x: Tensor, y: Tensor) -> float:
    """Exact 2-Wasserstein distance ``W2`` (not W2²) between the empirical measures of ``x`` and ``y``
    (uniform weights), via POT's network-simplex ``ot.emd2`` on squared Euclidean costs (float64).

    scigen.core.metrics has no W2 yet, so POT is called directly. A non-finite sample gives ``inf``.
    """
    import ot

    if not (torch.isfinite(x).all() and torch.isfinite(y).all()):
        return float("inf")
    a = x.detach().double().cpu().numpy()
    b = y.detach().double().cpu().numpy()
    m = ot.dist(a, b, metric="sqeuclidean")
    w = np.full(len(a), 1.0 / len(a))
    v = np.full(len(b), 1.0 / len(b))
    return float(np.sqrt(max(ot.emd2(w, v, m, numItermax=10_000_000), 0.0)))


class Counted:
    """Wrap a callable and count its calls (each call = one network evaluation of the whole batch)."""

    def __init__(self, fn: Callable):
        self.fn, self.n = fn, 0

    def __call__(self, *args):
        self.n += 1
        return self.fn(*args)


def make_model(dim: int, width: int, depth: int, seed: int) -> ResidualMLP:
    """The one MLP every contender trains: ``ResidualMLP(dim, width, depth)``, initialised from ``seed``."""
    torch.manual_seed(seed)
    return ResidualMLP(dim, width=width, depth=depth)


@dataclass
class TrainStats:
    steps: int
    seconds: float
    steady_steps_per_s: float
    losses: list[float] = field(default_factory=list)

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.seconds


def plain_loop(model: torch.nn.Module, loss_fn: Callable[[torch.nn.Module, Tensor], Tensor], data: Tensor, *,
               steps: int, batch_size: int, lr: float, seed: int, foreach: bool | None = None,
               fused: bool | None = None) -> TrainStats:
    """A bare PyTorch loop: Adam(lr), no clipping, no EMA; batches are consecutive slices of a per-epoch
    ``randperm`` of ``data`` (the same sampling scheme as fit()'s, without replacement within an epoch).
    ``foreach`` / ``fused``: Adam's implementation (``None``: torch's default, one tensor at a time on CPU; ``fused``:
    the fused kernel fit uses).

    ``steady_steps_per_s`` excludes the first 10 % of steps (allocator / first-call warm-up).
    """
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr, foreach=foreach, fused=fused)
    perm, pos, losses = torch.randperm(len(data), generator=g), 0, []
    warm = max(1, steps // 10)
    t0 = time.perf_counter()
    t_warm = t0
    for step in range(steps):
        if pos + batch_size > len(data):
            perm, pos = torch.randperm(len(data), generator=g), 0
        batch = data[perm[pos:pos + batch_size]]
        pos += batch_size
        loss = loss_fn(model, batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        if step + 1 == warm:
            t_warm = time.perf_counter()
    t1 = time.perf_counter()
    return TrainStats(steps, t1 - t0, (steps - warm) / max(t1 - t_warm, 1e-9), losses)


def fit_timed(model: torch.nn.Module, loss_fn, data: Tensor, *, steps: int, batch_size: int, lr: float,
              seed: int, loop: str = "auto") -> TrainStats:
    """scigen.core.train.fit with the plain loop's settings (Adam, no clipping, no EMA, constant lr, no
    logger / checkpoints / progress bar) on ``loop`` ("auto" = the Fabric loop, "trainer"). ``seconds``
    includes Lightning's set-up; the steady rate (from a callback) excludes the first 10 % of steps."""
    import lightning.pytorch as pl

    from scigen.core.train import fit

    warm = max(1, steps // 10)

    class _Clock(pl.Callback):
        t_warm = t_end = None

        def on_train_batch_end(self, trainer, *args):
            if trainer.global_step == warm:
                self.t_warm = time.perf_counter()
            self.t_end = time.perf_counter()

    clock = _Clock()
    t0 = time.perf_counter()
    res = fit(model, loss_fn, data, max_steps=steps, batch_size=batch_size, lr=lr, optimizer="adam",
              grad_clip=None, ema_decay=None, seed=seed, logger=None, progress=False, callbacks=[clock], loop=loop)
    t1 = time.perf_counter()
    steady = (res.steps - warm) / max(clock.t_end - clock.t_warm, 1e-9) if clock.t_warm else float("nan")
    return TrainStats(res.steps, t1 - t0, steady, list(res.losses))
