"""Tests of scigen.core.train.fit: exact resume, non-finite guard, atomic checkpoints, EMA, clipping."""

from __future__ import annotations

import copy
import csv
import math
import random
from pathlib import Path

import numpy as np
import pytest
import torch
from lightning.pytorch.callbacks import Callback
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from scigen.core.errors import InvalidInputError
from scigen.core.train import NonFiniteLossError, StepBatchSampler, atomic_save_checkpoint, fit
from scigen.core.train.module import lr_lambda

from ._fit_helpers import QUIET, StopAt, mlp, noisy_mse


def test_exact_resume_reproduces_uninterrupted_run(tmp_path):
    data = torch.randn(40, 3, generator=torch.Generator().manual_seed(1))
    kw = dict(max_steps=14, batch_size=6, lr=3e-3, ema_decay=0.8, lr_schedule="cosine", checkpoint_every=3,
              val_data=data[:10], **QUIET)
    full = fit(mlp(), noisy_mse, data, checkpoint_dir=tmp_path / "a", keep_every=7, **kw)
    assert len(full.losses) == 14 and full.steps == 14
    names = sorted(p.name for p in (tmp_path / "a").glob("*.ckpt"))
    assert names == ["best.ckpt", "last.ckpt", "step-00000007.ckpt", "step-00000014.ckpt"]
    best_step = min(full.val_losses, key=lambda sv: sv[1])[0]
    assert torch.load(full.best_checkpoint, weights_only=True)["global_step"] == best_step

    part = fit(mlp(), noisy_mse, data, checkpoint_dir=tmp_path / "b", callbacks=[StopAt(8)], **kw)
    assert part.steps == 8 and len(part.losses) == 8
    # resume into a differently initialised module: the weights must come from the checkpoint
    resumed = fit(mlp(seed=99), noisy_mse, data, checkpoint_dir=tmp_path / "b", resume=True, **kw)
    assert resumed.steps == 14
    assert resumed.losses == full.losses  # bitwise equal floats
    for p, q in zip(full.module.parameters(), resumed.module.parameters(), strict=True):
        assert torch.equal(p, q)  # EMA weights
    assert [v for _, v in resumed.val_losses] == [v for _, v in full.val_losses]

    # an explicit checkpoint path works too, and a different seed changes the run
    again = fit(mlp(seed=5), noisy_mse, data, checkpoint_dir=tmp_path / "d", resume=tmp_path / "a" / "step-00000007.ckpt", **kw)
    assert again.losses == full.losses
    other = fit(mlp(), noisy_mse, data, checkpoint_dir=tmp_path / "c", **{**kw, "seed": 1})
    assert other.losses != full.losses


def _same_weights(a: nn.Module, b: nn.Module) -> bool:
    return all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))


def test_fabric_and_trainer_loops_give_the_same_run_and_resume_each_others_checkpoints(tmp_path):
    """The Fabric loop performs the Trainer's step (same operations in the same order, same random numbers):
    per-step losses, validation losses and EMA weights agree bit for bit, and a run stopped on one loop and
    resumed on the other equals the uninterrupted run (checkpoints share the Trainer's layout)."""
    data = torch.randn(40, 3, generator=torch.Generator().manual_seed(1))
    kw = dict(max_steps=14, batch_size=6, lr=3e-3, ema_decay=0.8, lr_schedule="cosine", checkpoint_every=3,
              val_data=data[:10], **QUIET)
    fab = fit(mlp(), noisy_mse, data, checkpoint_dir=tmp_path / "f", loop="fabric", **kw)
    tra = fit(mlp(), noisy_mse, data, checkpoint_dir=tmp_path / "t", loop="trainer", **kw)
    assert fab.steps == tra.steps == 14 and fab.losses == tra.losses and fab.val_losses == tra.val_losses
    assert _same_weights(fab.module, tra.module)
    for first, then in (("fabric", "trainer"), ("trainer", "fabric")):
        ck = tmp_path / f"{first}-{then}"
        part = fit(mlp(), noisy_mse, data, checkpoint_dir=ck, loop=first, callbacks=[StopAt(8)], **kw)
        assert part.steps == 8
        resumed = fit(mlp(seed=99), noisy_mse, data, checkpoint_dir=ck, loop=then, **kw)
        assert resumed.steps == 14 and resumed.losses == fab.losses, (first, then)
        assert _same_weights(resumed.module, fab.module) and resumed.val_losses == fab.val_losses

    def loader():  # a fresh DataLoader per run: its shuffling generator advances as it is iterated
        return DataLoader(data, batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(0))

    runs = [fit(mlp(), lambda m, x: ((m(x) - x) ** 2).mean(), loader(), max_steps=7, precision="bf16-mixed",
                loop=loop, **QUIET) for loop in ("fabric", "trainer")]  # 7 steps: 5 per pass, a second pass
    assert runs[0].losses == runs[1].losses and _same_weights(runs[0].module, runs[1].module)


