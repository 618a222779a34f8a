"""Series larger than memory: a table read in chunks into a file-backed series, windows cut per batch.

:func:`open_series` turns a CSV or Parquet table (a ``date`` column and numeric variables, as the benchmark
files) into a :class:`SeriesFile`: one pass over the table in chunks (``pandas.read_csv(chunksize=)`` /
``pyarrow.parquet.ParquetFile.iter_batches``) (a Parquet file row group by row group: its writer's chunks) validates each chunk as :func:`~scigen.timeseries.data.as_frame`
validates a frame (timestamps parse and increase, numbers only, finite), appends the values as raw float64 and
the timestamps as int64 nanoseconds to a cache folder, and accumulates the per-column mean and variance (Chan,
Golub & LeVeque 1979's pairwise update; equal to :class:`~scigen.timeseries.data.Standardizer` of the whole
frame to float64 rounding). A ``.npy`` array ``[time, variable]`` is used in place (its header read, never
loaded), with the timestamps ``start + i·freq``.

:class:`WindowRows` is the Dataset the forecasters train on: window ``w`` is rows ``w·stride ..
w·stride + context + horizon`` of the series, standardised (float64 arithmetic, float32 result: the numbers
:func:`~scigen.timeseries.data.make_windows` gives for the frame in memory, bit for bit), optionally with the
windows' calendar marks. Rows are read with ``os.pread`` (one read per window), not through ``mmap``: pages
read stay in the OS page cache, which the process's resident memory does not count, and DataLoader workers
each open the file themselves. What stays in memory: per-column statistics and the batch being trained.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch.utils.data import Dataset

from scigen.core.errors import InvalidInputError

__all__ = ["CHUNK_BYTES", "SeriesFile", "WindowRows", "batch_as_is", "open_series"]

#: float64 bytes of one chunk of rows (the table pass, the statistics of a ``.npy``, the targets' range): a chunk
#: holds ``CHUNK_BYTES // (8 · variables)`` rows (at least 256), so the memory of a pass does not depend on the width
CHUNK_BYTES = 1 << 20


def _chunk_rows(n_cols: int, chunk_rows: int | None = None) -> int:
    return int(chunk_rows) if chunk_rows else max(256, CHUNK_BYTES // (8 * max(n_cols, 1)))
_CACHE_VERSION = 1


class _Moments:
    """Per-column count, mean and sum of squared deviations, merged chunk by chunk (Chan et al. 1979)."""

    def __init__(self, n_cols: int) -> None:
        self.n, self.mean, self.m2 = 0, np.zeros(n_cols), np.zeros(n_cols)

    def add(self, x: np.ndarray) -> None:
        nb = x.shape[0]
        if nb == 0:
            return
        mb = x.mean(0)
        m2b = ((x - mb) ** 2).sum(0)
        tot = self.n + nb
        delta = mb - self.mean
        self.mean = self.mean + delta * (nb / tot)
        self.m2 = self.m2 + m2b + delta**2 * (self.n * nb / tot)
        self.n = tot


@dataclass
class SeriesFile:
    """A multivariate series on disk: ``n_rows x len(columns)`` float64 values at byte ``offset`` of ``path``
    (C order), timestamps in ``index_path`` (int64 ns) or ``start + i·freq``; ``mean`` / ``std`` (ddof 0) of
    every column from the streaming pass."""

    path: str
    offset: int
    n_rows: int
    columns: list[str]
    mean: np.ndarray
    std: np.ndarray
    index_path: str | None = None
    start: pd.Timestamp | None = None
    freq: pd.Timedelta | None = None
    source: str = ""
    _fds: dict = field(default_factory=dict, repr=False)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_fds": {}}

    def __len__(self) -> int:
        return self.n_rows

    @property
    def n_vars(self) -> int:
        return len(self.columns)

    def _fd(self, which: str) -> int:
        key = (which, os.getpid())
        if key not in self._fds:
            self._fds[key] = os.open(self.path if which == "values" else self.index_path, os.O_RDONLY)
        return self._fds[key]

    def rows(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start .. stop-1`` as float64 ``[stop - start, n_vars]`` (one read)."""
        width = 8 * self.n_vars
        buf = os.pread(self._fd("values"), (stop - start) * width, self.offset + start * width)
        return np.frombuffer(buf, dtype="<f8").reshape(stop - start, self.n_vars)

    def times(self, start: int, stop: int) -> pd.DatetimeIndex:
        """The timestamps of rows ``start .. stop-1``."""
        if self.index_path is None:
            return pd.DatetimeIndex(self.start + np.arange(start, stop) * self.freq)
        buf = os.pread(self._fd("index"), (stop - start) * 8, start * 8)
        return pd.DatetimeIndex(np.frombuffer(buf, dtype="<i8").astype("datetime64[ns]"))

    def frame(self, start: int, stop: int) -> pd.DataFrame:
        """Rows ``start .. stop-1`` as the frame :func:`~scigen.timeseries.data.as_frame` would give."""
        out = pd.DataFrame(self.rows(start, stop).copy(), index=self.times(start, stop), columns=self.columns)
        out.index.name = "time"
        return out

    def step(self, max_rows: int = 100_000) -> pd.Timedelta:
        """The median spacing of the first ``max_rows`` timestamps (the series' time step)."""
        return pd.Series(self.times(0, min(self.n_rows, max_rows))).diff().median()

    def standardizer(self, name: str = "data"):
        """The :class:`~scigen.timeseries.data.Standardizer` of the whole series (constant columns refused)."""
        from scigen.timeseries.data.windows import Standardizer

        const = [c for c, s, m in zip(self.columns, self.std, self.mean, strict=True) if s <= 1e-12 * max(1.0, abs(m))]
        if const:
            raise InvalidInputError(f"{name}: column(s) {const} are constant over the training rows; "
                                    "they cannot be standardised (drop them)")
        return Standardizer(mean=np.asarray(self.mean, float), std=np.asarray(self.std, float),
                            columns=list(self.columns))

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()


