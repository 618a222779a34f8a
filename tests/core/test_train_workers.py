"""``fit(..., num_workers=N)``: DataLoader worker processes load the batches; the order is the sampler's.

Checked against the definition of :class:`~scigen.core.train.StepBatchSampler` (batch ``k`` of rank ``r`` is
the ``k``-th block of the seeded per-pass permutations), not against another run of the same loader only.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from lightning.pytorch.callbacks import Callback
from torch import nn
from torch.utils.data import Dataset

from scigen.core.errors import InvalidInputError
from scigen.core.train import StepBatchSampler, fit

QUIET = {"progress": False, "logger": None}


class _Rows(Dataset):
    """Rows of a tensor plus their index (so a test sees which rows each step trained on)."""

    def __init__(self, data: torch.Tensor) -> None:
        self.data = data

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, i: int):
        return self.data[i], i


def _mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 8), nn.SiLU(), nn.Linear(8, 3))


class _Recorder:
    def __init__(self) -> None:
        self.seen: list[list[int]] = []

    def __call__(self, module, batch):
        x, idx = batch
        if module.training:
            self.seen.append(idx.tolist())
        noise = torch.randn_like(x) * (0.5 + float(np.random.rand())) * (0.5 + random.random())
        return ((module(x + noise) - x) ** 2).mean()


class _StopAt(Callback):
    def __init__(self, step: int) -> None:
        self.step = step

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if trainer.global_step >= self.step:
            trainer.should_stop = True


DATA = torch.randn(23, 3, generator=torch.Generator().manual_seed(3))
KW = dict(max_steps=9, batch_size=5, lr=3e-3, seed=7, **QUIET)


def test_workers_give_the_samplers_batches_and_the_same_weights():
    runs = {}
    for workers in (0, 2):
        rec = _Recorder()
        res = fit(_mlp(), rec, _Rows(DATA), num_workers=workers, **KW)
        runs[workers] = (rec.seen, res.losses, [p.detach().clone() for p in res.module.parameters()])
    sampler = StepBatchSampler(len(DATA), 5, seed=7)
    expected = [sampler.indices(k) for k in range(9)]  # the definition of the order, per step
    assert runs[0][0] == expected
    assert runs[2][0] == expected
    assert runs[2][1] == runs[0][1]  # bitwise: loading in workers changes nothing the training sees
    for p, q in zip(runs[0][2], runs[2][2], strict=True):
        assert torch.equal(p, q)


def test_workers_resume_exactly(tmp_path):
    full = fit(_mlp(), _Recorder(), _Rows(DATA), num_workers=2, checkpoint_dir=tmp_path / "a", checkpoint_every=3,
               **KW)
    part = fit(_mlp(), _Recorder(), _Rows(DATA), num_workers=2, checkpoint_dir=tmp_path / "b", checkpoint_every=3,
               callbacks=[_StopAt(4)], **KW)
    assert part.steps == 4
    rec = _Recorder()
    resumed = fit(_mlp(), rec, _Rows(DATA), num_workers=2, checkpoint_dir=tmp_path / "b", checkpoint_every=3,
                  resume=True, **KW)
    assert resumed.losses == full.losses
    sampler = StepBatchSampler(len(DATA), 5, seed=7)
    assert rec.seen == [sampler.indices(k) for k in range(4, 9)]  # the stream restarts at the restored step


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_bad_num_workers_is_named(bad):
    with pytest.raises(InvalidInputError, match="num_workers"):
        fit(_mlp(), _Recorder(), _Rows(DATA), num_workers=bad, **KW)


def test_training_options_pass_num_workers():
    from scigen.core.system import TrainingOptions

    assert TrainingOptions(num_workers=2).fit_kwargs()["num_workers"] == 2
    with pytest.raises(Exception, match="num_workers"):
        TrainingOptions(num_workers=-1)
