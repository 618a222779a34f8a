"""BatchNorm under data parallelism (issue 33): ``fit(sync_batchnorm=)`` decides when torch's ``SyncBatchNorm``
pools the statistics of the union batch, and swaps the layers in and back without changing the trained module."""

from __future__ import annotations

import copy
import warnings

import pytest
import torch
from torch import nn

from scigen.core.errors import InvalidInputError
from scigen.core.train import fit
from scigen.core.train.batchnorm import plan_sync_batchnorm, synced_batchnorm


def _net() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.ReLU(),
                         nn.Sequential(nn.Linear(8, 4), nn.BatchNorm1d(4, momentum=0.3)), nn.Linear(4, 1))


def test_the_plan_syncs_only_several_gpu_processes_and_says_so_on_cpu():
    net = _net()
    plan = lambda setting, acc, devices, nodes=1: plan_sync_batchnorm(  # noqa: E731
        net, setting, accelerator=acc, devices=devices, num_nodes=nodes)
    assert plan("auto", "gpu", 2) and plan(True, "cuda", 1, 2) and plan("auto", "gpu", [0, 1])
    assert not plan("auto", "gpu", 1) and not plan(True, "cpu", 1) and not plan(False, "gpu", 4)
    assert not plan_sync_batchnorm(nn.Linear(2, 2), True, accelerator="gpu", devices=4, num_nodes=1)  # no BatchNorm
    with pytest.warns(UserWarning, match=r"2 BatchNorm layer\(s\) \(1, 3.1\) are normalised with each CPU process"):
        assert not plan("auto", "cpu", 2)
    with pytest.raises(InvalidInputError, match="sync_batchnorm=True needs GPUs"):
        plan(True, "cpu", 2)
    with pytest.raises(InvalidInputError, match="sync_batchnorm must be one of"):
        plan("yes", "gpu", 2)


def test_synced_layers_train_as_batchnorm_in_one_process_and_are_swapped_back():
    """With one process ``SyncBatchNorm`` is BatchNorm: three SGD steps inside the swap give the weights and running
    statistics of the plain network bit for bit, and the layers are BatchNorm1d again afterwards."""
    plain, synced = _net(), _net()
    x, y = torch.randn(16, 3, generator=torch.Generator().manual_seed(1)), torch.randn(16, 1)

    def train(net):
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            ((net(x) - y) ** 2).mean().backward()
            opt.step()

    train(plain)
    weight = synced[1].weight
    with synced_batchnorm(synced):
        assert isinstance(synced[1], nn.SyncBatchNorm) and isinstance(synced[3][1], nn.SyncBatchNorm)
        assert synced[1].weight is weight  # the same parameter objects: the optimizer sees them
        train(synced)
    assert type(synced[1]) is nn.BatchNorm1d and type(synced[3][1]) is nn.BatchNorm1d
    assert synced[3][1].momentum == 0.3
    a, b = plain.state_dict(), synced.state_dict()
    assert list(a) == list(b)
    for k in a:
        assert torch.equal(a[k], b[k]), k


def test_fit_refuses_sync_on_cpu_processes_before_launching_and_is_unchanged_in_one_process():
    data = torch.randn(32, 3)
    loss = lambda net, batch: net(batch).pow(2).mean()  # noqa: E731
    with pytest.raises(InvalidInputError, match="sync_batchnorm=True needs GPUs"):
        fit(_net(), loss, data, max_steps=1, accelerator="cpu", devices=2, strategy="ddp", sync_batchnorm=True,
            logger=None)
    one, two = _net(), _net()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # one process: no warning
        r1 = fit(one, loss, data, max_steps=3, batch_size=8, logger=None, accelerator="cpu", sync_batchnorm=True)
    r2 = fit(two, loss, data, max_steps=3, batch_size=8, logger=None, accelerator="cpu", sync_batchnorm=False)
    assert r1.losses == r2.losses and type(r1.module[1]) is nn.BatchNorm1d
    assert copy.deepcopy(r1.module).state_dict().keys() == two.state_dict().keys()


def test_fit_swaps_the_layers_for_the_run_and_back_in_the_module_and_its_ema(monkeypatch):
    """The swap ``fit`` makes where the plan says sync (several GPUs), run here in one CPU process, where
    SyncBatchNorm computes BatchNorm: the same losses as without it, and BatchNorm1d layers in the trained module
    and in its EMA copy (made during the run)."""
    import sys

    fit_module = sys.modules["scigen.core.train.fit"]

    data = torch.randn(32, 3)
    loss = lambda net, batch: net(batch).pow(2).mean()  # noqa: E731
    plain = fit(_net(), loss, data, max_steps=3, batch_size=8, logger=None, accelerator="cpu", ema_decay=0.9)
    seen = []
    real = fit_module.synced_batchnorm

    def spy(module, **kw):
        seen.append(True)
        return real(module, **kw)

    monkeypatch.setattr(fit_module, "plan_sync_batchnorm", lambda *a, **k: True)
    monkeypatch.setattr(fit_module, "synced_batchnorm", spy)
    synced = fit(_net(), loss, data, max_steps=3, batch_size=8, logger=None, accelerator="cpu", ema_decay=0.9)
    assert seen and synced.losses == plain.losses
    for m in (synced.module, synced.ema_module):
        assert [type(x).__name__ for x in m.modules() if "BatchNorm" in type(x).__name__] == ["BatchNorm1d"] * 2
    for k, v in plain.ema_module.state_dict().items():
        assert torch.equal(v, synced.ema_module.state_dict()[k]), k