def _check_chunk(values: np.ndarray, idx: pd.DatetimeIndex, first_row: int, last_time, columns, name: str):
    if idx.hasnans:
        raise InvalidInputError(f"{name}: the time index contains NaT at row {first_row + int(np.flatnonzero(idx.isna())[0])}")
    t = idx.asi8
    prev = np.concatenate([[last_time], t[:-1]]) if last_time is not None else np.concatenate([[t[0] - 1], t[:-1]])
    bad = np.flatnonzero(t <= prev)
    if bad.size:
        r = first_row + int(bad[0])
        what = "duplicate" if t[bad[0]] == prev[bad[0]] else "decreasing"
        raise InvalidInputError(f"{name}: {what} timestamp {idx[bad[0]]} at row {r}; timestamps must increase "
                                "(sort the table by date)")
    fin = ~np.isfinite(values)
    if fin.any():
        r, c = np.argwhere(fin)[0]
        raise InvalidInputError(f"{name}: column {columns[c]!r} has a non-finite value ({values[r, c]}) at "
                                f"{idx[r]} (row {first_row + r}); fill or drop missing values first")


def _chunks(path: Path, date_col: str, chunk_rows: int | None):
    """``DataFrame`` chunks of a CSV / Parquet table (all columns, as read); ``chunk_rows`` default from the
    header's width (:data:`CHUNK_BYTES`)."""
    if path.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:  # pragma: no cover - pyarrow is a pandas extra
            raise InvalidInputError(f"{path}: reading Parquet needs pyarrow (pip install pyarrow)") from exc
        import pyarrow as pa

        # row group by row group, each freed (and Arrow's pool trimmed) before the next: iter_batches keeps
        # read-ahead buffers that grow with the file (measured: +100 MB of resident memory per 100 MB of data)
        f = pq.ParquetFile(path, pre_buffer=False)
        chunk_rows = _chunk_rows(len(f.schema_arrow.names), chunk_rows)
        for i in range(f.num_row_groups):
            group = f.read_row_group(i)
            for batch in group.to_batches(max_chunksize=chunk_rows):
                yield batch.to_pandas()
            del group
            pa.default_memory_pool().release_unused()
    else:
        try:
            chunk_rows = _chunk_rows(len(pd.read_csv(path, nrows=0).columns), chunk_rows)
            yield from pd.read_csv(path, chunksize=chunk_rows, float_precision="round_trip")
        except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
            raise InvalidInputError(f"{path}: cannot read as CSV ({exc})") from exc


