"""Stages in the engine (``System.train_stages``): freezing, the one budget rule, per-stage history, exact resume.

The toy system has two one-weight sub-modules ``a`` and ``b.0`` and the loss ``(a − m)² + (b − 2m)²`` on
batches of the constant ``m = 3``; trained by heavy-ball SGD (momentum 0.9, no clipping) its per-step losses
are known in closed form, stage by stage (each stage starts a fresh optimizer)."""

from __future__ import annotations

import json
import os
from typing import Any, ClassVar

import pytest
import torch
from lightning.pytorch.callbacks import Callback
from torch import nn

from scigen.core.errors import CheckpointError, FrozenParameterError, InvalidInputError
from scigen.core.system import System, SystemConfig, TrainingOptions, training_defaults
from scigen.core.train.stages import Stage, split_budget

LR = 0.05


class TwoPartConfig(SystemConfig):
    train: TrainingOptions = training_defaults(max_steps=20, batch_size=4, lr=LR, grad_clip=None, optimizer="sgd")
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}


class TwoPartNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(1, 1, bias=False)
        self.b = nn.Sequential(nn.Linear(1, 1, bias=False), nn.Dropout(0.5))
        nn.init.zeros_(self.a.weight)
        nn.init.zeros_(self.b[0].weight)


class TwoPart(System):
    domain = "testing"
    name = "twopart"
    Config = TwoPartConfig

    def build_network(self):
        return TwoPartNet()

    def training_loss(self, network, batch):
        m = batch.mean()
        return (network.a.weight[0, 0] - m) ** 2 + (network.b[0].weight[0, 0] - 2 * m) ** 2

    def fit_options(self):
        return {"logger": None, "progress": False}

    def sample(self, *a, **k):
        raise NotImplementedError

    def evaluate(self, data, **k):
        return {}


DATA = torch.full((16, 1), 3.0)


def _heavy_ball(d: float, steps: int) -> list[float]:
    """Successive values of ``d`` (before each step) under ``v ← 0.9 v + 2d, d ← d − lr·v`` from ``v = 0``."""
    v, out = 0.0, []
    for _ in range(steps):
        out.append(d)
        v = 0.9 * v + 2 * d
        d = d - LR * v
    out.append(d)
    return out


def _plan(share: float = 0.4, **kw) -> list[Stage]:
    return [Stage("a", ("a",), share=share, **kw), Stage("b", ("b",))]


def test_each_stage_trains_only_its_modules_with_the_closed_form_losses():
    m = TwoPart()
    trained = m.train_stages(DATA, _plan(), max_steps=20)
    assert trained == {"a": 8, "b": 12} and m.metadata["stage_steps"] == trained
    da = _heavy_ball(-3.0, 8)  # a − 3 while stage a trains; b stays at 0, so (b − 6)² = 36
    db = _heavy_ball(-6.0, 12)  # b − 6 while stage b trains; a stays where stage a left it
    expected = [d * d + 36.0 for d in da[:-1]] + [da[-1] ** 2 + d * d for d in db[:-1]]
    assert m.history.losses == pytest.approx(expected, rel=1e-5)
    assert m.history.stages == [("a", 0, 8), ("b", 8, 20)]
    assert [m.history.stage_of(s) for s in (0, 7, 8, 19, 20)] == ["a", "a", "b", "b", None]
    assert m.history.stage_losses("b") == pytest.approx(expected[8:], rel=1e-5)
    assert float(m.network.a.weight.detach()) == pytest.approx(3.0 + da[-1], rel=1e-5)
    assert float(m.network.b[0].weight.detach()) == pytest.approx(6.0 + db[-1], rel=1e-5)
    assert all(p.requires_grad for p in m.network.parameters())  # unfrozen afterwards


def test_frozen_parameters_are_bit_identical_after_a_stage():
    m = TwoPart()
    torch.nn.init.normal_(m.network.b[0].weight, generator=torch.Generator().manual_seed(3))
    before = m.network.b[0].weight.detach().clone()
    m.train_stages(DATA, [Stage("a", ("a",))], max_steps=5)
    after = m.network.b[0].weight.detach()
    assert after.view(torch.int32).tolist() == before.view(torch.int32).tolist()
    assert float(m.network.a.weight.detach()) != 0.0


