"""Hostile inputs to the weather CLI: one clear line, exit 2, never a traceback."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from .helpers import assert_one_line_error, cli

pytest.importorskip("scigen.weather")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    from scigen.weather.data import synthetic_storms, write_field

    tmp = tmp_path_factory.mktemp("weather")
    data = write_field(synthetic_storms(2, 26, 16, seed=0), tmp / "train.nc")
    res = cli("weather", "nowcast", "train", "--data", str(data), "--preset", "tiny", "--max-steps", "2",
              "--out", str(tmp / "run"))
    assert res.exit_code == 0, res.output
    return tmp


def _write(tmp, name, values, units="mm/h", freq="5min", dims=("time", "y", "x")):
    import xarray as xr

    t = pd.date_range("2024-01-01", periods=values.shape[0], freq=freq)
    da = xr.DataArray(values.astype(np.float32), dims=dims, coords={dims[0]: t}, name="precipitation",
                      attrs={"units": units})
    p = tmp / name
    da.to_dataset().to_netcdf(p, engine="h5netcdf")
    return p


@pytest.mark.parametrize("name,make,needles", [
    ("short.nc", lambda: np.ones((3, 16, 16)), ["context_frames = 5", "has 3 frames"]),
    ("grid.nc", lambda: np.ones((5, 8, 8)), ["differs from the training grid (16, 16)"]),
    ("neg.nc", lambda: -np.ones((5, 16, 16)), ["negative mm/h value"]),
    ("nan.nc", lambda: np.full((5, 16, 16), np.nan), ["NaN/inf values"]),
])
def test_forecast_bad_context(run_dir, name, make, needles):
    ctx = _write(run_dir, name, make())
    res = cli("weather", "nowcast", "forecast", "--run", str(run_dir / "run"), "--context", str(ctx),
              "--out", str(run_dir / f"{name}.out.nc"))
    assert_one_line_error(res, *needles)


def test_forecast_bad_units_dims_and_step(run_dir):
    for name, kw, needle in (("u.nc", {"units": "inch/h"}, "unknown units 'inch/h'"),
                             ("d.nc", {"dims": ("time", "lat", "lon")}, "dims must be ('time', 'y', 'x')"),
                             ("s.nc", {"freq": "10min"}, "steps by 0 days 00:10:00")):
        ctx = _write(run_dir, name, np.ones((5, 16, 16)), **kw)
        res = cli("weather", "nowcast", "forecast", "--run", str(run_dir / "run"), "--context", str(ctx),
                  "--out", str(run_dir / f"{name}.out.nc"))
        assert_one_line_error(res, needle)


def test_forecast_refuses_existing_out_and_bad_counts(run_dir):
    ctx = run_dir / "train.nc"
    res = cli("weather", "nowcast", "forecast", "--run", str(run_dir / "run"), "--context", str(ctx),
              "--out", str(ctx))
    assert_one_line_error(res, "already exists")
    res = cli("weather", "nowcast", "forecast", "--run", str(run_dir / "run"), "--context", str(ctx),
              "--out", str(run_dir / "x.nc"), "--n-samples", "0")
    assert_one_line_error(res, "--n-samples")
    res = cli("weather", "nowcast", "forecast", "--run", str(run_dir / "run"), "--context", str(ctx),
              "--out", str(run_dir / "x.nc"), "--method", "ddpm")
    assert_one_line_error(res, "unknown flow sampler method 'ddpm'")


def test_train_on_a_file_that_is_not_netcdf(tmp_path):
    bad = tmp_path / "x.nc"
    bad.write_text("not netcdf")
    res = cli("weather", "nowcast", "train", "--data", str(bad), "--preset", "tiny", "--out", str(tmp_path / "r"))
    assert_one_line_error(res, "cannot be read as NetCDF/Zarr")