def test_the_loop_is_chosen_by_what_the_run_needs(tmp_path):
    from lightning.pytorch.callbacks import Timer

    from scigen.core.train.loop import make_fabric

    seen: list[str] = []

    class _Who(Callback):
        def on_train_start(self, trainer, pl_module):
            seen.append(type(trainer).__name__)

    loss = lambda m, x: ((m(x) - x) ** 2).mean()  # noqa: E731
    data = torch.randn(8, 3)
    fit(mlp(), loss, data, max_steps=2, callbacks=[_Who()], **QUIET)
    fit(mlp(), loss, data, max_steps=2, callbacks=[_Who()], loop="trainer", **QUIET)
    fit(mlp(), loss, data, max_steps=2, callbacks=[_Who(), Timer()], **QUIET)  # Lightning's own: the Trainer
    assert seen == ["FabricLoop", "Trainer", "Trainer"]
    with pytest.raises(InvalidInputError, match=r"loop='fabric' cannot run this: Lightning's own Timer"):
        fit(mlp(), loss, data, max_steps=2, callbacks=[Timer()], loop="fabric", **QUIET)
    with pytest.raises(InvalidInputError, match="loop must be one of"):
        fit(mlp(), loss, data, max_steps=2, loop="fast", **QUIET)
    fabric, why = make_fabric(accelerator="cpu", devices=2, strategy="ddp_spawn", precision="32-true", loggers=[])
    assert fabric is None and "runs on the Trainer" in why  # spawned processes: auto takes the Trainer

    class _Internals(Callback):
        def on_train_start(self, trainer, pl_module):
            trainer.fit_loop  # noqa: B018 - a Trainer internal the Fabric loop does not have

    with pytest.raises(AttributeError, match=r"trainer.fit_loop is not available.*loop='trainer'"):
        fit(mlp(), loss, data, max_steps=2, callbacks=[_Internals()], **QUIET)


class _WarmupLoss:
    """A loss with state: the first ``warm`` training calls use a different objective (like GIM's EM
    warm-up). Its counter is checkpointed through ``state_dict`` / ``load_state_dict``."""

    def __init__(self, warm: int) -> None:
        self.warm, self.calls = warm, 0

    def __call__(self, module, x):
        if module.training:
            self.calls += 1
        target = -x if self.calls <= self.warm else x
        return ((module(x) - target) ** 2).mean()

    def state_dict(self):
        return {"calls": self.calls}

    def load_state_dict(self, state):
        self.calls = int(state["calls"])


