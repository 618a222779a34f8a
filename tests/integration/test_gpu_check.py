"""The GPU check (``benchmarks/gpu/``) cannot rot between the sessions that are lent a GPU: its paper-preset
runner builds, trains and samples systems at ``preset("paper")`` on the CPU and reports a failure as a failure,
and (slow) the whole ``check.sh --smoke`` passes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "benchmarks" / "gpu" / "paper_presets.py"


def _run(tmp_path, *args):
    out = tmp_path / "presets"
    proc = subprocess.run([sys.executable, str(RUNNER), "--steps", "2", "--smoke", "--device", "cpu",
                           "--max-memory-gib", "6", "--out", str(out), *args],
                          capture_output=True, text=True, timeout=900, cwd=ROOT,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    return proc, json.loads(out.with_suffix(".json").read_text()), out.with_suffix(".md").read_text()


def test_paper_presets_of_cheap_systems_train_and_sample_on_the_cpu(tmp_path):
    from scigen.core.system.registry import discover

    wanted = ["core/toy", "singlecell/gim", "singlecell/mmsfm", "wireless/sbgm"]
    installed = {f"{s.domain}/{s.name}" for t in discover()[0].values() for s in t.values()}
    wanted = [w for w in wanted if w in installed]
    proc, rows, table = _run(tmp_path, "--only", *wanted)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [r["system"] for r in rows] == sorted(wanted)
    for r in rows:
        assert r["ok"] and r["sample_s"] >= 0, r
    from scigen.core.toy.system import ToySystem

    toy = next(r for r in rows if r["system"] == "core/toy")
    assert toy["params"] == sum(p.numel() for p in ToySystem(ToySystem.Config.preset("paper")).network.parameters())
    assert "| core/toy | yes |" in table


def test_a_failing_system_is_reported_and_fails_the_run(tmp_path):
    # a 50 MiB address-space cap, set after the imports: the build or the fit runs out of memory, and the
    # runner reports the system as failed (in the child, or as a child that died without a result)
    out = tmp_path / "presets"
    proc = subprocess.run([sys.executable, str(RUNNER), "--steps", "2", "--smoke", "--device", "cpu",
                           "--max-memory-gib", "0.05", "--only", "core/toy", "--out", str(out)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    rows = json.loads(out.with_suffix(".json").read_text())
    assert proc.returncode == 1 and rows[0]["ok"] is False and rows[0]["error"], rows


@pytest.mark.slow
def test_check_sh_smoke_passes(tmp_path):
    proc = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu" / "check.sh"), "--smoke"], capture_output=True,
                          text=True, timeout=3600, cwd=ROOT,
                          env={**os.environ, "REPORT": str(tmp_path / "check.md"), "PYTHON": sys.executable})
    assert proc.returncode == 0, proc.stdout[-4000:]
    report = (tmp_path / "check.md").read_text()
    assert report.count(": passed") == 3, report
