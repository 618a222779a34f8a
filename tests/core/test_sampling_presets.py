"""Sampling presets (issue 36): ``Config.sampling("paper" | "fast")``, one mechanism for every system.

What each system's ``fast`` preset is comes from ``benchmarks/core/results/system_samplers_fast.md`` (the
cheapest setting within seed noise of the paper sampler, over 3 seeds); these tests pin the resolution to the
documented values, the paper preset's sampler to the paper's, and the rule that a preset touches sampling
fields only. They never re-measure quality (that is the benchmark).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
import torch
from typer.testing import CliRunner

from scigen.core.errors import UnknownNameError
from scigen.core.system import SystemConfig
from scigen.core.system.registry import discover

# documented (package READMEs, system_samplers_fast.md): system -> (paper settings, fast settings)
DOCUMENTED: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "core/toy": ({"method": None, "steps": 20}, {"method": "heun", "steps": 3}),
    "molecules/unigem": ({"method": "ddpm", "steps": None}, {"method": "ddpm", "steps": 50}),
    "molecules/edm": ({"method": "ddpm", "steps": None}, {"method": "heun", "steps": 25}),
    "placement/diffusion": ({"method": "ddpm", "steps": 1000}, {"method": "ddim", "steps": 20}),
    "timeseries/nsdiff": ({"sigma_source": "denoiser", "method": "ddpm", "steps": None},
                          {"sigma_source": "denoiser", "method": "ddpm", "steps": 10}),
    "timeseries/d3u": ({"method": "dpmpp_2m", "steps": 20}, {"method": "dpmpp_2m", "steps": 10}),
    "singlecell/mmsfm": ({"method": "dopri5", "steps": 100}, {"method": "rk4", "steps": 12}),
    "graphs/sbgd": ({"method": "euler_maruyama", "steps": 1000}, {"method": "heun", "steps": 25}),
    "weather/nowcast": ({"method": "euler", "steps": 10}, {"method": "heun", "steps": 4}),
    # no sampling-only setting: fast = paper = {} (the README says why)
    "graphs/g2pt": ({}, {}),
    "graphs/agdiff": ({}, {}),
    "singlecell/gim": ({}, {}),
    "singlecell/inverseflow": ({}, {}),
    "wireless/sbgm": ({}, {}),
}


def _systems() -> dict[str, Any]:
    systems, _ = discover()
    return {f"{d}/{n}": spec for d, table in systems.items() for n, spec in table.items()
            if d != "testing"}  # not the register_system stand-ins of other tests


SYSTEMS = _systems()


def test_every_installed_system_is_documented():
    assert sorted(SYSTEMS) == sorted(k for k in DOCUMENTED if k in SYSTEMS)
    assert set(SYSTEMS) <= set(DOCUMENTED)


@pytest.mark.parametrize("key", sorted(SYSTEMS))
def test_fast_and_paper_resolve_to_the_documented_sampler(key):
    cfg = SYSTEMS[key].load().Config
    paper, fast = DOCUMENTED[key]
    assert cfg.samplers()[:2] == ["paper", "fast"]
    assert cfg.sampler_settings("paper") == paper
    assert cfg.sampler_settings("fast") == fast
    # the paper preset's own sampler is the paper's: sampling("paper") leaves it as it is
    base = cfg.preset("paper") if "paper" in cfg.PRESETS else cfg()
    assert {f: getattr(base, f) for f in cfg.SAMPLING_FIELDS} == paper
    assert base.sampling("paper") == base
    # fast changes sampling fields only (never training), to the documented values
    quick = base.sampling("fast")
    changed = {f for f in type(base).model_fields if getattr(quick, f) != getattr(base, f)}
    assert changed <= set(cfg.SAMPLING_FIELDS)
    assert {f: getattr(quick, f) for f in fast} == fast
    if fast == paper:  # "fast = paper" must be explained in the config (and the README)
        assert cfg.SAMPLER_NOTES.get("fast") or cfg.SAMPLING_FIELDS


@pytest.mark.parametrize("key", sorted(SYSTEMS))
def test_unknown_sampling_preset_is_refused_naming_the_valid_ones(key):
    cfg = SYSTEMS[key].load().Config
    base = cfg.preset("tiny") if "tiny" in cfg.PRESETS else cfg()
    with pytest.raises(UnknownNameError, match=r"no sampling preset 'turbo'; valid sampling presets: paper, fast"):
        base.sampling("turbo")
    with pytest.raises(UnknownNameError, match="valid sampling presets"):
        cfg.sampler_settings(None)  # type: ignore[arg-type]


def test_toy_fast_depends_on_the_objective():
    from scigen.core.toy.system import ToyConfig

    assert ToyConfig(objective="diffusion").sampling("fast").method == "dpmpp_2m"
    assert ToyConfig(objective="diffusion").sampling("fast").steps == 5
    assert ToyConfig(objective="diffusion").sampling("paper").method is None  # the objective's default: dpmpp_2m


def test_a_preset_that_would_change_training_is_refused_when_the_class_is_defined():
    with pytest.raises(TypeError, match=r"SAMPLERS\['fast'\] sets \['width'\], which are not sampling fields"):
        class Bad(SystemConfig):
            width: int = 3
            steps: int = 10
            SAMPLING_FIELDS: ClassVar[tuple[str, ...]] = ("steps",)
            SAMPLERS: ClassVar[dict[str, Any]] = {"fast": {"steps": 2, "width": 1}}
    with pytest.raises(TypeError, match=r"names \['nope'\], which are not fields"):
        class Bad2(SystemConfig):
            SAMPLING_FIELDS: ClassVar[tuple[str, ...]] = ("nope",)
    with pytest.raises(TypeError, match="must not define 'paper'"):
        class Bad3(SystemConfig):
            steps: int = 10
            SAMPLING_FIELDS: ClassVar[tuple[str, ...]] = ("steps",)
            SAMPLERS: ClassVar[dict[str, Any]] = {"paper": {"steps": 2}}

    class Bad4(SystemConfig):  # a function's keys are checked when it is resolved
        width: int = 3
        SAMPLING_FIELDS: ClassVar[tuple[str, ...]] = ()
        SAMPLERS: ClassVar[dict[str, Any]] = {"fast": lambda c: {"width": 1}}

    with pytest.raises(TypeError, match="not sampling fields"):
        Bad4().sampling("fast")


def test_toy_fast_trains_the_same_weights_and_samples_end_to_end():
    """``sampling("fast")`` before fit: bit-identical training; the sample runs the fast sampler's steps."""
    from scigen.core.toy import toy_data
    from scigen.core.toy.system import ToySystem

    data = toy_data("eight_gaussians", 256, seed=0)
    opts = {"max_steps": 5, "progress": False, "logger": None}
    paper = ToySystem(ToySystem.Config.preset("tiny", train=opts)).fit(data)
    fast = ToySystem(ToySystem.Config.preset("tiny", train=opts).sampling("fast")).fit(data)
    for a, b in zip(paper.network.state_dict().values(), fast.network.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    calls = []
    fast.network.register_forward_hook(lambda *_: calls.append(1))
    x = fast.sample(64, seed=1)
    assert x.shape == (64, 2) and torch.isfinite(x).all()
    assert len(calls) == 2 * 3 - 1  # heun, 3 steps, the last one Euler: 5 calls (paper heun @ 20: 39)
    # the same draws as an explicit method/steps call
    assert torch.equal(x, paper.sample(64, seed=1, method="heun", steps=3))


def test_nsdiff_fast_samples_end_to_end_on_a_tiny_model():
    from scigen.timeseries.nsdiff.system import NsDiff

    cfg = NsDiff.Config.preset("tiny", train={"max_steps": 3, "progress": False, "logger": None})
    model = NsDiff(cfg).fit(NsDiff.default_data(quick=True))
    model.config = model.config.sampling("fast")
    calls = []
    model.network.denoiser.register_forward_hook(lambda *_: calls.append(1))
    context = NsDiff.default_data(quick=True)
    out = model.sample(context, n_samples=4, seed=0)
    assert out.shape[0] == 4 and bool(torch.isfinite(torch.as_tensor(out.values)).all())
    assert len(calls) == 10  # the paper chain on a 10-step respaced grid


def test_mmsfm_fast_samples_end_to_end_on_a_tiny_model():
    from scigen.singlecell.data import s_gaussians
    from scigen.singlecell.mmsfm.system import MMSFM

    model = MMSFM(MMSFM.Config.preset("tiny", train={"max_steps": 3, "progress": False, "logger": None}))
    model.fit(s_gaussians(100, seed=0))
    model.config = model.config.sampling("fast")
    calls = []
    model.network.drift.register_forward_hook(lambda *_: calls.append(1))
    t, states = model.trajectories(20, seed=0)
    assert torch.isfinite(states).all()
    assert 4 * 12 <= len(calls) <= 4 * (12 + len(t))  # rk4: 4 calls a step, the gaps split by ceil


runner = CliRunner()


def _cli(*args):
    from scigen.core.cli import build_app

    return runner.invoke(build_app(list(args)), list(args))


def test_cli_sample_and_evaluate_take_a_sampler_preset(tmp_path):
    run = tmp_path / "run"
    res = _cli("core", "toy", "train", "--out", str(run), "--preset", "tiny", "--max-steps", "3", "--quick")
    assert res.exit_code == 0, res.output
    res = _cli("core", "toy", "sample", "--run", str(run), "--n-samples", "8", "--out", str(tmp_path / "a.pt"),
               "--sampler-preset", "fast")
    assert res.exit_code == 0, res.output
    res = _cli("core", "toy", "evaluate", "--run", str(run), "--bundled", "--sampler-preset", "paper")
    assert res.exit_code == 0, res.output
    res = _cli("core", "toy", "sample", "--run", str(run), "--out", str(tmp_path / "b.pt"), "--sampler-preset",
               "turbo")
    assert res.exit_code == 2
    assert "no sampling preset 'turbo'; valid sampling presets: paper, fast" in res.output
    assert not (tmp_path / "b.pt").exists()