def test_a_stateful_loss_resumes_with_its_state(tmp_path):
    """The loss's state_dict travels in every checkpoint: stopped at step 3 and resumed to 10 with a fresh
    loss object, the warm-up (6 steps) is not replayed, and the run equals the uninterrupted one bit for
    bit; without the hook (a loss without state_dict) the resumed run differs, so the check can fail."""
    data = torch.randn(24, 3, generator=torch.Generator().manual_seed(3))
    kw = dict(max_steps=10, batch_size=6, lr=1e-2, checkpoint_every=3, **QUIET)
    full = fit(mlp(), _WarmupLoss(6), data, **kw)
    part_loss = _WarmupLoss(6)
    fit(mlp(), part_loss, data, checkpoint_dir=tmp_path / "a", callbacks=[StopAt(3)], **kw)
    assert part_loss.calls == 3
    ckpt = torch.load(tmp_path / "a" / "last.ckpt", weights_only=True)
    assert ckpt["global_step"] == 3 and ckpt["scigen"]["loss_state"] == {"calls": 3}
    resumed_loss = _WarmupLoss(6)
    resumed = fit(mlp(), resumed_loss, data, checkpoint_dir=tmp_path / "a", **kw)
    assert resumed_loss.calls == 10 and resumed.losses == full.losses
    for p, q in zip(full.module.parameters(), resumed.module.parameters(), strict=True):
        assert torch.equal(p, q)

    forgetful = _WarmupLoss(6)  # the same loss with its state dropped: the warm-up replays, the run differs
    fit(mlp(), _WarmupLoss(6), data, checkpoint_dir=tmp_path / "b", callbacks=[StopAt(3)], **kw)
    del ckpt["scigen"]["loss_state"]
    torch.save(ckpt, tmp_path / "b" / "last.ckpt")
    replayed = fit(mlp(), forgetful, data, checkpoint_dir=tmp_path / "b", **kw)
    assert forgetful.calls == 7 and replayed.losses[3:] != full.losses[3:]


def test_loss_state_in_a_checkpoint_needs_a_loss_that_takes_it(tmp_path):
    from scigen.core.errors import CheckpointError

    data = torch.randn(24, 3, generator=torch.Generator().manual_seed(3))
    kw = dict(max_steps=6, batch_size=6, checkpoint_every=3, **QUIET)
    fit(mlp(), _WarmupLoss(2), data, checkpoint_dir=tmp_path, callbacks=[StopAt(3)], **kw)
    with pytest.raises(CheckpointError, match="load_state_dict"):
        fit(mlp(), lambda m, x: ((m(x) - x) ** 2).mean(), data, checkpoint_dir=tmp_path, **kw)


def test_fit_leaves_the_callers_random_state_and_seed_environment_alone():
    import os

    data = torch.randn(24, 3, generator=torch.Generator().manual_seed(3))
    module = mlp()  # (seeds torch itself: built before the caller's seeds below)
    torch.manual_seed(7)
    np.random.seed(7)
    random.seed(7)
    env = {k: os.environ.get(k) for k in ("PL_GLOBAL_SEED", "PL_SEED_WORKERS")}
    expected = (torch.rand(2), np.random.rand(2), random.random())
    torch.manual_seed(7)
    np.random.seed(7)
    random.seed(7)
    fit(module, noisy_mse, data, max_steps=3, batch_size=6, seed=123, **QUIET)  # the loss draws from all three
    assert torch.equal(torch.rand(2), expected[0]) and np.array_equal(np.random.rand(2), expected[1])
    assert random.random() == expected[2]
    assert {k: os.environ.get(k) for k in env} == env


def test_nan_loss_stops_with_step_and_keeps_last_checkpoint(tmp_path):
    data = torch.randn(32, 3, generator=torch.Generator().manual_seed(2))
    calls = {"n": 0}

    def loss_fn(module, x):
        step = calls["n"]
        calls["n"] += 1
        loss = ((module(x) - x) ** 2).mean()
        return loss * float("nan") if step == 5 else loss

    with pytest.raises(NonFiniteLossError, match=r"at step 5 \(batch index 5\)") as info:
        fit(mlp(), loss_fn, data, max_steps=10, batch_size=4, checkpoint_dir=tmp_path, checkpoint_every=1, **QUIET)
    err = info.value
    assert err.step == 5 and err.batch_idx == 5 and math.isnan(err.value)
    assert err.checkpoint == str(tmp_path / "last.ckpt")
    ckpt = torch.load(tmp_path / "last.ckpt", weights_only=True)
    assert ckpt["global_step"] == 5
    assert all(torch.isfinite(v).all() for v in ckpt["state_dict"].values())
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind

    # resuming from the intact checkpoint with a healthy loss finishes the run
    res = fit(mlp(seed=3), lambda m, x: ((m(x) - x) ** 2).mean(), data, max_steps=10, batch_size=4,
              checkpoint_dir=tmp_path, **QUIET)
    assert res.steps == 10 and len(res.losses) == 10


