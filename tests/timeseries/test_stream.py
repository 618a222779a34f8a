"""Series larger than memory (``scigen.timeseries.data.stream``): chunked tables, file-backed windows.

References: :func:`~scigen.timeseries.data.as_frame` + :class:`~scigen.timeseries.data.Standardizer` of the whole
table in memory (the streaming statistics), :func:`~scigen.timeseries.data.make_windows` (the windows, bit for
bit) and NsDiff / D3U trained on the same data as a DataFrame (the weights, same seed). The memory test
measures peak RSS in a child process for 1x and 4x the rows.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.timeseries.data import (
    Standardizer,
    as_frame,
    make_windows,
    synthetic_nonstationary,
    time_features,
)
from scigen.timeseries.data.stream import WindowRows, open_series

QUIET = {"progress": False, "logger": None}


def _write_csv(df: pd.DataFrame, path) -> None:
    df.rename_axis("date").reset_index().to_csv(path, index=False, float_format="%.17g")


@pytest.fixture(scope="module")
def table():
    return synthetic_nonstationary(700, 3, seed=2)


def test_chunked_csv_equals_the_frame_in_memory(tmp_path, table):
    path = tmp_path / "s.csv"
    _write_csv(table, path)
    s = open_series(path, chunk_rows=97)  # many chunks, boundaries inside the series
    df = as_frame(table)
    ref = Standardizer.fit(df)
    assert s.n_rows == len(df) and s.columns == list(df.columns)
    np.testing.assert_allclose(s.mean, ref.mean, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(s.std, ref.std, rtol=1e-12)
    pd.testing.assert_frame_equal(s.frame(95, 310), df.iloc[95:310], check_freq=False)
    assert s.step() == pd.Timedelta("1h")
    again = open_series(path, chunk_rows=97)  # the cache is reused while the table is unchanged
    assert (path.parent / "s.csv.scigen-series" / "values.f64").stat().st_mtime_ns == \
        (tmp_path / "s.csv.scigen-series" / "values.f64").stat().st_mtime_ns
    np.testing.assert_array_equal(again.mean, s.mean)


def test_parquet_and_npy_series(tmp_path, table):
    pq = tmp_path / "s.parquet"
    table.rename_axis("date").reset_index().to_parquet(pq)
    s = open_series(pq, chunk_rows=128)
    np.testing.assert_array_equal(s.rows(0, len(table)), table.to_numpy())
    npy = tmp_path / "s.npy"
    np.save(npy, table.to_numpy())
    m = open_series(npy, start="2020-01-01", freq="1h", columns=list(table.columns), chunk_rows=50)
    pd.testing.assert_frame_equal(m.frame(0, 40), as_frame(table).iloc[:40], check_freq=False)
    np.testing.assert_allclose(m.std, Standardizer.fit(table).std, rtol=1e-12)
    with pytest.raises(InvalidInputError, match="start="):
        open_series(npy)


def test_bad_rows_are_named_in_any_chunk(tmp_path, table):
    bad = table.copy()
    bad.iloc[250, 1] = np.nan
    path = tmp_path / "nan.csv"
    _write_csv(bad, path)
    with pytest.raises(InvalidInputError, match=r"non-finite value .* \(row 250\)"):
        open_series(path, chunk_rows=64)
    swapped = table.copy()
    idx = swapped.index.to_numpy().copy()
    idx[300], idx[301] = idx[301], idx[300]
    swapped.index = pd.DatetimeIndex(idx)
    path = tmp_path / "order.csv"
    _write_csv(swapped, path)
    with pytest.raises(InvalidInputError, match="decreasing timestamp .* at row 301"):
        open_series(path, chunk_rows=64)


@pytest.mark.parametrize("stride", [1, 3])
def test_window_rows_equal_make_windows_bit_for_bit(tmp_path, table, stride):
    path = tmp_path / "s.csv"
    _write_csv(table, path)
    s = open_series(path)
    scaler = Standardizer.fit(as_frame(table))  # the same statistics: the windows must then match exactly
    C, H = 24, 8
    rows = WindowRows(s, scaler, C, H, stride, marks_step="1h")
    X, Y, _ = make_windows(scaler.transform(table.to_numpy()), C, H, stride)
    assert len(rows) == len(X)
    w = np.array([0, 5, len(X) - 1, 5])
    got = rows.__getitems__(w)
    N = table.shape[1]
    assert torch.equal(got[:, :C, :N], torch.as_tensor(X[w], dtype=torch.float32))
    assert torch.equal(got[:, C:, :N], torch.as_tensor(Y[w], dtype=torch.float32))
    y = torch.as_tensor(Y, dtype=torch.float32)
    assert rows.target_range(chunk_rows=41) == (float(y.min()), float(y.max()))  # exactly: the same float32 values
    marks = time_features(table.index, pd.Timedelta("1h"))
    Xm, Ym, _ = make_windows(marks, C, H, stride)
    assert torch.equal(got[:, :C, N:], torch.as_tensor(Xm[w], dtype=torch.float32))


def _params(system):
    return [p.detach().clone() for p in system.network.parameters()]


def test_nsdiff_streamed_trains_like_in_memory(tmp_path, table):
    from scigen.timeseries import NsDiff

    path = tmp_path / "s.csv"
    _write_csv(table, path)
    cfg = dict(context_length=24, horizon=8, rolling_length=6, d_model=8, n_heads=2, d_ff=16, g_hidden=16,
               denoiser_hidden=16, steps=5)
    kw = dict(max_steps=5, batch_size=32, seed=1, **QUIET)
    mem = NsDiff(NsDiff.Config.preset("tiny", **cfg)).fit(table, **kw)
    disk = NsDiff(NsDiff.Config.preset("tiny", **cfg)).fit(open_series(path, chunk_rows=100), num_workers=1, **kw)
    np.testing.assert_allclose(disk.scaler.mean, mem.scaler.mean, rtol=1e-13)
    assert disk.metadata["step"] == mem.metadata["step"]
    assert disk.metadata["last_context"] == mem.metadata["last_context"]
    np.testing.assert_allclose(disk.metadata["y0_range"], mem.metadata["y0_range"], rtol=1e-6)  # scaler: rounding
    np.testing.assert_allclose(disk.history.losses, mem.history.losses, rtol=1e-5)
    for p, q in zip(_params(disk), _params(mem), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("forecaster", ["patchtst", "nstransformer"])
def test_d3u_streamed_trains_like_in_memory(tmp_path, table, forecaster):
    from scigen.timeseries import D3U

    path = tmp_path / "s.csv"
    _write_csv(table, path)
    cfg = dict(context_length=16, horizon=5, f_d_model=8, f_n_heads=2, f_e_layers=1, f_d_ff=16, d_model=8,
               n_heads=2, t_embed_dim=16, n_samples=8, steps=5, forecaster=forecaster, calibrate=False)
    kw = dict(max_steps=6, batch_size=32, seed=1, **QUIET)
    mem = D3U(**cfg).fit(table, **kw)
    disk = D3U(**cfg).fit(open_series(path), **kw)
    assert disk.metadata.get("time_features") == mem.metadata.get("time_features")
    np.testing.assert_allclose(disk.history.losses, mem.history.losses, rtol=1e-5)
    for p, q in zip(_params(disk), _params(mem), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)


# ---- peak RSS does not grow with the data ------------------------------------------------------------------
def write_series_parquet(path, n_rows: int, n_vars: int, seed: int = 0, chunk: int = 50_000) -> int:
    """A random-walk series of ``n_rows x n_vars`` written row group by row group (never whole in memory);
    returns the float64 bytes of its values."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    start, level, writer = pd.Timestamp("2020-01-01"), np.zeros(n_vars), None
    for a in range(0, n_rows, chunk):
        b = min(a + chunk, n_rows)
        x = level + np.cumsum(rng.normal(size=(b - a, n_vars)), axis=0)
        level = x[-1]
        df = pd.DataFrame(x, columns=[f"v{j}" for j in range(n_vars)])
        df.insert(0, "date", start + pd.to_timedelta(np.arange(a, b), unit="min"))
        table = pa.Table.from_pandas(df, preserve_index=False)
        writer = writer or pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    writer.close()
    return n_rows * n_vars * 8


