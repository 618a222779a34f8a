"""``fit(compile=True)``: the compiled training step gives eager's losses under both loops, its checkpoints hold
the plain module's keys and load into an uncompiled module, resume stays exact, and a process keeps compiling
past Dynamo's recompile limit. One Inductor compilation of a small MLP's step (~10 s on one CPU core) is shared
by the tests of this file that use ``noisy_mse`` (the compiled graph is reused for a new model of the same
shapes)."""

from __future__ import annotations

import pytest
import torch
from torch._dynamo.utils import counters

from scigen.core.errors import InvalidInputError
from scigen.core.system.fingerprint import run_fingerprint
from scigen.core.train import fit

from ._fit_helpers import QUIET, StopAt, mlp, noisy_mse

DATA = torch.randn(40, 3, generator=torch.Generator().manual_seed(1))
KW = dict(max_steps=5, batch_size=6, lr=3e-3, lr_schedule="cosine", **QUIET)


def test_compiled_step_gives_eager_losses_plain_checkpoints_and_exact_resume(tmp_path):
    eager = fit(mlp(), noisy_mse, DATA, **KW)
    torch._dynamo.reset()
    graphs = counters["stats"]["unique_graphs"]
    comp = fit(mlp(), noisy_mse, DATA, compile=True, checkpoint_dir=tmp_path / "c", **KW)
    assert counters["stats"]["unique_graphs"] > graphs, "compile=True compiled nothing"
    # Inductor may sum in another order: float tolerance, not bit equality
    assert comp.losses == pytest.approx(eager.losses, rel=1e-5, abs=1e-7)
    assert comp.losses != [] and len(comp.losses) == KW["max_steps"]

    # the Trainer loop compiles the same step (the graph is reused: same loss, same shapes)
    trainer = fit(mlp(), noisy_mse, DATA, compile=True, loop="trainer", **KW)
    assert trainer.losses == pytest.approx(eager.losses, rel=1e-5, abs=1e-7)

    # the checkpoint holds the plain module's keys and loads, strictly, into an uncompiled module
    ckpt = torch.load(tmp_path / "c" / "last.ckpt", map_location="cpu", weights_only=True)
    assert set(ckpt["state_dict"]) == {f"module.{k}" for k in mlp().state_dict()}
    plain = mlp(seed=7)
    plain.load_state_dict({k.removeprefix("module."): v for k, v in ckpt["state_dict"].items()}, strict=True)
    for a, b in zip(plain.parameters(), comp.module.parameters(), strict=True):
        assert torch.equal(a, b)

    # a compiled run stopped after 2 steps: resumed compiled, it is the uninterrupted compiled run bit for bit;
    # resumed eagerly, it is the eager run to float tolerance
    fit(mlp(), noisy_mse, DATA, compile=True, checkpoint_dir=tmp_path / "p", callbacks=[StopAt(2)], **KW)
    resumed = fit(mlp(seed=9), noisy_mse, DATA, compile=True, checkpoint_dir=tmp_path / "p", resume=True, **KW)
    assert resumed.losses == comp.losses
    for a, b in zip(resumed.module.parameters(), comp.module.parameters(), strict=True):
        assert torch.equal(a, b)
    fit(mlp(), noisy_mse, DATA, compile=True, checkpoint_dir=tmp_path / "q", callbacks=[StopAt(2)], **KW)
    eager_tail = fit(mlp(seed=9), noisy_mse, DATA, checkpoint_dir=tmp_path / "q", resume=True, **KW)
    assert eager_tail.losses == pytest.approx(eager.losses, rel=1e-5, abs=1e-7)


def test_each_loss_compiles_past_the_recompile_limit():
    """Dynamo keeps its graphs on the code object of the compiled ``forward`` and runs it eagerly after
    ``recompile_limit`` recompilations; every loss function has its own step code, so with the limit at 1 a new
    loss still compiles after another one did (one shared ``forward`` would run the new loss eagerly)."""
    import torch._dynamo.config as dynamo_config

    with dynamo_config.patch(recompile_limit=1):
        fit(mlp(), noisy_mse, DATA, max_steps=2, compile=True, **QUIET)  # compiled (or reused from above)
        before = counters["stats"]["unique_graphs"]
        fit(mlp(), lambda m, x: (m(x) * 3.0 - x).pow(2).mean(), DATA, max_steps=2, compile=True, **QUIET)
        assert counters["stats"]["unique_graphs"] > before, "the second loss ran eagerly"


def test_compile_must_be_a_bool():
    with pytest.raises(InvalidInputError, match="compile must be True or False"):
        fit(mlp(), noisy_mse, DATA, max_steps=1, compile="yes", **QUIET)


def test_compile_is_not_part_of_the_run_fingerprint():
    """A run checkpointed eagerly resumes compiled (and back): ``train.compile`` is a runtime switch."""
    cfg = {"train": {"lr": 1e-3, "compile": False, "precision": "32-true"}}
    other = {"train": {"lr": 1e-3, "compile": True, "precision": "32-true"}}
    bf16 = {"train": {"lr": 1e-3, "compile": False, "precision": "bf16-mixed"}}
    assert run_fingerprint("core/toy", cfg, DATA) == run_fingerprint("core/toy", other, DATA)
    assert run_fingerprint("core/toy", cfg, DATA) != run_fingerprint("core/toy", bf16, DATA)