def test_atomic_save_leaves_previous_file_intact_on_failure(tmp_path):
    target = tmp_path / "last.ckpt"
    target.write_bytes(b"GOOD")

    class _Strategy:
        def barrier(self, name=None):
            pass

    class _Crashing:
        is_global_zero = True
        strategy = _Strategy()

        def save_checkpoint(self, path):
            Path(path).write_bytes(b"HALF")
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_save_checkpoint(_Crashing(), target)
    assert target.read_bytes() == b"GOOD"


def test_fit_recovers_least_squares_solution():
    # linear regression y = X w* + b*: the fitted nn.Linear must approach numpy's lstsq solution
    g = torch.Generator().manual_seed(0)
    X = torch.randn(256, 3, generator=g)
    y = X @ torch.tensor([[1.5], [-2.0], [0.5]]) + 0.3 + 0.1 * torch.randn(256, 1, generator=g)
    A = np.hstack([X.numpy(), np.ones((256, 1))]).astype(np.float64)
    sol = np.linalg.lstsq(A, y.numpy().astype(np.float64), rcond=None)[0].ravel()
    lin = nn.Linear(3, 1)
    res = fit(lin, lambda m, b: ((m(b[0]) - b[1]) ** 2).mean(), TensorDataset(X, y), max_steps=300,
              batch_size=64, lr=5e-2, **QUIET)
    got = np.concatenate([lin.weight.detach().numpy().ravel(), lin.bias.detach().numpy()])
    assert np.allclose(got, sol, atol=0.05)
    assert np.mean(res.losses[-20:]) < 0.05 * np.mean(res.losses[:5])


@pytest.mark.parametrize("warmup", [False, True])
def test_ema_matches_manual_recursion(warmup):
    """θ̄_{n+1} = d_n·θ̄_n + (1 − d_n)·θ_{n+1}, with d_n = d (no warm-up) or min(d, (1 + n)/(10 + n))."""
    data = torch.randn(24, 3, generator=torch.Generator().manual_seed(4))
    net = mlp()
    trajectory = [copy.deepcopy(net.state_dict())]

    class _Record(Callback):
        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            trajectory.append({k: v.detach().cpu().clone() for k, v in pl_module.module.state_dict().items()})

    d = 0.7  # the warm-up rule (1 + n)/(10 + n) stays below 0.7 for n < 20: every step is warm-up
    res = fit(net, lambda m, x: ((m(x) - x) ** 2).mean(), data, max_steps=6, batch_size=8, ema_decay=d,
              ema_warmup=warmup, callbacks=[_Record()], **QUIET)
    ema = {k: v.clone() for k, v in trajectory[0].items()}
    for n, sd in enumerate(trajectory[1:]):
        dn = min(d, (1 + n) / (10 + n)) if warmup else d
        ema = {k: dn * ema[k] + (1 - dn) * sd[k] for k in ema}
    for k, v in res.ema_module.state_dict().items():
        assert torch.allclose(v, ema[k], atol=1e-6)
    assert res.module is res.ema_module
    assert not torch.equal(res.ema_module[0].weight, net[0].weight)