def test_a_stage_that_touches_a_frozen_parameter_is_refused():
    def writes(net, batch):  # changes the frozen b in place
        with torch.no_grad():
            net.b[0].weight.add_(1.0)
        return (net.a.weight[0, 0] - batch.mean()) ** 2

    def sends_a_gradient(net, batch):
        net.b[0].weight.grad = torch.ones_like(net.b[0].weight)
        return (net.a.weight[0, 0] - batch.mean()) ** 2

    with pytest.raises(FrozenParameterError, match=r"stage 'a' changed frozen parameters \['b.0.weight'\]"):
        TwoPart().train_stages(DATA, [Stage("a", ("a",), loss=writes)], max_steps=2)
    with pytest.raises(FrozenParameterError, match=r"frozen parameters \['b.0.weight'\] received a gradient"):
        TwoPart().train_stages(DATA, [Stage("a", ("a",), loss=sends_a_gradient)], max_steps=2)


def test_frozen_eval_keeps_the_frozen_modules_in_eval_mode():
    modes = []

    def loss(net, batch):
        modes.append((net.a.training, net.b.training, net.b[1].training))
        return (net.a.weight[0, 0] - batch.mean()) ** 2

    TwoPart().train_stages(DATA, [Stage("a", ("a",), loss=loss, frozen_eval=True)], max_steps=2)
    assert modes == [(True, False, False)] * 2
    modes.clear()
    # a validation pass after every step puts the whole network in eval() and back in train(): the frozen part
    # is in eval() again at the next step
    TwoPart().train_stages(DATA, [Stage("a", ("a",), loss=loss, frozen_eval=True)], max_steps=4, val_data=DATA[:4],
                           val_every=1)
    training_calls = [m for m in modes if m[0]]
    assert len(training_calls) == 4 and len(modes) > 4  # 4 training steps; the validation calls in eval mode
    assert training_calls == [(True, False, False)] * 4
    assert all(m == (False, False, False) for m in modes if not m[0])
    modes.clear()
    TwoPart().train_stages(DATA, [Stage("a", ("a",), loss=loss)], max_steps=2)
    assert modes == [(True, True, True)] * 2


@pytest.mark.parametrize("share", [0.0, 0.1, 0.25, 0.4, 0.5, 0.6667, 0.95])
def test_the_budget_split_sums_to_max_steps_exactly(share):
    for budget in range(2, 120):
        a, b = split_budget(_plan(share), budget)
        assert a + b == budget
        assert a == max(1, min(budget - 1, round(share * budget)))  # clamped to leave b its one step
    for budget in range(1, 60):  # a rest stage first, a share stage with min_steps=0 after it
        plan = [Stage("est", ("a",)), Stage("flow", ("b",), share=share, min_steps=0)]
        est, flow = split_budget(plan, budget)
        assert est + flow == budget and flow == min(budget - 1, round(share * budget))


def test_budget_rule_values_and_refusals():
    assert split_budget(_plan(0.5), 5) == [2, 3]  # round half to even: 2.5 -> 2
    assert split_budget(_plan(0.5), 7) == [4, 3]  # 3.5 -> 4
    assert split_budget([Stage("a", ("a",), steps=3), Stage("b", ("b",))], 10) == [3, 7]
    assert split_budget([Stage("a", ("a",), steps=0), Stage("b", ("b",))], 4) == [0, 4]
    with pytest.raises(InvalidInputError, match=r"max_steps must be >= 2 for the stages \(a >= 1 \+ b >= 1\), got 1"):
        split_budget(_plan(), 1)
    with pytest.raises(InvalidInputError, match="at most one stage may take the rest"):
        split_budget([Stage("a", ("a",)), Stage("b", ("b",))], 4)
    with pytest.raises(InvalidInputError, match="unique"):
        split_budget([Stage("a", ("a",)), Stage("a", ("b",), steps=1)], 4)
    with pytest.raises(InvalidInputError, match="steps or share, not both"):
        Stage("a", ("a",), steps=2, share=0.5)
    with pytest.raises(InvalidInputError, match="at least one sub-module"):
        Stage("a", ())
    with pytest.raises(InvalidInputError, match=r"options may not set \['checkpoint_dir', 'max_steps'\]"):
        Stage("a", ("a",), options={"max_steps": 3, "checkpoint_dir": "x", "lr": 0.1})


