"""The SBGM demo end to end (shortened), and the CLI verbs train / sample / evaluate / estimate."""

from __future__ import annotations

import json

import pytest

from scigen.wireless import SBGM, read_dataset, write_dataset


def test_demo_quick_end_to_end(tmp_path, monkeypatch):
    from scigen.wireless.sbgm import demo

    monkeypatch.setitem(demo.DEMO, True, (400, 12, 60, (0.0, 20.0)))
    res = SBGM.demo(tmp_path, quick=True, threads=1)
    report = json.loads((tmp_path / "report.json").read_text())
    assert (tmp_path / "sbgm.png").stat().st_size > 10_000 and (tmp_path / "model" / "scigen.json").exists()
    for snr in (0, 20):
        assert res.metrics[f"NMSE_dB_SBGM-CSGMM_{snr}dB"] < res.metrics[f"NMSE_dB_LS_{snr}dB"] - 1.0
    assert report["system"] == "wireless/sbgm" and report["snr_db"] == [0.0, 20.0]


@pytest.mark.slow  # the demo as shipped (quick): about 30 s on a loaded core
def test_demo_as_shipped(tmp_path):
    res = SBGM.demo(tmp_path, quick=True, threads=1)
    assert res.metrics["NMSE_dB_SBGM-CSGMM_10dB"] < res.metrics["NMSE_dB_OMP_10dB"]


def test_cli_train_sample_evaluate(tmp_path):
    from typer.testing import CliRunner

    from scigen.core.cli import build_app

    def run(*args):
        r = CliRunner().invoke(build_app(list(args)), list(args))
        assert r.exit_code == 0, r.output
        return r.output

    data = SBGM.default_data(quick=True).isel(sample=slice(150))
    write_dataset(data, tmp_path / "obs.nc")
    run("wireless", "sbgm", "train", "--data", str(tmp_path / "obs.nc"), "--out", str(tmp_path / "run"), "--preset",
        "tiny", "--max-steps", "3")
    run("wireless", "sbgm", "sample", "--run", str(tmp_path / "run"), "--out", str(tmp_path / "gen.h5"), "--n-samples", "5")
    gen = read_dataset(tmp_path / "gen.h5")
    assert gen["h"].shape == (5, 32, 1, 1) and "path_angle" in gen
    out = run("wireless", "sbgm", "evaluate", "--run", str(tmp_path / "run"), "--data", str(tmp_path / "obs.nc"))
    assert "NMSE_dB" in out
    assert "estimate" in run("wireless", "sbgm", "--help")