def test_ema_warmup_forgets_the_initialisation():
    """A parameter that jumps from 0 to 1 at the first step and then stays there: without warm-up its
    EMA after n steps is 1 − d**n (0.63 after 1,000 steps at 0.999, a third still the initial 0); with
    the warm-up it is 1 − ∏_k min(d, (1 + k)/(10 + k)) = 1 − 9!·n!/(n + 9)! while the cap is not reached."""
    from scigen.core.train import EMA

    class _Jump(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.zeros((), dtype=torch.float64))

    def run(warmup: bool, n: int) -> float:
        live = _Jump()
        cb = EMA(0.999, warmup=warmup)
        holder = nn.Module()
        holder.module = live
        cb.on_fit_start(None, holder)
        with torch.no_grad():
            live.w.fill_(1.0)
        for _ in range(n):
            cb.on_train_batch_end(None, holder, None, None, 0)
        return float(cb.ema_module.w)

    assert abs(run(False, 1000) - (1 - 0.999**1000)) < 1e-9
    closed = 1 - math.factorial(9) * math.factorial(989) / math.factorial(998)  # 989 steps, all below the cap
    assert abs(run(True, 989) - closed) < 1e-12
    assert 1 - run(True, 1000) < 1e-12  # 9!·1000!/1009! = 3.4e-22 of the start is left (float64 rounding)


def test_the_ema_result_can_be_trained_again_with_the_same_frozen_parameters():
    data = torch.randn(24, 3, generator=torch.Generator().manual_seed(4))
    net = mlp()
    net[0].bias.requires_grad_(False)  # a user's frozen parameter stays frozen in the EMA copy
    res = fit(net, lambda m, x: ((m(x) - x) ** 2).mean(), data, max_steps=3, batch_size=8, ema_decay=0.7, **QUIET)
    flags = [p.requires_grad for p in res.module.parameters()]
    assert flags == [p.requires_grad for p in net.parameters()] and not flags[1] and flags[0]
    frozen = res.module[0].bias.detach().clone()
    again = fit(res.module, lambda m, x: ((m(x) - x) ** 2).mean(), data, max_steps=3, batch_size=8, **QUIET)
    assert again.steps == 3 and torch.equal(again.module[0].bias, frozen)


def test_gradient_clipping_bounds_the_update_norm():
    lin = nn.Linear(4, 1, bias=False)
    nn.init.zeros_(lin.weight)
    data = torch.full((8, 4), 100.0)
    fit(lin, lambda m, x: (m(x) - 1000.0).pow(2).mean(), data, max_steps=1, batch_size=8, grad_clip=0.5,
        optimizer=lambda p: torch.optim.SGD(p, lr=1.0), **QUIET)
    # one SGD step with lr 1 moves the weights by the clipped gradient: norm exactly the clip value
    assert lin.weight.norm().item() == pytest.approx(0.5, rel=1e-4)


def test_lr_schedules_closed_form():
    f = lr_lambda("cosine", 100, 10)
    assert f(0) == pytest.approx(0.1) and f(9) == pytest.approx(1.0)
    assert f(10) == pytest.approx(1.0) and f(55) == pytest.approx(0.5) and f(100) == pytest.approx(0.0)
    w = lr_lambda("warmup", 100, 4)
    assert [w(s) for s in range(6)] == pytest.approx([0.25, 0.5, 0.75, 1.0, 1.0, 1.0])
    assert lr_lambda(None, 10, 0)(7) == 1.0