def test_unknown_trainable_names_are_refused_naming_the_name_and_the_valid_ones():
    m = TwoPart()
    with pytest.raises(InvalidInputError, match=r"trainable 'c' is not a sub-module of TwoPartNet; "
                                                r"valid names: \['a', 'b'\]"):
        m.train_stages(DATA, [Stage("x", ("a", "c"))], max_steps=2)
    with pytest.raises(InvalidInputError, match=r"trainable 'b.5'.*such as \['b.0', 'b.1'\]"):
        m.train_stages(DATA, [Stage("x", ("b.5",))], max_steps=2)
    assert m.history.steps == 0  # refused before any stage trained
    m.train_stages(DATA, [Stage("x", ("b.0",))], max_steps=2)  # a dotted name is fine
    assert float(m.network.a.weight.detach()) == 0.0 and float(m.network.b[0].weight.detach()) != 0.0


class Crash(Callback):
    """Raise at the ``at``-th training step of the whole staged run (before that step's checkpoint)."""

    def __init__(self, at: int) -> None:
        self.at, self.seen = at, 0

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        self.seen += 1
        if self.seen == self.at:
            raise RuntimeError("simulated crash")


def _noisy(m: TwoPart):
    """A loss with fresh noise per step (from the RNG fit seeds and checkpoints), so resume has to be exact."""
    def loss(net, batch):
        m_ = batch.mean() + 0.1 * torch.randn(())
        return (net.a.weight[0, 0] - m_) ** 2 + (net.b[0].weight[0, 0] - 2 * m_) ** 2
    return loss


def _staged(ck=None, **options):
    m = TwoPart(train={"ema_decay": 0.9, "checkpoint_every": 1})
    loss = _noisy(m)
    plan = [Stage("a", ("a",), loss=loss, share=0.4), Stage("b", ("b",), loss=loss)]
    if ck is not None:
        options["checkpoint_dir"] = str(ck)
    m.train_stages(DATA, plan, max_steps=20, **options)
    return m


def _same(m1: TwoPart, m2: TwoPart) -> None:
    for (k, v), (k2, v2) in zip(m1.network.state_dict().items(), m2.network.state_dict().items(), strict=True):
        assert k == k2 and torch.equal(v, v2), k
    assert m1.history.losses == m2.history.losses and m1.history.stages == m2.history.stages


@pytest.mark.parametrize("crash_at", [13, 5])  # inside stage b (a finished), inside stage a
def test_resume_mid_stage_equals_the_uninterrupted_run_bit_for_bit(tmp_path, crash_at):
    full = _staged()
    with pytest.raises(RuntimeError, match="simulated crash"):
        _staged(tmp_path, callbacks=[Crash(crash_at)])
    assert (tmp_path / "a" / "stage.json").exists() == (crash_at > 8)
    assert not (tmp_path / "b" / "stage.json").exists()
    resumed = _staged(tmp_path, resume=True)
    _same(full, resumed)
    assert (tmp_path / "b" / "stage.json").exists()


def test_resume_across_the_stage_boundary(tmp_path):
    """Crashed at the first step of stage b (no checkpoint of b yet): a is skipped (its loss never runs), b
    starts afresh; also when a's record was lost after its last checkpoint (a resumes at its end)."""
    full = _staged()
    with pytest.raises(RuntimeError):
        _staged(tmp_path, callbacks=[Crash(9)])  # step 1 of b, before b's first checkpoint
    assert not (tmp_path / "b" / "last.ckpt").exists()
    calls = []
    m = TwoPart(train={"ema_decay": 0.9, "checkpoint_every": 1})
    loss = _noisy(m)

    def counting(net, batch):
        calls.append(m.history.steps)
        return loss(net, batch)

    before = []
    plan = [Stage("a", ("a",), loss=counting, share=0.4, before=lambda: before.append("a")),
            Stage("b", ("b",), loss=loss, before=lambda: before.append("b"))]
    m.train_stages(DATA, plan, max_steps=20, checkpoint_dir=str(tmp_path), resume=True)
    assert calls == [] and before == ["b"]  # a was skipped, not retrained
    _same(full, m)
    for name in ("stage.json", "stage.pt"):  # a finished stage without its record: resumed at its end
        os.remove(tmp_path / "a" / name)
    os.remove(tmp_path / "b" / "stage.json")
    os.remove(tmp_path / "b" / "stage.pt")
    again = _staged(tmp_path, resume=True)
    _same(full, again)


