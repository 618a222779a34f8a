"""Hostile inputs to D3U (timeseries) through the Python API and the CLI: the NsDiff cases (index, NaN, constant
columns, short frames, mismatched columns) plus broken user forecasters, each a named error before training."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from scigen.core.errors import InvalidInputError, NotTrainedError
from scigen.timeseries import D3U
from scigen.timeseries.data import synthetic_nonstationary

from .helpers import assert_one_line_error, cli

TINY = dict(context_length=16, horizon=4, f_d_model=8, f_n_heads=2, f_e_layers=1, f_d_ff=16, d_model=8, n_heads=2,
            t_embed_dim=16, n_samples=4, steps=4, train={"batch_size": 16, "progress": False})


@pytest.fixture(scope="module")
def series():
    return synthetic_nonstationary(120, 2, seed=0)


@pytest.fixture(scope="module")
def model(series):
    return D3U(**TINY).fit(series, max_steps=2)


def _with(df, row, col, value):
    out = df.copy()
    out.iloc[row, col] = value
    return out


@pytest.mark.parametrize(("broken", "match"), [
    (lambda s: s.reset_index(drop=True), r"context must be indexed by timestamps \(a DatetimeIndex\)"),
    (lambda s: _with(s, 5, 1, np.nan), r"column 'x1' has a non-finite value \(nan\)"),
    (lambda s: s.iloc[:5], "context has 5 rows; context_length = 16 are needed"),
    (lambda s: s.rename(columns={"x1": "y"}), r"missing \['x1'\], unexpected \['y'\]"),
    (lambda s: s[["x1", "x0"]], "same names, different order"),
])
def test_bad_context_frames(model, series, broken, match):
    with pytest.raises(InvalidInputError, match=match):
        model.sample(broken(series), n_samples=2)


@pytest.mark.parametrize(("options", "match"), [
    ({"n_samples": 0}, "n_samples must be a positive int, got 0"),
    ({"steps": 0}, "steps must be a positive int, got 0"),
    ({"method": "consistency"}, "unknown sampler method 'consistency'"),
    ({"seed": "abc"}, "seed must be an int"),
])
def test_bad_sampling_requests(model, series, options, match):
    with pytest.raises(InvalidInputError, match=match):
        model.sample(series, **{"n_samples": 2, **options})


class _Shape(nn.Module):
    def __init__(self, out):
        super().__init__()
        self.w = nn.Parameter(torch.ones(()))
        self.out = out

    def forward(self, x):
        return self.out(x) * self.w


@pytest.mark.parametrize(("fn", "match"), [
    (lambda x: x[:, -2:], r"returned \(\d+, 2, 2\) for an input of shape \(\d+, 16, 2\); expected \(batch, horizon, "
                          r"variables\) = \(\d+, 4, 2\)"),
    (lambda x: x[:, -4:, :1], r"returned \(\d+, 4, 1\).*= \(\d+, 4, 2\)"),
    (lambda x: x[:, -4:] * float("nan"), "returned non-finite values"),
    (lambda x: x[:, -4:].flatten(1), r"returned \(\d+, 8\)"),
    (lambda x: x @ torch.ones(3, 3), "failed on a batch of shape"),
])
def test_broken_user_forecasters_are_refused_before_training(series, fn, match):
    m = D3U(forecaster=_Shape(fn), **TINY)
    with pytest.raises(InvalidInputError, match=match):
        m.fit(series, max_steps=2)
    assert m.history.steps == 0


def test_bad_training_requests(series):
    cases = [
        (lambda: D3U(**TINY).fit(series.iloc[:1]), "data has 1 rows; at least 20 are needed"),
        (lambda: D3U(**TINY).fit(series.assign(x1=3.0)), r"column\(s\) \['x1'\] are constant"),
        (lambda: D3U(**TINY).fit(series.reset_index(drop=True)), "data must be indexed by timestamps"),
        (lambda: D3U(**TINY).fit(_with(series, 3, 0, np.nan)), "non-finite value"),
        (lambda: D3U(**TINY).fit(series, max_steps=0), "max_steps"),
        (lambda: D3U(**TINY).fit(series, max_steps=1, val_data=series.rename(columns={"x0": "a"})),
         r"val_data: columns do not match .*unexpected \['a'\]"),
        (lambda: D3U(**TINY, colour="red"), r"D3UConfig.colour: unknown field"),
        (lambda: D3U(**{**TINY, "n_heads": 3}), "d_model 8 must be divisible by n_heads 3"),
        (lambda: D3U(**TINY, method="rk9"), "unknown sampler method 'rk9'"),
        (lambda: D3U(**{**TINY, "steps": 200}), "steps 200 must not exceed diffusion_steps 100"),
        (lambda: D3U(**TINY, forecaster=3), "forecaster must be an nn.Module"),
    ]
    for call, match in cases:
        with pytest.raises(InvalidInputError, match=match):
            call()
    with pytest.raises(NotTrainedError, match="untrained"):
        D3U(**TINY).sample(series, n_samples=2)


def test_cli_round_trip_and_bad_inputs(tmp_path, series):
    T = ["timeseries", "d3u"]
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({**TINY, "train": {"max_steps": 2, "batch_size": 16, "progress": False}}))
    series.rename_axis("date").to_csv(tmp_path / "good.csv")
    (tmp_path / "nan.csv").write_text("date,x0,x1\n2020-01-01,1,2\n2020-01-02,,4\n")
    series.iloc[:30].rename(columns={"x1": "y"}).rename_axis("date").to_csv(tmp_path / "othercols.csv")
    run = tmp_path / "run"
    res = cli(*T, "train", "--out", str(run), "--data", str(tmp_path / "good.csv"), "--config", str(cfg))
    assert res.exit_code == 0, res.output
    res = cli(*T, "sample", "--run", str(run), "--out", str(tmp_path / "fc.nc"), "--n-samples", "3")
    assert res.exit_code == 0, res.output
    import xarray as xr

    fc = xr.open_dataarray(tmp_path / "fc.nc")
    assert fc.dims == ("sample", "time", "variable") and fc.shape == (3, 4, 2)
    fc.close()
    res = cli(*T, "evaluate", "--run", str(run), "--data", str(tmp_path / "good.csv"))
    assert res.exit_code == 0 and "CRPS" in res.output, res.output
    assert_one_line_error(cli(*T, "train", "--out", str(tmp_path / "o1"), "--data", str(tmp_path / "nan.csv"),
                              "--config", str(cfg)), "nan.csv")
    assert_one_line_error(cli(*T, "evaluate", "--run", str(run), "--data", str(tmp_path / "othercols.csv")),
                          "othercols.csv", "'y'")
    assert_one_line_error(cli(*T, "sample", "--run", str(run), "--out", str(tmp_path / "s.csv"), "--n-samples", "0"),
                          "--n-samples", "0")
    assert not (tmp_path / "s.csv").exists() and not (tmp_path / "o1").exists()
    assert pd.read_csv(tmp_path / "good.csv").shape[0] == 120  # the input file is untouched