def test_step_lr_decay_halves_every_epoch_in_training():
    """``lr_schedule="step"``: the lr times ``lr_gamma`` every ``lr_step_size`` steps, one epoch of the data when
    not given (``lradj="type1"``: lr·0.5^(epoch−1)), no warm-up unless asked; the optimiser's lr is read
    at every step of a real fit."""
    f = lr_lambda("step", 100, 0, 3, 0.5)
    assert [f(s) for s in range(8)] == [1, 1, 1, 0.5, 0.5, 0.5, 0.25, 0.25]
    assert lr_lambda("step", 100, 2, 3, 0.1)(0) == 0.5 and lr_lambda("step", 100, 2, 3, 0.1)(5) == pytest.approx(0.1)
    with pytest.raises(InvalidInputError, match="lr_step_size"):
        lr_lambda("step", 10, 0, None)
    with pytest.raises(InvalidInputError, match="lr_gamma"):
        lr_lambda("step", 10, 0, 2, 1.5)

    seen = []

    class Record(Callback):
        def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
            seen.append(trainer.optimizers[0].param_groups[0]["lr"])

    data = torch.randn(10, 3)  # batch 4: an epoch is ceil(10 / 4) = 3 steps
    loss = lambda m, x: ((m(x) - x) ** 2).mean()  # noqa: E731
    fit(mlp(), loss, data, max_steps=8, batch_size=4, lr=0.2, lr_schedule="step", callbacks=[Record()], **QUIET)
    assert seen == pytest.approx([0.2, 0.2, 0.2, 0.1, 0.1, 0.1, 0.05, 0.05])
    seen.clear()
    fit(mlp(), loss, data, max_steps=5, batch_size=4, lr=0.2, lr_schedule="step", lr_step_size=2, lr_gamma=0.1,
        callbacks=[Record()], **QUIET)
    assert seen == pytest.approx([0.2, 0.2, 0.02, 0.02, 0.002])


def test_the_step_schedules_epoch_counts_every_process_batch():
    """Under DDP each step consumes ``batch_size`` rows on every rank: an epoch of 10 rows at batch 2 is
    ceil(10 / 4) = 3 steps on 2 ranks, not 5 (else the "step" schedule would decay twice as late)."""
    from types import SimpleNamespace

    from scigen.core.train.module import GenerativeModule

    gm = GenerativeModule(mlp(), lambda m, x: x.sum(), torch.randn(10, 3), batch_size=2, max_steps=10,
                          lr_schedule="step")
    gm._trainer = SimpleNamespace(world_size=2)
    f = gm.schedule_lambda()
    assert gm.lr_step_size == 3 and [f(s) for s in range(7)] == [1, 1, 1, 0.5, 0.5, 0.5, 0.25]
    gm1 = GenerativeModule(mlp(), lambda m, x: x.sum(), torch.randn(10, 3), batch_size=2, max_steps=10,
                           lr_schedule="step")
    gm1.schedule_lambda()
    assert gm1.lr_step_size == 5


def test_step_batch_sampler_passes_are_permutations_and_ranks_disjoint():
    s = StepBatchSampler(10, 5, seed=3)
    assert sorted(s.indices(0) + s.indices(1)) == list(range(10))
    assert sorted(s.indices(2) + s.indices(3)) == list(range(10))
    assert s.indices(0) + s.indices(1) != s.indices(2) + s.indices(3)
    late = StepBatchSampler(10, 5, seed=3, start_step=3)
    assert next(iter(late)) == s.indices(3)
    r0, r1 = StepBatchSampler(10, 5, seed=3, rank=0, world_size=2), StepBatchSampler(10, 5, seed=3, rank=1, world_size=2)
    assert sorted(r0.indices(0) + r1.indices(0)) == list(range(10))
    wide = StepBatchSampler(7, 10, seed=3)  # batches larger than the data: each spans two or three passes
    stream = [i for step in range(7) for i in wide.indices(step)]
    passes = [stream[k:k + 7] for k in range(0, 70, 7)]
    assert all(sorted(p) == list(range(7)) for p in passes) and len({tuple(p) for p in passes}) > 1


def test_loggers_write_files(tmp_path):
    data = torch.randn(16, 3)
    loss = lambda m, x: ((m(x) - x) ** 2).mean()  # noqa: E731
    res = fit(mlp(), loss, data, max_steps=10, batch_size=4, logger="csv", log_dir=tmp_path / "csv", progress=False)
    rows = list(csv.DictReader(open(next((tmp_path / "csv").rglob("metrics.csv")))))
    logged = [float(r["train_loss"]) for r in rows if r.get("train_loss")]
    assert len(logged) == 10
    assert np.allclose(logged, res.losses, rtol=1e-6)
    fit(mlp(), loss, data, max_steps=4, batch_size=4, logger="tensorboard", log_dir=tmp_path / "tb", progress=False)
    assert list((tmp_path / "tb").rglob("events.out.tfevents*"))