def test_resume_is_refused_for_another_plan_or_without_resume(tmp_path):
    _staged(tmp_path)
    plan = (tmp_path / "stages.json").read_text()
    with pytest.raises(CheckpointError, match=r"already holds checkpoints of stages \['a', 'b'\]; pass resume=True"):
        _staged(tmp_path)  # resume=False on a used folder
    assert (tmp_path / "stages.json").read_text() == plan
    m = TwoPart(train={"checkpoint_every": 1})
    with pytest.raises(CheckpointError, match=r"stages \['a', 'b'\], not \['b', 'a'\]"):
        m.train_stages(DATA, [Stage("b", ("b",), share=0.5), Stage("a", ("a",))], max_steps=20,
                       checkpoint_dir=str(tmp_path), resume=True)


def test_history_stages_are_saved_with_the_model(tmp_path):
    m = TwoPart()
    m.train_stages(DATA, _plan(), max_steps=10)
    m.save(tmp_path / "run")
    loaded = TwoPart.load(tmp_path / "run")
    assert loaded.history.stages == [("a", 0, 4), ("b", 4, 10)] and loaded.history.stage_of(5) == "b"


def test_deprecated_share_names_map_to_stage_shares():
    from scigen.core.system.stage_budget import check_stage_shares, renamed_share

    with pytest.warns(DeprecationWarning, match=r"X.old_share is deprecated; use stage_shares=\{'s': 0.3\}"):
        assert renamed_share({"old_share": 0.3}, "old_share", "s", "X") == {"stage_shares": {"s": 0.3}}
    with pytest.raises(ValueError, match=r"unknown stage\(s\) \['t'\]"):
        check_stage_shares({"t": 0.1}, ("s",))
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        check_stage_shares({"s": 1.0}, ("s",))


def _early(ck=None, **options):
    """Stage a early-stops (patience 1, validating every step on the training data: heavy-ball overshoots, so
    the validation loss rises after its minimum); b has early stopping off and takes every step a left."""
    m = TwoPart(train={"val_every": 1, "early_stopping": 1, "checkpoint_every": 1})
    plan = [Stage("a", ("a",), share=0.5), Stage("b", ("b",), options={"early_stopping": None})]
    if ck is not None:
        options["checkpoint_dir"] = str(ck)
    trained = m.train_stages(DATA, plan, val_data=DATA, max_steps=40, **options)
    return m, trained


def test_a_stage_that_stops_early_leaves_its_steps_to_the_rest_stage_and_is_skipped_on_resume(tmp_path):
    da = _heavy_ball(-3.0, 20)
    losses = [d * d + 36.0 for d in da[1:]]  # validation after step k sees the weights after k steps
    best = min(range(20), key=losses.__getitem__)
    full, trained = _early()
    assert trained["a"] == best + 2 < 20  # one validation without improvement after the best one
    assert trained["a"] + trained["b"] == 40 and full.history.stages == [("a", 0, best + 2), ("b", best + 2, 40)]
    with pytest.raises(RuntimeError, match="simulated crash"):
        _early(tmp_path, callbacks=[Crash(best + 5)])
    assert json.loads((tmp_path / "a" / "stage.json").read_text())["stopped_step"] == best + 2
    resumed, again = _early(tmp_path, resume=True)
    assert again == trained
    _same(full, resumed)
    m = TwoPart()
    m.train_stages(DATA, [Stage("a", ("a",), validate=False), Stage("b", ("b",), steps=2)], val_data=DATA,
                   max_steps=6, early_stopping=1)  # validate=False: no validation, so no early stopping in a
    assert m.history.stages == [("a", 0, 4), ("b", 4, 6)] and m.history.val_losses[0][0] == 5
