"""Data layer: windows, splits, train-only standardisation, loaders on schema-true files, bad inputs."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from scigen.core.errors import InvalidInputError
from scigen.timeseries.data import (
    Standardizer,
    as_frame,
    check_columns,
    load_benchmark_csv,
    load_ett,
    load_lstnet_txt,
    macrodata,
    make_windows,
    split_ett,
    split_ratio,
    synthetic_nonstationary,
)


# ---------------------------------------------------------------- windows
def test_windows_brute_force():
    v = np.arange(30, dtype=float).reshape(15, 2)
    X, Y, starts = make_windows(v, context=4, horizon=3, stride=2)
    expected = list(range(0, 15 - 7 + 1, 2))
    assert starts.tolist() == expected
    for w, s in enumerate(expected):
        np.testing.assert_array_equal(X[w], v[s : s + 4])
        np.testing.assert_array_equal(Y[w], v[s + 4 : s + 7])


def test_windows_reject_short_series_and_bad_sizes():
    v = np.zeros((10, 1))
    with pytest.raises(InvalidInputError, match="shorter than context"):
        make_windows(v, 8, 3)
    with pytest.raises(InvalidInputError, match="stride"):
        make_windows(v, 2, 2, stride=0)


# ---------------------------------------------------------------- splits
def _hourly(n, cols=("a", "b")):
    idx = pd.date_range("2016-07-01", periods=n, freq="1h")
    return pd.DataFrame(np.random.default_rng(0).normal(size=(n, len(cols))), index=idx, columns=list(cols))


def test_ett_split_months_hourly_and_15min():
    ctx = 96
    for freq, per_day in (("1h", 24), ("15min", 96)):
        n = 20 * 30 * per_day + 50
        idx = pd.date_range("2016-07-01", periods=n, freq=freq)
        df = pd.DataFrame({"x": np.arange(n, dtype=float)}, index=idx)
        s = split_ett(df, ctx)
        m = 30 * per_day
        assert len(s.train) == 12 * m
        assert s.val.index[0] == idx[12 * m - ctx] and len(s.val) == 4 * m + ctx
        assert s.test.index[-1] == idx[20 * m - 1] and len(s.test) == 4 * m + ctx


def test_ratio_split_autoformer_convention():
    df = _hourly(1000)
    s = split_ratio(df, context=10)
    assert len(s.train) == 700
    assert s.val.index[10] == df.index[700] and s.val.index[-1] == df.index[799]
    assert s.test.index[10] == df.index[800] and len(s.test) == 210
    with pytest.raises(InvalidInputError, match="context 800 is longer"):
        split_ratio(df, context=800)


def test_standardizer_uses_train_rows_only():
    df = _hourly(100)
    df.iloc[70:] += 100.0  # a shift after the training rows must not leak into the statistics
    sc = Standardizer.fit(df.iloc[:70])
    z = sc.transform(df.to_numpy())
    np.testing.assert_allclose(z[:70].mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(z[:70].std(0), 1, atol=1e-12)
    assert z[70:].mean() > 10
    np.testing.assert_allclose(sc.inverse(z), df.to_numpy(), atol=1e-10)
    assert Standardizer.from_dict(sc.to_dict()).std.tolist() == sc.std.tolist()


def test_standardizer_names_constant_column():
    df = _hourly(50, cols=("a", "flat"))
    df["flat"] = 3.0
    with pytest.raises(InvalidInputError, match=r"\['flat'\].*constant"):
        Standardizer.fit(df)


# ---------------------------------------------------------------- validation
def test_bad_inputs_name_the_culprit():
    df = _hourly(20)
    with pytest.raises(InvalidInputError, match="duplicate timestamp 2016-07-01 03:00"):
        as_frame(pd.concat([df.iloc[:4], df.iloc[3:]]))
    rev = df.iloc[[0, 1, 3, 2, 4]]
    with pytest.raises(InvalidInputError, match="not increasing at row 3"):
        as_frame(rev)
    nan = df.copy()
    nan.iloc[5, 1] = np.nan
    with pytest.raises(InvalidInputError, match="column 'b'.*row 5"):
        as_frame(nan)
    inf = df.copy()
    inf.iloc[2, 0] = np.inf
    with pytest.raises(InvalidInputError, match="column 'a'.*inf"):
        as_frame(inf)
    with pytest.raises(InvalidInputError, match="DatetimeIndex"):
        as_frame(pd.DataFrame({"date": ["x", "y"], "a": [1.0, 2.0]}))
    s = df.copy()
    s["c"] = "text"
    with pytest.raises(InvalidInputError, match=r"non-numeric column\(s\) \['c'\]"):
        as_frame(s)
    with pytest.raises(InvalidInputError, match=r"missing \['b'\], unexpected \['z'\]"):
        check_columns(df.rename(columns={"b": "z"}), ["a", "b"])
    with pytest.raises(InvalidInputError, match="pandas DataFrame or an xarray"):
        as_frame(np.zeros((3, 2)))


def test_xarray_inputs_round_trip():
    df = _hourly(12)
    da = xr.DataArray(df.to_numpy(), dims=("time", "variable"),
                      coords={"time": df.index, "variable": list(df.columns)})
    pd.testing.assert_frame_equal(as_frame(da), as_frame(df))
    ds = xr.Dataset({c: ("time", df[c].to_numpy()) for c in df.columns}, coords={"time": df.index})
    np.testing.assert_array_equal(as_frame(ds).to_numpy(), df.to_numpy())


# ---------------------------------------------------------------- loaders on schema-true files
def test_load_ett_schema(tmp_path):
    idx = pd.date_range("2016-07-01", periods=48, freq="1h")
    cols = ["HUFL", "HULL", "MUFL", "MULL", "LUFL", "LULL", "OT"]
    vals = np.random.default_rng(1).normal(size=(48, 7)).round(3)
    text = "date," + ",".join(cols) + "\n" + "\n".join(
        idx[i].strftime("%Y-%m-%d %H:%M:%S") + "," + ",".join(f"{v:.3f}" for v in vals[i]) for i in range(48))
    (tmp_path / "ETTh1.csv").write_text(text + "\n")
    df = load_ett(tmp_path / "ETTh1.csv")
    assert list(df.columns) == cols and df.index[0] == pd.Timestamp("2016-07-01") and df.index.freq is None
    np.testing.assert_allclose(df.to_numpy(), vals)
    bad = tmp_path / "ETTh2.csv"
    bad.write_text(text.replace("OT", "XX", 1) + "\n")
    with pytest.raises(InvalidInputError, match="ETT columns must be"):
        load_ett(bad)


def test_load_benchmark_csv_weather_and_ili_schema(tmp_path):
    cols = ["p (mbar)", "T (degC)", "rh (%)", "OT"]
    idx = pd.date_range("2020-01-01 00:10", periods=30, freq="10min")
    df = pd.DataFrame(np.random.default_rng(2).normal(size=(30, 4)), columns=cols)
    df.insert(0, "date", idx.strftime("%Y-%m-%d %H:%M:%S"))
    df.to_csv(tmp_path / "weather.csv", index=False)
    out = load_benchmark_csv(tmp_path / "weather.csv")
    assert list(out.columns) == cols and (out.index == idx).all()
    ili = pd.DataFrame({"date": ["2002-01-01", "2002-01-08", "2002-01-15"], "% WEIGHTED ILI": [1.2, 1.1, 1.3],
                        "ILITOTAL": [6000, 6100, 6200], "OT": [0.1, 0.2, 0.3]})
    ili.to_csv(tmp_path / "national_illness.csv", index=False)
    out = load_benchmark_csv(tmp_path / "national_illness.csv")
    assert out.shape == (3, 3) and out.index[1] == pd.Timestamp("2002-01-08")
    dup = pd.concat([ili, ili.iloc[[1]]]).sort_values("date")
    dup.to_csv(tmp_path / "dup.csv", index=False)
    with pytest.raises(InvalidInputError, match="dup.csv.*duplicate timestamp 2002-01-08"):
        load_benchmark_csv(tmp_path / "dup.csv")


def test_load_lstnet_txt_gz_rebuilds_the_clock(tmp_path):
    vals = np.random.default_rng(3).uniform(size=(20, 5)).round(4)
    with gzip.open(tmp_path / "solar_AL.txt.gz", "wt") as f:
        f.write("\n".join(",".join(f"{v:.4f}" for v in row) for row in vals) + "\n")
    df = load_lstnet_txt(tmp_path / "solar_AL.txt.gz")
    assert list(df.columns) == ["0", "1", "2", "3", "4"]
    assert df.index[0] == pd.Timestamp("2006-01-01") and df.index[1] - df.index[0] == pd.Timedelta("10min")
    np.testing.assert_allclose(df.to_numpy(), vals)
    (tmp_path / "other.txt").write_text("1,2\n3,4\n")
    with pytest.raises(InvalidInputError, match="start= and freq="):
        load_lstnet_txt(tmp_path / "other.txt")


def test_catalog_name_resolves_in_the_cache(monkeypatch, tmp_path):
    from scigen.datasets import DataNotAvailableError

    monkeypatch.setenv("SCIGEN_DATA", str(tmp_path))
    with pytest.raises(DataNotAvailableError, match="ETTm2"):
        load_ett("ETTm2")
    (tmp_path / "ETTm2").mkdir()
    idx = pd.date_range("2016-07-01", periods=8, freq="15min").strftime("%Y-%m-%d %H:%M:%S")
    rows = "\n".join(f"{d},1,2,3,4,5,6,{i}" for i, d in enumerate(idx))
    (tmp_path / "ETTm2" / "ETTm2.csv").write_text("date,HUFL,HULL,MUFL,MULL,LUFL,LULL,OT\n" + rows + "\n")
    df = load_ett("ETTm2")
    assert df.shape == (8, 7) and df["OT"].tolist() == list(range(8))


# ---------------------------------------------------------------- offline data
def test_synthetic_is_seeded_and_its_variance_drifts():
    a = synthetic_nonstationary(3000, 2, seed=5)
    pd.testing.assert_frame_equal(a, synthetic_nonstationary(3000, 2, seed=5))
    assert not np.allclose(a.to_numpy(), synthetic_nonstationary(3000, 2, seed=6).to_numpy())
    df, mean, scale = synthetic_nonstationary(20000, 3, seed=0, return_components=True)
    u = ((df - mean) / scale).to_numpy()
    # standardised innovations: unit variance, AR(1) with rho = 0.6, cross-correlation 0.5
    np.testing.assert_allclose(u.var(0), 1.0, atol=0.06)
    np.testing.assert_allclose(np.corrcoef(u[1:, 0], u[:-1, 0])[0, 1], 0.6, atol=0.03)
    np.testing.assert_allclose(np.corrcoef(u.T)[0, 1], 0.5, atol=0.03)
    assert scale.iloc[-1000:].mean().min() > 2 * scale.iloc[:1000].mean().max() * 0.8


def test_macrodata_from_the_statsmodels_wheel():
    df = macrodata(["realgdp", "infl"])
    assert df.shape == (203, 2)
    assert df.index[0] == pd.Timestamp("1959-01-01") and df.index[-1] == pd.Timestamp("2009-07-01")
    assert df["realgdp"].iloc[0] == pytest.approx(2710.349)
    with pytest.raises(InvalidInputError, match="nope"):
        macrodata(["nope"])


def test_macrodata_without_statsmodels_names_the_extra(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "statsmodels" else real(name, *a))
    with pytest.raises(InvalidInputError, match=r"pip install 'scigen-timeseries\[macrodata\]'"):
        macrodata(["realgdp"])