def test_dataloader_input_and_bf16_mixed():
    data = torch.randn(16, 3)
    loader = DataLoader(data, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(0))
    res = fit(mlp(), lambda m, x: ((m(x) - x) ** 2).mean(), loader, max_steps=6, precision="bf16-mixed", **QUIET)
    assert res.steps == 6 and all(math.isfinite(v) for v in res.losses)


def test_bad_inputs_name_the_argument(tmp_path):
    loss = lambda m, x: m(x).mean()  # noqa: E731
    with pytest.raises(ValueError, match="max_steps"):
        fit(mlp(), loss, torch.randn(4, 3), max_steps=0)
    with pytest.raises(TypeError, match="data must be a torch.Tensor, a Dataset or a DataLoader"):
        fit(mlp(), loss, [[1.0, 2.0, 3.0]], max_steps=1)
    bad = torch.randn(6, 3)
    bad[4, 1] = float("nan")
    with pytest.raises(ValueError, match=r"data contains NaN or inf \(first bad rows: \[4\]\)"):
        fit(mlp(), loss, bad, max_steps=1)
    with pytest.raises(FileNotFoundError, match="nope.ckpt"):
        fit(mlp(), loss, torch.randn(4, 3), max_steps=1, resume=tmp_path / "nope.ckpt")
    with pytest.raises(ValueError, match="optimizer"):
        fit(mlp(), loss, torch.randn(4, 3), max_steps=1, optimizer="lbfgs")
    with pytest.raises(ValueError, match="precision"):
        fit(mlp(), loss, torch.randn(4, 3), max_steps=1, precision="fp8")
    with pytest.raises(ValueError, match="lr_schedule"):
        fit(mlp(), loss, torch.randn(4, 3), max_steps=1, lr_schedule="linear")
    with pytest.raises(TypeError, match="loss_fn must return a scalar"):
        fit(mlp(), lambda m, x: m(x), torch.randn(4, 3), max_steps=1, **QUIET)


def test_collate_fn_batches_variable_length_items():
    """A Dataset of variable-length items reaches the loss through the user's padding collate."""
    from torch.nn.utils.rnn import pad_sequence

    class Ragged(torch.utils.data.Dataset):
        def __len__(self):
            return 12

        def __getitem__(self, i):
            return torch.arange(1.0, 2.0 + (i % 4))  # lengths 1..4

    seen: list[tuple[int, ...]] = []

    def collate(batch):
        return pad_sequence(batch, batch_first=True), torch.tensor([len(b) for b in batch])

    def loss_fn(m, batch):
        x, lengths = batch
        seen.append(tuple(x.shape))
        mask = torch.arange(x.shape[1])[None, :] < lengths[:, None]
        assert bool((x[~mask] == 0).all())  # padding, as the collate made it
        return ((m(x.unsqueeze(-1)).squeeze(-1) - x) ** 2)[mask].mean()

    fit(torch.nn.Linear(1, 1), loss_fn, Ragged(), max_steps=5, batch_size=4, logger=None, progress=False,
        collate_fn=collate)
    assert len(seen) == 5 and all(s[0] == 4 and 1 <= s[1] <= 4 for s in seen)


# ------------------------------------------------------------------ early stopping
class _Scalar(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros((), dtype=torch.float64))


def _pull(target):
    return lambda m, batch: (m.w - target) ** 2 + 0.0 * batch.sum()


