"""Nothing a user holds is lost (issue 35, cases 1, 2, 4, 10, 12): scratch names never collide with a user's
path, ``--overwrite`` never replaces a folder scigen did not write, a checkpoint folder holding anything
scigen did not write is refused before training, a run folder and a checkpoint folder that overlap are
refused before training, and a long CLI run checkpoints by wall time as well as by steps."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from scigen.core.errors import CheckpointError, InvalidInputError
from scigen.core.files import atomic_path
from scigen.core.system.fingerprint import check_checkpoint_dir_is_ours, claim_checkpoint_dir
from scigen.core.train.callbacks import AtomicCheckpoint

from .helpers import assert_one_line_error, cli


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_atomic_path_never_touches_a_user_file_with_a_scratch_like_name(tmp_path):
    # the old scratch name was deterministic (.<stem>.<pid>.tmp<suffix>): a user's file of that name was
    # overwritten and then deleted; the scratch file is now created exclusively under a fresh name
    user = tmp_path / f".out.{os.getpid()}.tmp.txt"
    user.write_text("mine")
    with atomic_path(tmp_path / "out.txt") as tmp:
        assert tmp != user and tmp.exists() and tmp.stat().st_size == 0
        tmp.write_text("new")
    assert user.read_text() == "mine"
    assert (tmp_path / "out.txt").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([user.name, "out.txt"])


def _forecast_field():
    import numpy as np
    import xarray as xr

    data = np.random.default_rng(0).random((2, 4, 4)).astype("float32")
    time = np.array(["2026-01-01T00:00", "2026-01-01T00:05"], dtype="datetime64[ns]")
    return xr.DataArray(data, dims=("time", "y", "x"), coords={"time": time}, name="precipitation",
                        attrs={"units": "mm/h"})


def test_zarr_writer_leaves_a_user_folder_with_the_scratch_name_alone(tmp_path):
    pytest.importorskip("zarr")
    from scigen.weather.data.io import read_field, write_field

    mine = tmp_path / "fc.zarr.partial"
    mine.mkdir()
    (mine / "notes.txt").write_text("my notes")
    before = _snapshot(mine)
    write_field(_forecast_field(), tmp_path / "fc.zarr")
    assert _snapshot(mine) == before
    assert read_field(tmp_path / "fc.zarr").shape == (2, 4, 4)


def test_zarr_overwrite_never_replaces_a_folder_scigen_did_not_write(tmp_path):
    pytest.importorskip("zarr")
    from scigen.weather.data.io import write_field

    mine = tmp_path / "mine.zarr"
    mine.mkdir()
    (mine / "thesis.tex").write_text("chapter 1")
    before = _snapshot(mine)
    with pytest.raises(InvalidInputError, match="thesis.tex"):
        write_field(_forecast_field(), mine, overwrite=True)
    assert _snapshot(mine) == before
    # a forecast scigen wrote is replaced by a rerun with overwrite=True
    ours = tmp_path / "ours.zarr"
    write_field(_forecast_field(), ours)
    write_field(_forecast_field() * 2, ours, overwrite=True)
    from scigen.weather.data.io import read_field

    assert float(read_field(ours).max()) > 1.0


def test_checkpoint_folder_with_a_users_fingerprint_json_is_refused(tmp_path):
    d = tmp_path / "ck"
    d.mkdir()
    (d / "fingerprint.json").write_text('{"my": "own notes"}')
    fp = {"system": "core/toy", "config_sha256": "a", "data_sha256": "b"}
    with pytest.raises(CheckpointError, match="fingerprint.json that scigen did not write"):
        claim_checkpoint_dir(d, fp, resume=False)
    assert (d / "fingerprint.json").read_text() == '{"my": "own notes"}'


def test_checkpoint_folder_with_a_foreign_file_is_refused_and_ours_is_accepted(tmp_path):
    d = tmp_path / "ck"
    d.mkdir()
    (d / "data.csv").write_text("1,2,3")
    with pytest.raises(CheckpointError, match="'data.csv'"):
        check_checkpoint_dir_is_ours(d)
    ours = tmp_path / "ours"
    (ours / "logs").mkdir(parents=True)
    (ours / "stage1").mkdir()
    fp = json.dumps({"system": "core/toy", "config_sha256": "a", "data_sha256": "b"})
    for f in (ours / "fingerprint.json", ours / "stage1" / "fingerprint.json"):
        f.write_text(fp)
    for name in ("last.ckpt", "best.ckpt", "step-00000010.ckpt", ".last.ckpt.tmp"):
        (ours / name).write_bytes(b"x")
    check_checkpoint_dir_is_ours(ours)  # everything there is what fit writes
    (ours / "stage1" / "mine.txt").write_text("x")
    with pytest.raises(CheckpointError, match="mine.txt"):
        check_checkpoint_dir_is_ours(ours)


def test_system_fit_refuses_a_foreign_checkpoint_folder_before_training(tmp_path):
    from scigen.core.toy import toy_data
    from scigen.core.toy.system import ToySystem

    d = tmp_path / "ck"
    d.mkdir()
    (d / "fingerprint.json").write_text("not json")
    model = ToySystem(width=16, depth=1)
    with pytest.raises(CheckpointError, match="did not write"):
        model.fit(toy_data("eight_gaussians", 64), max_steps=2, checkpoint_dir=str(d), progress=False, logger=None)
    assert not model.is_trained and (d / "fingerprint.json").read_text() == "not json"


def test_cli_train_refuses_out_equal_to_checkpoint_dir_before_training(tmp_path):
    run = tmp_path / "X"
    result = cli("core", "toy", "train", "--quick", "--max-steps", "5", "--out", str(run),
                 "--checkpoint-dir", str(run))
    assert_one_line_error(result, "--checkpoint-dir", "overlap")
    assert not run.exists()  # refused before any training wrote a checkpoint
    result = cli("core", "toy", "train", "--quick", "--max-steps", "5", "--out", str(run),
                 "--checkpoint-dir", str(run / "ck"))
    assert_one_line_error(result, "overlap")


def test_cli_train_refuses_a_checkpoint_dir_holding_user_files(tmp_path):
    ck = tmp_path / "ck"
    ck.mkdir()
    (ck / "fingerprint.json").write_text("mine")
    result = cli("core", "toy", "train", "--quick", "--max-steps", "5", "--out", str(tmp_path / "run"),
                 "--checkpoint-dir", str(ck))
    assert_one_line_error(result, str(ck), "did not write")
    assert (ck / "fingerprint.json").read_text() == "mine" and not (tmp_path / "run").exists()


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class _Trainer:  # what AtomicCheckpoint reads of a single-process Lightning trainer
    world_size = 1


def test_time_based_checkpoint_is_due_after_every_seconds():
    clock = _Clock()
    cb = AtomicCheckpoint("unused", every_n_steps=10**6, every_seconds=60.0, clock=clock)
    assert not cb._time_is_up(_Trainer())
    clock.now = 59.9
    assert not cb._time_is_up(_Trainer())
    clock.now = 60.0
    assert cb._time_is_up(_Trainer())
    assert not AtomicCheckpoint("unused", 10, every_seconds=None, clock=clock)._time_is_up(_Trainer())
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(InvalidInputError, match="checkpoint_seconds"):
            AtomicCheckpoint("unused", 10, every_seconds=bad)


def test_a_long_cli_run_killed_early_leaves_a_checkpoint_to_resume(tmp_path):
    """200k steps, 10 % = 20k steps between step checkpoints: the wall-time rule writes one within seconds."""
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"width": 16, "depth": 1, "train": {"checkpoint_seconds": 1.0, "progress": False}}))
    out, ck = tmp_path / "run", tmp_path / "run.checkpoints"
    proc = subprocess.Popen([sys.executable, "-m", "scigen.core.cli", "core", "toy", "train", "--quick",
                             "--max-steps", "200000", "--config", str(cfg), "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120
        while not (ck / "last.ckpt").exists() and time.time() < deadline and proc.poll() is None:
            time.sleep(0.1)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert (ck / "last.ckpt").exists()
    step = torch.load(ck / "last.ckpt", map_location="cpu", weights_only=False)["global_step"]
    assert 0 < step < 20_000  # written by time, long before the first step-based checkpoint
