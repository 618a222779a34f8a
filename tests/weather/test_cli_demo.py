"""The CLI end to end (train, forecast, evaluate) and the demo (PNG strip, GIF, report)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from scigen.core.cli import build_app
from scigen.weather.data import read_field, synthetic_storms, write_field


def _run(*args):
    return CliRunner().invoke(build_app(list(args)), list(args))


def test_train_forecast_evaluate(tmp_path):
    data = write_field(synthetic_storms(3, 26, 16, seed=0), tmp_path / "train.nc")
    res = _run("weather", "nowcast", "train", "--data", str(data), "--preset", "tiny", "--max-steps", "2",
               "--out", str(tmp_path / "run"))
    assert res.exit_code == 0, res.output
    res = _run("weather", "nowcast", "forecast", "--run", str(tmp_path / "run"), "--context", str(data),
               "--out", str(tmp_path / "fc.nc"), "--n-samples", "2")
    assert res.exit_code == 0, res.output
    fc = read_field  # the forecast is (member, lead_time, y, x): open with xarray directly
    import xarray as xr

    with xr.open_dataset(tmp_path / "fc.nc") as ds:
        assert ds["forecast"].dims == ("member", "lead_time", "y", "x") and ds["forecast"].shape == (2, 20, 16, 16)
        assert np.all(ds["forecast"].values >= 0)
    del fc
    res = _run("weather", "nowcast", "evaluate", "--run", str(tmp_path / "run"), "--data", str(data),
               "--out", str(tmp_path / "scores.json"))
    assert res.exit_code == 0, res.output
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert {"flow/CRPS", "stage1/CRPS", "persistence/CRPS", "flow/FSS", "flow/ES", "flow/VS"} <= set(scores)
    # the field's packages beside ours (the scoringrules / pysteps extras, when installed) agree with ours
    for ref, ours in (("ES[scoringrules]", "ES"), ("VS[scoringrules]", "VS"), ("CRPS[scoringrules]", "CRPS"),
                      ("FSS[pysteps]", "FSS")):
        if f"flow/{ref}" in scores:
            assert scores[f"flow/{ref}"] == pytest.approx(scores[f"flow/{ours}"], rel=1e-8, nan_ok=True)


@pytest.mark.slow  # the quick demo trains 150 steps
def test_demo_writes_png_gif_and_report(tmp_path):
    from scigen.weather import Nowcast

    result = Nowcast.demo(tmp_path, quick=True, threads=1)
    assert (tmp_path / "nowcast.png").stat().st_size > 1000
    from PIL import Image

    with Image.open(tmp_path / "nowcast.gif") as gif:
        assert gif.n_frames == 20
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["system"] == "weather/nowcast" and "flow/CRPS" in result.metrics