def test_early_stopping_stops_after_patience_and_keeps_the_best_weights(tmp_path):
    """SGD on (w − 5)² from w=0 with lr 0.05: w_k = 5 − 5·0.9^k. The validation loss (w − 2)² is lowest
    at k = 5 (w = 2.0476); with patience 3 and a validation every step training stops at k = 8."""
    data = torch.zeros(4, 1, dtype=torch.float64)
    plain_sgd = lambda params: torch.optim.SGD(params, lr=0.05)  # noqa: E731 (no momentum)
    common = dict(max_steps=50, optimizer=plain_sgd, grad_clip=None, logger=None, progress=False)

    def run(**kw):
        m = _Scalar()
        res = fit(m, lambda mod, b: _pull(5.0)(mod, b) if mod.training else _pull(2.0)(mod, b), data,
                  val_data=data, val_every=1, early_stopping=3, **common, **kw)
        return res

    res = run()
    assert (res.best_step, res.stopped_step, res.steps) == (5, 8, 8)
    assert abs(float(res.module.w.detach()) - (5 - 5 * 0.9**5)) < 1e-12
    # with EMA, validation watches the trained weights and the EMA copy of the best step is returned
    ema = run(ema_decay=0.5, ema_warmup=False)
    e = 0.0
    for k in range(1, 6):
        e = 0.5 * e + 0.5 * (5 - 5 * 0.9**k)
    assert (ema.best_step, ema.stopped_step) == (5, 8)
    assert abs(float(ema.module.w.detach()) - e) < 1e-12
    # resuming an interrupted run stops at the same step with the same best weights
    m = _Scalar()
    part = fit(m, lambda mod, b: _pull(5.0)(mod, b) if mod.training else _pull(2.0)(mod, b), data,
               val_data=data, val_every=1, early_stopping=3, checkpoint_dir=tmp_path / "ck2", checkpoint_every=1,
               **{**common, "max_steps": 6})
    assert part.stopped_step is None and part.best_step == 5
    m2 = _Scalar()
    resumed = fit(m2, lambda mod, b: _pull(5.0)(mod, b) if mod.training else _pull(2.0)(mod, b), data,
                  val_data=data, val_every=1, early_stopping=3, checkpoint_dir=tmp_path / "ck2", checkpoint_every=1,
                  **common)
    assert (resumed.best_step, resumed.stopped_step, resumed.steps) == (5, 8, 8)
    assert float(resumed.module.w.detach()) == float(res.module.w.detach())


def test_early_stopping_bad_input():
    from scigen.core.errors import InvalidInputError
    from scigen.core.train import EarlyStopping

    with pytest.raises(InvalidInputError, match="val_data"):
        fit(_Scalar(), _pull(1.0), torch.zeros(2, 1, dtype=torch.float64), max_steps=2, early_stopping=2,
            logger=None, progress=False)
    with pytest.raises(InvalidInputError, match="patience"):
        EarlyStopping(0)


def test_tensorboard_logger_without_tensorboard_gives_the_install_hint(monkeypatch, tmp_path):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("tensorboard", "tensorboardX") else real(name, *a))
    with pytest.raises(InvalidInputError, match=r"pip install 'scigen-core\[tensorboard\]'"):
        fit(mlp(), lambda m, x: (m(x) ** 2).mean(), torch.randn(8, 3), max_steps=1, logger="tensorboard",
            log_dir=tmp_path, progress=False)


def test_the_fabric_loop_calls_torch_directly_only_where_fabric_would_only_forward():
    """The Fabric loop's short path (``loss.backward()`` and ``optimizer.step()`` called directly, issue 36.1) is
    taken only where Fabric's wrappers add nothing: a full-precision strategy with Lightning's base backward and
    step, and no Fabric callbacks. Mixed precision (its plugin steps the optimizer itself) and a Fabric callback
    keep Fabric's calls. The loop's results on the short path equal the Trainer's bit for bit (test above)."""
    from lightning.fabric import Fabric

    from scigen.core.train.loop import _identity_wrappers

    assert _identity_wrappers(Fabric(accelerator="cpu", devices=1))
    assert _identity_wrappers(Fabric(accelerator="cpu", devices=1, precision="64-true"))
    assert not _identity_wrappers(Fabric(accelerator="cpu", devices=1, precision="bf16-mixed"))

    class AfterStep:
        def on_after_optimizer_step(self, strategy, optimizer):
            pass

    assert not _identity_wrappers(Fabric(accelerator="cpu", devices=1, callbacks=[AfterStep()]))