_CHILD = textwrap.dedent("""
    import json, resource, sys
    import torch
    torch.set_num_threads(1)
    from scigen.timeseries import NsDiff
    from scigen.timeseries.data.stream import open_series
    series = open_series(sys.argv[1])
    cfg = NsDiff.Config.preset("tiny", context_length=48, horizon=12, rolling_length=12, steps=5)
    NsDiff(cfg).fit(series, max_steps=10, batch_size=32, seed=0, progress=False, logger=None)
    print(json.dumps({"maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
""")


def peak_rss_mb(path) -> float:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])["maxrss_mb"]


def test_streamed_training_peak_rss_does_not_grow_with_the_data(tmp_path):
    """1x and 4x the rows (100,000 and 400,000 rows of 40 variables: 32 and 128 MB as float64; as windows in
    memory, ``context + horizon`` = 60 times that): the 4x run's peak RSS exceeds the 1x run's by less than a
    third of the extra data (32 MB). The series' statistics come from the chunked pass, the windows are read per
    batch, so nothing in memory scales with the rows."""
    sizes, rss = {}, {}
    for factor in (1, 4):
        path = tmp_path / f"s{factor}.parquet"
        sizes[factor] = write_series_parquet(path, 100_000 * factor, 40)
        rss[factor] = peak_rss_mb(path)
    extra_mb = (sizes[4] - sizes[1]) / 2**20
    assert rss[4] - rss[1] < extra_mb / 3, (rss, extra_mb)
