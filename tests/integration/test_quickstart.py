"""The installed console script, end to end, as a new user runs it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCIGEN = shutil.which("scigen") or str(Path(sys.executable).with_name("scigen"))


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([SCIGEN, *args], capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("quickstart")


def test_console_script_lists_the_toy_system(workdir):
    proc = run("list", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    assert "core" in proc.stdout and "toy" in proc.stdout


def test_quick_demo_runs_end_to_end(workdir):
    proc = run("demo", "--domain", "core", "--quick", "--out", "reports", cwd=workdir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((workdir / "reports" / "core-toy" / "report.json").read_text())
    m = report["metrics"]
    # training must have helped by a wide margin (untrained model: W2 of order the data scale)
    assert m["W2"] < 0.5 * m["W2_untrained"], m
    assert (workdir / "reports" / "core-toy" / "samples.png").stat().st_size > 10_000
    assert "core/toy" in proc.stdout and "ok" in proc.stdout


def test_train_sample_evaluate_from_the_cli(workdir):
    proc = run("core", "toy", "train", "--out", "run", "--quick", "--max-steps", "50", cwd=workdir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run("core", "toy", "sample", "--run", "run", "--n-samples", "16", "--out", "s.safetensors", cwd=workdir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    from safetensors.torch import load_file

    assert tuple(load_file(str(workdir / "s.safetensors"))["samples"].shape) == (16, 2)
    proc = run("core", "toy", "evaluate", "--run", "run", "--bundled", "--out", "m.json", cwd=workdir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert set(json.loads((workdir / "m.json").read_text())) == {"W2", "MMD2"}
