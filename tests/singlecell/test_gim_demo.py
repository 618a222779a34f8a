"""`scigen singlecell gim demo --quick` end to end: report, figure and a loadable run."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from scigen.core.cli import build_app


@pytest.mark.slow
def test_gim_demo_command_writes_report_figure_and_run(tmp_path):
    args = ["singlecell", "gim", "demo", "--quick", "--out", str(tmp_path / "demo")]
    res = CliRunner().invoke(build_app(args), args)
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "demo" / "report.json").read_text())
    assert report["system"] == "singlecell/gim" and report["quick"] is True
    m = report["metrics"]
    assert 0.5 < m["target_AUROC"] <= 1 and m["W2"] > 0 and "baseline_W2" in m
    assert (tmp_path / "demo" / "gim_shifts_targets.png").stat().st_size > 5000
    from scigen.singlecell.gim.system import GIM

    assert GIM.load(tmp_path / "demo" / "model").is_trained
