"""Hostile inputs to NsDiff (timeseries) through the Python API and the CLI: each gives a named error
whose message names the file, column, timestamp or value; a killed ``sample --out`` leaves no partial file."""

from __future__ import annotations

import json
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

from scigen.core.errors import CheckpointError, InvalidInputError, NotTrainedError, UnknownNameError
from scigen.timeseries import NsDiff
from scigen.timeseries.data import synthetic_nonstationary

from .helpers import assert_one_line_error, cli

# the schedule still reaches the prior (alpha_bar_T < 0.01) with 10 steps
TINY = dict(context_length=16, horizon=4, rolling_length=4, diffusion_steps=10, beta_end=0.8, d_model=8, n_heads=2,
            e_layers=1, d_layers=1, d_ff=16, g_hidden=16, denoiser_hidden=16, n_samples=4,
            train={"batch_size": 16, "progress": False})
HEADER = "date,x0,x1\n"


@pytest.fixture(scope="module")
def series():
    return synthetic_nonstationary(120, 2, seed=0)  # hourly, columns x0, x1


@pytest.fixture(scope="module")
def model(series):
    return NsDiff(**TINY).fit(series, max_steps=2)


@pytest.fixture(scope="module")
def files(tmp_path_factory, model, series):
    """A saved run and one file per kind of broken input (plus a good CSV and the run's own forecast)."""
    d = tmp_path_factory.mktemp("ts")
    model.save(d / "run")
    series.rename_axis("date").to_csv(d / "good.csv")
    texts = {
        "nodate.csv": "a,b\n1,2\n3,4\n",
        "baddate.csv": HEADER + "notadate,1,2\nalso,3,4\n",
        "strings.csv": HEADER + "2020-01-01,1,2\n2020-01-02,abc,4\n2020-01-03,1,1\n",
        "dupcols.csv": "date,x0,x0\n2020-01-01,1,2\n2020-01-02,3,4\n",
        "dupts.csv": HEADER + "2020-01-01,1,2\n2020-01-01,3,4\n",
        "empty.csv": "",
        "header.csv": HEADER,
        "onerow.csv": HEADER + "2020-01-01,1,2\n",
        "nan.csv": HEADER + "2020-01-01,1,2\n2020-01-02,,4\n",
        "inf.csv": HEADER + "2020-01-01,1,2\n2020-01-02,1,-inf\n",
        "fake.nc": "this is not a NetCDF file",
        "cfg.json": json.dumps({**TINY, "train": {"max_steps": 1, "batch_size": 16, "progress": False}}),
        "unknown.json": json.dumps({"colour": "red"}),
        "method.json": json.dumps({**TINY, "method": "rk9"}),
    }
    for name, text in texts.items():
        (d / name).write_text(text)
    (d / "image.csv").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    (d / "obj.csv").write_bytes(pickle.dumps({"x0": [1.0, 2.0]}))
    (d / "folder.csv").mkdir()
    series.iloc[:30].rename(columns={"x1": "y"}).rename_axis("date").to_csv(d / "othercols.csv")
    series.iloc[:10].rename_axis("date").to_csv(d / "short.csv")  # < context_length + horizon = 20 rows
    good_nc = d / "good.nc"
    series.iloc[:40].to_xarray().to_netcdf(good_nc)
    (d / "truncated.nc").write_bytes(good_nc.read_bytes()[: good_nc.stat().st_size // 2])
    model.sample(series, n_samples=2, seed=0).to_netcdf(d / "forecast.nc")  # dims (sample, time, variable)
    return d


# ------------------------------------------------------------------ Python API
def _with(df: pd.DataFrame, row: int, col: int, value) -> pd.DataFrame:
    out = df.copy()
    if isinstance(value, str):
        out[out.columns[col]] = out[out.columns[col]].astype(object)
    out.iloc[row, col] = value
    return out


@pytest.mark.parametrize(("broken", "match"), [
    (lambda s: s.reset_index(drop=True), r"context must be indexed by timestamps \(a DatetimeIndex\), got a RangeIndex"),
    (lambda s: s.set_axis([f"r{i}" for i in range(len(s))]), "context must be indexed by timestamps"),
    (lambda s: _with(s, 3, 0, "abc"), r"context: non-numeric column\(s\) \['x0'\]"),
    (lambda s: s.set_axis(["x0", "x0"], axis=1), r"context: duplicate column name\(s\) \['x0'\]"),
    (lambda s: pd.concat([s.iloc[:1], s]), r"duplicate timestamp 2020-01-01 00:00:00 \(row 1\)"),
    (lambda s: s.iloc[::-1], "timestamps are not increasing at row 1"),
    (lambda s: _with(s, 5, 1, np.nan), r"column 'x1' has a non-finite value \(nan\) at 2020-01-01 05:00:00"),
    (lambda s: _with(s, 2, 0, np.inf), r"column 'x0' has a non-finite value \(inf\)"),
    (lambda s: s.iloc[:5], "context has 5 rows; context_length = 16 are needed"),
    (lambda s: s.rename(columns={"x1": "y"}), r"missing \['x1'\], unexpected \['y'\]"),
    (lambda s: s.assign(x2=1.0), r"unexpected \['x2'\]\); expected \['x0', 'x1'\]"),
    (lambda s: s[["x1", "x0"]], "same names, different order"),
    (lambda s: s.iloc[:0], "context has no rows"),
    (lambda s: s.to_numpy(), "expected a pandas DataFrame or an xarray Dataset/DataArray, got ndarray"),
])
def test_bad_context_frames(model, series, broken, match):
    with pytest.raises(InvalidInputError, match=match):
        model.sample(broken(series), n_samples=2)


@pytest.mark.parametrize(("options", "match"), [
    ({"n_samples": 0}, "n_samples must be a positive int, got 0"),
    ({"n_samples": -1}, "n_samples must be a positive int, got -1"),
    ({"n_samples": 2.5}, "n_samples must be a positive int, got 2.5"),
    ({"steps": -2}, "steps must be a positive int, got -2"),
    ({"steps": 0}, "steps must be a positive int, got 0"),
    ({"method": "rk9"}, "unknown sampler method 'rk9'; valid: euler"),
    ({"seed": "abc"}, "seed must be an int"),
])
def test_bad_sampling_requests(model, series, options, match):
    with pytest.raises(InvalidInputError, match=match):
        model.sample(series, **{"n_samples": 2, **options})


@pytest.mark.parametrize(("options", "match"), [
    ({"n_samples": 0}, "n_samples must be a positive int, got 0"),  # was silently replaced by config.n_samples
    ({"n_samples": -1}, "n_samples must be a positive int, got -1"),
    ({"stride": 0}, "stride must be a positive int, got 0"),  # was silently replaced by config.stride
    ({"max_windows": 0}, "max_windows must be a positive int, got 0"),
    ({"method": "consistency"}, "unknown sampler method 'consistency'"),
])
def test_bad_evaluation_requests(model, series, options, match):
    with pytest.raises(InvalidInputError, match=match):
        model.evaluate(series, **options)


def test_bad_training_requests(series):
    cases = [
        (lambda: NsDiff(**TINY).fit(series.iloc[:1]), "data has 1 rows; at least 20 are needed"),
        (lambda: NsDiff(**TINY).fit(series.assign(x1=3.0)), r"column\(s\) \['x1'\] are constant"),
        (lambda: NsDiff(**TINY).fit(series.set_axis(["x0", "x0"], axis=1)), r"duplicate column name\(s\) \['x0'\]"),
        (lambda: NsDiff(**TINY).fit(series.reset_index(drop=True)), "data must be indexed by timestamps"),
        (lambda: NsDiff(**TINY).fit(series, max_steps=0), "max_steps"),
        (lambda: NsDiff(**TINY).fit(series, max_steps=1, batch_size=0), "batch_size"),
        (lambda: NsDiff(**TINY).fit(series, max_steps=1, epochs=3), r"unknown training option\(s\) \['epochs'\]"),
        (lambda: NsDiff(**TINY).fit(series, max_steps=1, parts=("h",)), r"parts must be .*got \['h'\]"),
        (lambda: NsDiff(**TINY).fit(series, max_steps=1, val_data=series.rename(columns={"x0": "a"})),
         r"val_data: columns do not match .*unexpected \['a'\]"),
        (lambda: NsDiff(**TINY, colour="red"), r"NsDiffConfig.colour: unknown field"),
        (lambda: NsDiff(**{**TINY, "horizon": 0}), r"NsDiffConfig.horizon"),
        (lambda: NsDiff(**{**TINY, "n_samples": -1}), r"NsDiffConfig.n_samples"),
        (lambda: NsDiff(**TINY, method="rk9"), "unknown sampler method 'rk9'"),
        (lambda: NsDiff(**{**TINY, "rolling_length": 20}), "rolling_length 20 must not exceed context_length 16"),
    ]
    for call, match in cases:
        with pytest.raises(InvalidInputError, match=match):
            call()
    with pytest.raises(NotTrainedError, match="untrained"):
        NsDiff(**TINY).sample(series, n_samples=2)


@pytest.mark.parametrize(("name", "match"), [
    ("nodate.csv", r"nodate.csv: expected a 'date' column first, got columns \['a', 'b'\]"),
    ("baddate.csv", r"baddate.csv: column 'date' does not parse as timestamps .*notadate"),
    ("strings.csv", r"strings.csv\): non-numeric column\(s\) \['x0'\]"),
    ("dupcols.csv", r"dupcols.csv: duplicate column name\(s\) \['x0'\] in the header"),  # was renamed x0.1
    ("dupts.csv", r"dupts.csv\): duplicate timestamp 2020-01-01"),
    ("empty.csv", "empty.csv: cannot read as CSV"),
    ("header.csv", r"header.csv\) has no rows"),  # was "non-numeric column(s)"
    ("nan.csv", r"nan.csv\): column 'x0' has a non-finite value \(nan\) at 2020-01-02"),
    ("inf.csv", r"inf.csv\): column 'x1' has a non-finite value \(-inf\)"),
    ("image.csv", "image.csv: cannot read as CSV"),
    ("obj.csv", "obj.csv: cannot read as CSV"),
    ("folder.csv", "folder.csv: no such file"),
    ("missing.csv", "missing.csv: no such file"),
    ("fake.nc", "fake.nc: cannot read as NetCDF"),  # was xarray's ValueError, not naming the file
    ("truncated.nc", "truncated.nc: cannot read as NetCDF"),
    ("missing.nc", "missing.nc: no such file"),  # was a bare FileNotFoundError
    ("forecast.nc", r"forecast.nc: every variable of the xarray Dataset must be 1-D over time; \['forecast'\]"),
])
def test_bad_data_files(files, name, match):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no pandas/xarray warning on the way to the error either
        with pytest.raises(InvalidInputError, match=match):
            NsDiff.read_data(files / name)


def test_errors_after_reading_name_the_file(files, model):
    """A file that reads but cannot serve (one row, other columns, too short) is named in the later error."""
    with pytest.raises(InvalidInputError, match=r"data \(.*onerow.csv\) has 1 rows; at least 20"):
        NsDiff(**TINY).fit(NsDiff.read_data(files / "onerow.csv"))
    with pytest.raises(InvalidInputError, match=r"data \(.*othercols.csv\): columns do not match.*missing \['x1'\]"):
        model.evaluate(NsDiff.read_data(files / "othercols.csv"))
    with pytest.raises(InvalidInputError, match=r"data \(.*short.csv\) has 10 rows; context_length \+ horizon"):
        model.evaluate(NsDiff.read_data(files / "short.csv"))
    with pytest.raises(InvalidInputError, match=r"context \(.*short.csv\) has 10 rows; context_length = 16"):
        model.sample(NsDiff.read_data(files / "short.csv"), n_samples=2)
    assert NsDiff.read_data(files / "good.nc").shape == (40, 2)  # the NetCDF reader itself works


def test_bad_saved_runs(files):
    with pytest.raises(CheckpointError, match="does not exist"):
        NsDiff.load(files / "norun")
    with pytest.raises(CheckpointError, match="got a file"):
        NsDiff.load(files / "good.csv")


# ------------------------------------------------------------------ CLI
def _cli_cases(d):
    """``(args, exception class, needles)``: the class is the one ``--debug`` lets through."""
    T = ["timeseries", "nsdiff"]
    cfg = ["--config", str(d / "cfg.json")]

    def train(name):
        return [*T, "train", "--out", str(d / f"out-{name}"), "--data", str(d / name), *cfg]

    cases = [(train(n), InvalidInputError, [n]) for n in (
        "nodate.csv", "baddate.csv", "strings.csv", "dupcols.csv", "dupts.csv", "empty.csv", "header.csv",
        "nan.csv", "inf.csv", "image.csv", "obj.csv", "folder.csv", "missing.csv", "fake.nc", "truncated.nc",
        "missing.nc", "forecast.nc")]
    run, out = str(d / "run"), str(d / "s.csv")
    cases += [
        (train("onerow.csv"), InvalidInputError, ["onerow.csv", "1 rows"]),
        ([*T, "train", "--out", str(d / "o1"), "--config", str(d / "unknown.json")], InvalidInputError, ["colour"]),
        ([*T, "train", "--out", str(d / "o2"), "--config", str(d / "method.json")], InvalidInputError, ["'rk9'"]),
        ([*T, "train", "--out", str(d / "o3"), "--data", str(d / "good.csv"), *cfg, "--max-steps", "-2"],
         InvalidInputError, ["max_steps", "-2"]),
        ([*T, "train", "--out", str(d / "o4"), "--preset", "huge"], UnknownNameError, ["'huge'"]),
        ([*T, "evaluate", "--run", run, "--data", str(d / "othercols.csv")], InvalidInputError, ["othercols.csv", "'y'"]),
        ([*T, "evaluate", "--run", run, "--data", str(d / "short.csv")], InvalidInputError, ["short.csv", "10 rows"]),
        ([*T, "evaluate", "--run", run, "--data", str(d / "fake.nc")], InvalidInputError, ["fake.nc", "NetCDF"]),
        ([*T, "evaluate", "--run", run, "--data", str(d / "dupts.csv")], InvalidInputError, ["dupts.csv", "duplicate"]),
        ([*T, "sample", "--run", run, "--out", out, "--n-samples", "0"], InvalidInputError, ["--n-samples", "0"]),
        ([*T, "sample", "--run", run, "--out", out, "--n-samples", "-1"], InvalidInputError, ["--n-samples", "-1"]),
        ([*T, "sample", "--run", str(d / "norun"), "--out", out], CheckpointError, ["norun"]),
        ([*T, "sample", "--run", str(d / "good.csv"), "--out", out], CheckpointError, ["good.csv", "got a file"]),
    ]
    return cases


def test_cli_bad_inputs_are_one_line_errors_of_a_named_class(files, monkeypatch):
    cases = _cli_cases(files)
    assert len(cases) >= 20
    for args, error, needles in cases:
        assert_one_line_error(cli(*args), *needles)
        with monkeypatch.context() as m:
            m.setenv("SCIGEN_DEBUG", "1")  # the error itself comes through: its class is the named one
            res = cli(*args)
        assert isinstance(res.exception, error), (args, type(res.exception), res.exception)
    assert not (files / "s.csv").exists()
    assert not any(files.glob("out-*")) and not any(files.glob("o[0-9]"))


def test_kill_9_during_cli_sample_leaves_no_file_under_the_final_name(files):
    """``scigen timeseries nsdiff sample --out x.csv`` killed mid-write: no (partial) x.csv.

    The CSV is polled for, under its final name or the writer's temporary one, and the process is
    killed the moment either appears, i.e. while pandas is writing (a 40,000-row CSV, ~0.5 s)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    n, rows = 5000, 5000 * TINY["horizon"] * 2
    out = files / "x.csv"
    cmd = [sys.executable, "-m", "scigen.core.cli", "timeseries", "nsdiff", "sample", "--run", str(files / "run"),
           "--out", str(out), "--n-samples", str(n)]
    killed_mid_write = 0
    for _ in range(3):  # until one kill lands mid-write (the first one does, unless the machine stalls)
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists() or any(files.glob(".x.*.tmp.csv")):
                break
            time.sleep(0.002)
        mid_write = proc.poll() is None and not out.exists()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        if out.exists():  # finished before the kill: then the file must be whole
            assert out.stat().st_size > 0 and len(pd.read_csv(out)) == rows
            out.unlink()
        else:
            killed_mid_write += mid_write
        if killed_mid_write:
            break
    assert killed_mid_write >= 1  # the kill did land while the CSV was being written
