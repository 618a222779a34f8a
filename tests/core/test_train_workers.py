"""``fit(..., num_workers=N)``: DataLoader worker processes load the batches; the order is the sampler's.

Checked against the definition of :class:`~scigen.core.train.StepBatchSampler` (batch ``k`` of rank ``r`` is
the ``k``-th block of the seeded per-pass permutations), not against another run of the same loader only.
"""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import Dataset

from scigen.core.errors import InvalidInputError
from scigen.core.train import StepBatchSampler, fit

from ._fit_helpers import QUIET, StopAt, mlp, noisy_mse


class _Rows(Dataset):
    """Rows of a tensor plus their index (so a test sees which rows each step trained on)."""

    def __init__(self, data: torch.Tensor) -> None:
        self.data = data

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, i: int):
        return self.data[i], i


class _Recorder:
    def __init__(self) -> None:
        self.seen: list[list[int]] = []

    def __call__(self, module, batch):
        x, idx = batch
        if module.training:
            self.seen.append(idx.tolist())
        return noisy_mse(module, x)


DATA = torch.randn(23, 3, generator=torch.Generator().manual_seed(3))
KW = dict(max_steps=9, batch_size=5, lr=3e-3, seed=7, **QUIET)


def test_workers_give_the_samplers_batches_and_the_same_weights():
    runs = {}
    for workers in (0, 2):
        rec = _Recorder()
        res = fit(mlp(width=8), rec, _Rows(DATA), num_workers=workers, **KW)
        runs[workers] = (rec.seen, res.losses, [p.detach().clone() for p in res.module.parameters()])
    sampler = StepBatchSampler(len(DATA), 5, seed=7)
    expected = [sampler.indices(k) for k in range(9)]  # the definition of the order, per step
    assert runs[0][0] == expected
    assert runs[2][0] == expected
    assert runs[2][1] == runs[0][1]  # bitwise: loading in workers changes nothing the training sees
    for p, q in zip(runs[0][2], runs[2][2], strict=True):
        assert torch.equal(p, q)


def test_workers_resume_exactly(tmp_path):
    full = fit(mlp(width=8), _Recorder(), _Rows(DATA), num_workers=2, checkpoint_dir=tmp_path / "a", checkpoint_every=3,
               **KW)
    part = fit(mlp(width=8), _Recorder(), _Rows(DATA), num_workers=2, checkpoint_dir=tmp_path / "b", checkpoint_every=3,
               callbacks=[StopAt(4)], **KW)
    assert part.steps == 4
    rec = _Recorder()
    resumed = fit(mlp(width=8), rec, _Rows(DATA), num_workers=2, checkpoint_dir=tmp_path / "b", checkpoint_every=3,
                  resume=True, **KW)
    assert resumed.losses == full.losses
    sampler = StepBatchSampler(len(DATA), 5, seed=7)
    assert rec.seen == [sampler.indices(k) for k in range(4, 9)]  # the stream restarts at the restored step


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_bad_num_workers_is_named(bad):
    with pytest.raises(InvalidInputError, match="num_workers"):
        fit(mlp(width=8), _Recorder(), _Rows(DATA), num_workers=bad, **KW)


def test_training_options_pass_num_workers():
    from scigen.core.system import TrainingOptions

    assert TrainingOptions(num_workers=2).fit_kwargs()["num_workers"] == 2
    with pytest.raises(Exception, match="num_workers"):
        TrainingOptions(num_workers=-1)
