"""Hostile inputs through the engine's API and the CLI (core/toy): each gives a named error."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from scigen.core.errors import CheckpointError, InvalidInputError, NotTrainedError
from scigen.core.toy.system import ToySystem

from .helpers import assert_one_line_error, cli


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    run = tmp_path_factory.mktemp("toy") / "run"
    ToySystem(width=16, depth=1, train={"max_steps": 5, "progress": False}).fit(torch.randn(64, 2)).save(run)
    return run


# ------------------------------------------------------------------ Python API
@pytest.mark.parametrize(("data", "match"), [
    (torch.zeros(0, 2), r"shape \[n>0, 2\]"),
    (torch.zeros(10, 3), r"shape \[n>0, 2\].*\(10, 3\)"),
    (torch.full((10, 2), float("inf")), "NaN or inf"),
    (np.zeros((10, 2)), "must be a torch.Tensor"),
    ("points.csv", "must be a torch.Tensor"),
])
def test_bad_training_data(data, match):
    with pytest.raises(InvalidInputError, match=match):
        ToySystem().fit(data, max_steps=1)


@pytest.mark.parametrize(("options", "match"), [
    ({"max_steps": 0}, "max_steps"), ({"max_steps": -3}, "max_steps"), ({"batch_size": 0}, "batch_size"),
    ({"lr": float("nan")}, "lr"), ({"lr": -1.0}, "lr"), ({"epochs": 3}, r"unknown training option\(s\) \['epochs'\]"),
])
def test_bad_training_options(options, match):
    with pytest.raises(InvalidInputError, match=match):
        ToySystem().fit(torch.randn(16, 2), **options)


@pytest.mark.parametrize(("fields", "match"), [
    ({"width": -1}, r"ToyConfig.width"), ({"dataset": "spiral"}, "unknown toy dataset 'spiral'"),
    ({"colour": "red"}, r"ToyConfig.colour: unknown field"), ({"method": "rk5"}, "unknown sampler method 'rk5'"),
    ({"train": {"lr": "fast"}}, r"ToyConfig.train.lr"), ({"steps": 0}, r"ToyConfig.steps"),
])
def test_bad_config_fields(fields, match):
    with pytest.raises(InvalidInputError, match=match):
        ToySystem(**fields)


def test_bad_sampling_requests(trained):
    model = ToySystem.load(trained)
    for n in (0, -5, 2.5, "10"):
        with pytest.raises(InvalidInputError, match="n_samples must be a positive int"):
            model.sample(n)
    with pytest.raises(InvalidInputError, match="steps must be a positive int"):
        model.sample(4, steps=-2)
    with pytest.raises(NotTrainedError, match="untrained"):
        ToySystem().sample(4)
    with pytest.raises(InvalidInputError, match="seed must be an int"):
        model.sample(4, seed="abc")


def test_bad_saved_runs(tmp_path, trained):
    with pytest.raises(CheckpointError, match="does not exist"):
        ToySystem.load(tmp_path / "missing")
    (tmp_path / "file.txt").write_text("hello")
    with pytest.raises(CheckpointError, match="got a file"):
        ToySystem.load(tmp_path / "file.txt")
    with pytest.raises(CheckpointError, match="already exists"):
        ToySystem.load(trained).save(trained)
    class Other(ToySystem):
        name = "other"

    with pytest.raises(CheckpointError, match="holds a 'core/toy' system"):
        Other.load(trained)


# ------------------------------------------------------------------ CLI
def test_cli_bad_inputs_are_one_line_errors(tmp_path, trained):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    words = tmp_path / "words.csv"
    words.write_text("a,b\nc,d\n")
    folder = tmp_path / "cfgdir"
    folder.mkdir()
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{not json")
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"colour": "red"}))
    existing = tmp_path / "exists.txt"
    existing.write_text("mine")
    cases = [
        (["core", "toy", "train", "--out", str(tmp_path / "o1"), "--data", str(tmp_path / "nope.csv")], ["nope.csv"]),
        (["core", "toy", "train", "--out", str(tmp_path / "o2"), "--data", str(words)], ["words.csv"]),
        (["core", "toy", "train", "--out", str(tmp_path / "o3"), "--config", str(folder)], ["cfgdir", "not a file"]),
        (["core", "toy", "train", "--out", str(tmp_path / "o4"), "--config", str(bad_json)], ["bad.json", "JSON"]),
        (["core", "toy", "train", "--out", str(tmp_path / "o5"), "--config", str(unknown)], ["colour"]),
        (["core", "toy", "train", "--out", str(tmp_path / "o6"), "--max-steps", "0", "--quick"], ["max_steps"]),
        (["core", "toy", "train", "--out", str(existing), "--quick", "--max-steps", "1"], ["exists.txt"]),
        (["core", "toy", "train", "--out", str(tmp_path / "o7"), "--preset", "huge"], ["huge"]),
        (["core", "toy", "sample", "--run", str(trained), "--out", str(tmp_path / "s"), "--n-samples", "0"],
         ["--n-samples"]),
        (["core", "toy", "sample", "--run", str(tmp_path / "norun"), "--out", str(tmp_path / "s")], ["norun"]),
        (["core", "toy", "evaluate", "--run", str(trained)], ["--data"]),
        (["core", "toy", "evaluate", "--run", str(trained), "--data", str(empty)], ["empty.csv"]),
    ]
    for args, needles in cases:
        assert_one_line_error(cli(*args), *needles)
    assert existing.read_text() == "mine"  # never replaced


def test_kill_9_during_sample_leaves_no_file_under_the_final_name(tmp_path, trained):
    """The samples file appears complete or not at all (written beside, renamed into place)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from safetensors.torch import load_file

    out = tmp_path / "samples.safetensors"
    cmd = [sys.executable, "-m", "scigen.core.cli", "core", "toy", "sample", "--run", str(trained), "--out", str(out),
           "--n-samples", "200000"]
    for delay in (1.0, 2.5, 4.0):
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        if out.exists():  # it finished before the kill: then the file must be whole
            assert load_file(str(out))["samples"].shape == (200000, 2)
            out.unlink()


def test_cli_sample_and_evaluate_never_replace_an_existing_out_unasked(tmp_path, trained):
    mine = tmp_path / "mine.safetensors"
    mine.write_text("my data")
    assert_one_line_error(cli("core", "toy", "sample", "--run", str(trained), "--out", str(mine), "--n-samples", "5"),
                          "mine.safetensors", "--overwrite")
    assert mine.read_text() == "my data"
    assert_one_line_error(cli("core", "toy", "sample", "--run", str(trained), "--out", str(tmp_path),
                              "--n-samples", "5"), "exists and is a directory")
    res = cli("core", "toy", "sample", "--run", str(trained), "--out", str(mine), "--n-samples", "5", "--overwrite")
    assert res.exit_code == 0 and mine.read_text(errors="replace") != "my data"
    scores = tmp_path / "scores.json"
    scores.write_text("{}")
    assert_one_line_error(cli("core", "toy", "evaluate", "--run", str(trained), "--bundled", "--out", str(scores)),
                          "scores.json")
    assert scores.read_text() == "{}"
