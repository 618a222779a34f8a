"""Loaders of the NsDiff benchmark datasets (files located through :mod:`scigen.datasets`).

Every loader takes either a catalog name (``"ETTh1"``; the file must be in the cache, see
``scigen data fetch``) or a path to the file, and returns a validated float ``DataFrame`` indexed by
timestamps (:func:`scigen.timeseries.data.as_frame`).

* :func:`load_ett` — ETTh1/ETTh2/ETTm1/ETTm2 CSV: ``date,HUFL,HULL,MUFL,MULL,LUFL,LULL,OT``;
* :func:`load_benchmark_csv` — Autoformer CSVs (ECL, Exchange, ILI, Traffic, Weather): a ``date``
  column followed by the series;
* :func:`load_lstnet_txt` — LSTNet ``.txt(.gz)`` files (Solar and the ``*-LSTNet`` cards): comma
  separated numbers without header or timestamps; the index is rebuilt from the known start and step.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pandas as pd

from scigen.core.errors import InvalidInputError
from scigen.timeseries.data.validate import SOURCE, as_frame

__all__ = ["DATASETS", "LSTNET_CLOCK", "load_benchmark_csv", "load_dataset", "load_ett", "load_lstnet_txt",
           "load_netcdf"]

ETT_COLUMNS = ["HUFL", "HULL", "MUFL", "MULL", "LUFL", "LULL", "OT"]

#: start timestamp and sampling step of the LSTNet files (which carry no timestamps)
LSTNET_CLOCK = {
    "Solar": ("2006-01-01 00:00:00", "10min"),
    "ECL-LSTNet": ("2012-01-01 00:00:00", "1h"),
    "Exchange-LSTNet": ("1990-01-01", "1D"),
    "Traffic-LSTNet": ("2015-01-01 00:00:00", "1h"),
}

#: catalog name -> loader name
DATASETS = {
    "ETTh1": "ett", "ETTh2": "ett", "ETTm1": "ett", "ETTm2": "ett",
    "ECL": "csv", "Exchange": "csv", "ILI": "csv", "Traffic": "csv", "Weather": "csv",
    "Solar": "lstnet", "ECL-LSTNet": "lstnet", "Exchange-LSTNet": "lstnet", "Traffic-LSTNet": "lstnet",
}


def _resolve(source: str | os.PathLike[str]) -> tuple[Path, str]:
    """A path to an existing file, or a catalog name resolved in the cache; returns ``(file, name)``."""
    p = Path(source)
    if p.is_file():
        return p, p.stem.split(".")[0]
    if isinstance(source, str) and os.sep not in source:
        from scigen.datasets import card, path

        c = card(source)
        return path(c.name) / c.files[0].name, c.name
    raise InvalidInputError(f"{source}: no such file (and not a dataset name of the catalog)")


def _header(file: Path) -> list[str]:
    """The first row of a CSV as written (``read_csv`` renames a repeated name ``x`` to ``x.1``)."""
    first = pd.read_csv(file, header=None, nrows=1, dtype=str, keep_default_na=False)
    return [str(v) for v in first.iloc[0]] if len(first) else []


def _read_dated_csv(file: Path, name: str) -> pd.DataFrame:
    try:
        raw = pd.read_csv(file)
        header = _header(file)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise InvalidInputError(f"{file}: cannot read as CSV ({exc})") from exc
    repeated = sorted({h for h in header if header.count(h) > 1})
    if repeated:
        raise InvalidInputError(f"{file}: duplicate column name(s) {repeated} in the header; "
                                "every column needs its own name")
    if "date" not in raw.columns:
        raise InvalidInputError(f"{file}: expected a 'date' column first, got columns {list(raw.columns)[:5]}")
    try:
        with warnings.catch_warnings():  # pandas' "could not infer format" warning: the error below says it all
            warnings.simplefilter("ignore", UserWarning)
            idx = pd.DatetimeIndex(pd.to_datetime(raw.pop("date")), name="time")
    except (ValueError, TypeError) as exc:
        raise InvalidInputError(f"{file}: column 'date' does not parse as timestamps ({exc})") from exc
    raw = raw.set_axis(idx, axis=0)
    raw.attrs[SOURCE] = str(file)
    return as_frame(raw, name=name)


def load_ett(source: str | os.PathLike[str] = "ETTh1") -> pd.DataFrame:
    """ETTh1/ETTh2 (hourly) or ETTm1/ETTm2 (15 min): the seven columns, ``OT`` last."""
    file, name = _resolve(source)
    df = _read_dated_csv(file, name)
    if list(df.columns) != ETT_COLUMNS:
        raise InvalidInputError(f"{file}: ETT columns must be {ETT_COLUMNS}, got {list(df.columns)}")
    return df


def load_benchmark_csv(source: str | os.PathLike[str]) -> pd.DataFrame:
    """An Autoformer benchmark CSV (``date`` column then the variables)."""
    file, name = _resolve(source)
    return _read_dated_csv(file, name)


def load_lstnet_txt(source: str | os.PathLike[str], *, start: str | None = None, freq: str | None = None) -> pd.DataFrame:
    """An LSTNet numeric file (``.txt`` or ``.txt.gz``); columns are named ``"0" … "N−1"``.

    ``start``/``freq`` default to :data:`LSTNET_CLOCK` for the known datasets.
    """
    file, name = _resolve(source)
    stem = file.name.split(".")[0].lower()
    alias = {"solar_al": "Solar", "electricity": "ECL-LSTNet", "exchange_rate": "Exchange-LSTNet",
             "traffic": "Traffic-LSTNet"}
    key = name if name in LSTNET_CLOCK else alias.get(stem)
    if key is not None:
        start, freq = start or LSTNET_CLOCK[key][0], freq or LSTNET_CLOCK[key][1]
    if start is None or freq is None:
        raise InvalidInputError(f"{file}: unknown LSTNet file; pass start= and freq= for its time index")
    try:
        raw = pd.read_csv(file, header=None)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise InvalidInputError(f"{file}: cannot read as comma-separated numbers ({exc})") from exc
    raw.columns = [str(i) for i in range(raw.shape[1])]
    raw.index = pd.date_range(start=start, periods=len(raw), freq=freq, name="time")
    raw.attrs[SOURCE] = str(file)
    return as_frame(raw, name=name)


def load_netcdf(source: str | os.PathLike[str]) -> pd.DataFrame:
    """A NetCDF file of 1-D variables over ``time`` (read by xarray), validated like the CSVs."""
    file = Path(source)
    if not file.is_file():
        raise InvalidInputError(f"{file}: {'not a file' if file.exists() else 'no such file'} (a NetCDF file is expected)")
    import xarray as xr

    with open(file, "rb") as fh:  # classic NetCDF (b"CDF"): read without mmap, so a failed read leaves no open map
        kwargs = {"engine": "scipy", "mmap": False} if fh.read(3) == b"CDF" else {}
    try:
        with xr.open_dataset(file, **kwargs) as ds:
            ds = ds.load()
    except (ValueError, OSError, TypeError) as exc:  # no backend recognises it, or a truncated file
        first = str(exc).split(". ")[0].splitlines()[0] if str(exc) else type(exc).__name__
        raise InvalidInputError(f"{file}: cannot read as NetCDF ({first})") from exc
    df = as_frame(ds, name=str(file))
    df.attrs[SOURCE] = str(file)
    return df


def load_dataset(name: str) -> pd.DataFrame:
    """Load a catalog dataset by name (see :data:`DATASETS`) from the local cache."""
    key = next((k for k in DATASETS if k.lower() == str(name).lower()), None)
    if key is None:
        raise InvalidInputError(f"unknown time-series dataset {name!r}; valid: {', '.join(DATASETS)}")
    kind = DATASETS[key]
    if kind == "ett":
        return load_ett(key)
    if kind == "csv":
        return load_benchmark_csv(key)
    return load_lstnet_txt(key)