def _ingest(path: Path, cache: Path, date_col: str, chunk_rows: int | None) -> dict:
    name = str(path)
    cache.mkdir(parents=True, exist_ok=True)
    vals_tmp, idx_tmp = cache / ".values.f64.tmp", cache / ".index.i8.tmp"
    moments, columns, n, last = None, None, 0, None
    with open(vals_tmp, "wb") as fv, open(idx_tmp, "wb") as fi:
        for chunk in _chunks(path, date_col, chunk_rows):
            if date_col not in chunk.columns:
                raise InvalidInputError(f"{name}: expected a {date_col!r} column, got columns {list(chunk.columns)[:5]}")
            if columns is None:
                columns = [str(c) for c in chunk.columns if c != date_col]
                if not columns:
                    raise InvalidInputError(f"{name} has no columns besides {date_col!r}; expected at least one variable")
                nonnum = [c for c in columns if not pd.api.types.is_numeric_dtype(chunk[c])]
                if nonnum:
                    raise InvalidInputError(f"{name}: non-numeric column(s) {nonnum}; expected numbers only")
                moments = _Moments(len(columns))
            try:
                idx = pd.DatetimeIndex(pd.to_datetime(chunk[date_col]))
            except (ValueError, TypeError) as exc:
                raise InvalidInputError(f"{name}: column {date_col!r} does not parse as timestamps ({exc})") from exc
            try:
                values = chunk[columns].to_numpy(dtype=np.float64)
            except (ValueError, TypeError) as exc:
                raise InvalidInputError(f"{name}: non-numeric values after row {n} ({exc})") from exc
            _check_chunk(values, idx, n, last, columns, name)
            moments.add(values)
            fv.write(np.ascontiguousarray(values, dtype="<f8").tobytes())
            fi.write(idx.asi8.astype("<i8").tobytes())
            last, n = int(idx.asi8[-1]), n + len(values)
    if n == 0:
        raise InvalidInputError(f"{name} has no rows")
    os.replace(vals_tmp, cache / "values.f64")
    os.replace(idx_tmp, cache / "index.i8")
    st = path.stat()
    meta = {"version": _CACHE_VERSION, "source": str(path.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "date_col": date_col, "n_rows": n, "columns": columns, "mean": moments.mean.tolist(),
            "std": np.sqrt(moments.m2 / n).tolist()}
    (cache / "meta.json").write_text(json.dumps(meta))
    return meta


def open_series(path: str | os.PathLike, *, date_col: str = "date", cache_dir: str | os.PathLike | None = None,
                start: Any = None, freq: Any = None, columns: list[str] | None = None,
                chunk_rows: int | None = None) -> SeriesFile:
    """A :class:`SeriesFile` for training NsDiff / D3U on a series larger than memory (module docstring).

    Args:
        path: a ``.csv`` or ``.parquet`` table (a ``date_col`` column of timestamps, numeric variables), or a
            ``.npy`` float array ``[time, variable]`` (C order) with ``start`` / ``freq`` for its timestamps.
        cache_dir: where a table's values go as raw float64 (default: ``<path>.scigen-series/`` beside it);
            it is reused while the table's size and modification time are unchanged.
        columns: variable names of a ``.npy`` array (default ``x0, x1, ...``).
        chunk_rows: rows per chunk of the pass (default: :data:`CHUNK_BYTES` of float64 values).
    """
    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"{p}: no such file (expected a .csv, .parquet or .npy series)")
    if p.suffix == ".npy":
        return _open_npy(p, start, freq, columns, chunk_rows)
    if p.suffix not in (".csv", ".parquet"):
        raise InvalidInputError(f"{p}: expected a .csv, .parquet or .npy series, got suffix {p.suffix!r}")
    cache = Path(cache_dir) if cache_dir is not None else p.with_name(p.name + ".scigen-series")
    meta = None
    if (cache / "meta.json").is_file():
        try:
            meta = json.loads((cache / "meta.json").read_text())
        except ValueError:
            meta = None
        st = p.stat()
        if not meta or meta.get("version") != _CACHE_VERSION or meta.get("size") != st.st_size or \
                meta.get("mtime_ns") != st.st_mtime_ns or meta.get("date_col") != date_col:
            meta = None
    if meta is None:
        meta = _ingest(p, cache, date_col, chunk_rows)
    return SeriesFile(str(cache / "values.f64"), 0, int(meta["n_rows"]), list(meta["columns"]),
                      np.asarray(meta["mean"]), np.asarray(meta["std"]), index_path=str(cache / "index.i8"),
                      source=str(p))


def _open_npy(p: Path, start, freq, columns, chunk_rows: int | None) -> SeriesFile:
    if start is None or freq is None:
        raise InvalidInputError(f"{p}: a .npy series has no timestamps: pass start= (e.g. '2020-01-01') and freq= "
                                "(e.g. '1h')")
    with open(p, "rb") as fh:
        version = np.lib.format.read_magic(fh)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(fh)
        offset = fh.tell()
    if len(shape) != 2 or fortran or dtype != np.dtype("<f8"):
        raise InvalidInputError(f"{p}: expected a C-order float64 array [time, variable], got shape {shape}, dtype "
                                f"{dtype}{', Fortran order' if fortran else ''} (np.save(path, np.ascontiguousarray("
                                "x, dtype=np.float64)))")
    cols = [f"x{j}" for j in range(shape[1])] if columns is None else [str(c) for c in columns]
    if len(cols) != shape[1]:
        raise InvalidInputError(f"{p}: {len(cols)} column names for {shape[1]} variables")
    try:
        start, freq = pd.Timestamp(start), pd.Timedelta(freq)
    except (ValueError, TypeError) as exc:
        raise InvalidInputError(f"{p}: start={start!r} / freq={freq!r} are not a timestamp and a time step") from exc
    if freq <= pd.Timedelta(0):
        raise InvalidInputError(f"{p}: freq must be a positive time step, got {freq}")
    series = SeriesFile(str(p), offset, int(shape[0]), cols, np.zeros(shape[1]), np.ones(shape[1]),
                        start=start, freq=freq, source=str(p))
    m = _Moments(shape[1])
    chunk_rows = _chunk_rows(shape[1], chunk_rows)
    for a in range(0, shape[0], chunk_rows):
        x = series.rows(a, min(a + chunk_rows, shape[0]))
        bad = ~np.isfinite(x)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise InvalidInputError(f"{p}: variable {cols[c]!r} has a non-finite value at row {a + r}")
        m.add(x)
    series.mean, series.std = m.mean, np.sqrt(m.m2 / m.n)
    return series


class WindowRows(Dataset):
    """The training windows of a :class:`SeriesFile` (module docstring): item ``w`` is ``[context + horizon,
    n_vars (+ marks)]`` float32, standardised with ``scaler``; a batch reads one slice per window."""

    def __init__(self, series: SeriesFile, scaler, context: int, horizon: int, stride: int = 1,
                 marks_step: Any = None) -> None:
        for v, n in ((context, "context"), (horizon, "horizon"), (stride, "stride")):
            if not isinstance(v, (int, np.integer)) or v <= 0:
                raise InvalidInputError(f"{n} must be a positive integer, got {v!r}")
        if series.n_rows < context + horizon:
            raise InvalidInputError(f"{series.source} has {series.n_rows} rows; context_length + horizon = "
                                    f"{context} + {horizon} are needed for one window")
        self.series, self.mean, self.std = series, np.asarray(scaler.mean), np.asarray(scaler.std)
        self.context, self.horizon, self.stride = context, horizon, stride
        self.marks_step = None if marks_step is None else pd.Timedelta(marks_step)
        self.n = (series.n_rows - context - horizon) // stride + 1

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, w: int) -> torch.Tensor:
        return self.__getitems__([w])[0]

    def __getitems__(self, indices) -> torch.Tensor:
        from scigen.timeseries.data.windows import time_features

        idx = np.asarray(indices, dtype=np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= self.n):
            raise IndexError(f"window index out of range 0..{self.n - 1}")
        L = self.context + self.horizon
        out = []
        for w in idx:
            s = int(w) * self.stride
            x = (self.series.rows(s, s + L) - self.mean) / self.std
            win = torch.as_tensor(x, dtype=torch.float32)
            if self.marks_step is not None:
                m = time_features(self.series.times(s, s + L), self.marks_step)
                win = torch.cat([win, torch.as_tensor(m, dtype=torch.float32)], dim=-1)
            out.append(win)
        return torch.stack(out) if out else torch.empty(0, L, self.series.n_vars)

    def target_range(self, chunk_rows: int | None = None) -> tuple[float, float]:
        """``(min, max)`` of the standardised float32 targets of all windows (every ``Y``), from one pass over the
        series' rows: row ``r`` is a target when the last window starting at or before ``r − context``
        (at most window ``W − 1``) still covers it, i.e. ``r − context − w·stride < horizon``."""
        chunk_rows = _chunk_rows(self.series.n_vars, chunk_rows)
        C, H, S = self.context, self.horizon, self.stride
        lo, hi = np.inf, -np.inf
        for a in range(C, self.series.n_rows, chunk_rows):
            b = min(a + chunk_rows, self.series.n_rows)
            rp = np.arange(a, b) - C
            w = np.minimum(rp // S, self.n - 1)
            keep = rp - w * S < H
            if not keep.any():
                continue
            y = torch.as_tensor((self.series.rows(a, b)[keep] - self.mean) / self.std, dtype=torch.float32)
            lo, hi = min(lo, float(y.min())), max(hi, float(y.max()))
        return lo, hi

    def blocks(self, block: int = 4096):
        """All windows in order, ``block`` at a time (for one pass over the training windows)."""
        for a in range(0, self.n, block):
            yield self.__getitems__(np.arange(a, min(a + block, self.n)))


def batch_as_is(batch: torch.Tensor) -> torch.Tensor:
    """The ``collate_fn`` of :class:`WindowRows` (and of tensors): its ``__getitems__`` already gives the batch."""
    return batch
