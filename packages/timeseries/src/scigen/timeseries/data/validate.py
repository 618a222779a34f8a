"""Boundary checks for user time series: one place that turns pandas / xarray input into a clean frame.

Every check raises :class:`scigen.core.errors.InvalidInputError` (a ``ValueError``) that names the
argument, the offending column or timestamp, and what was expected.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from scigen.core.errors import InvalidInputError
from scigen.core.validation import check_real

__all__ = ["SOURCE", "as_frame", "check_columns", "source_label"]

#: ``DataFrame.attrs`` key under which the loaders record the file a frame was read from
SOURCE = "scigen_source"


def source_label(data: Any, name: str) -> str:
    """``name``, followed by the file ``data`` was read from (``attrs[SOURCE]``) when a loader recorded it."""
    src = data.attrs.get(SOURCE) if isinstance(data, pd.DataFrame) else None
    return f"{name} ({src})" if src and str(src) not in name else name


def _from_xarray(data: Any, name: str) -> pd.DataFrame:
    import xarray as xr

    if isinstance(data, xr.Dataset):
        bad = [str(k) for k, v in data.data_vars.items() if v.ndim != 1]
        if bad:
            raise InvalidInputError(f"{name}: every variable of the xarray Dataset must be 1-D over time; "
                                    f"{bad} are not")
        return data.to_dataframe()
    if isinstance(data, xr.DataArray):
        if data.ndim == 1:
            return data.to_dataframe(name=str(data.name or "value")).iloc[:, [-1]]
        if data.ndim != 2 or "time" not in data.dims:
            raise InvalidInputError(f"{name}: an xarray DataArray must have dims ('time', <variable>), got {data.dims}")
        other = next(d for d in data.dims if d != "time")
        arr = data.transpose("time", other)
        return pd.DataFrame(arr.values, index=pd.Index(arr["time"].values, name="time"),
                            columns=[str(c) for c in arr[other].values])
    raise InvalidInputError(f"{name}: expected a pandas DataFrame or an xarray Dataset/DataArray, "
                            f"got {type(data).__name__}")


def _long_to_wide(data: pd.DataFrame, name: str) -> pd.DataFrame:
    """Nixtla's long format (``unique_id``, ``ds``, ``y``: neuralforecast, statsforecast) as one column per series."""
    extra = [str(c) for c in data.columns if str(c) not in ("unique_id", "ds", "y")]
    if extra:
        raise InvalidInputError(f"{name}: long-format data (unique_id, ds, y) with extra column(s) {extra}: exogenous "
                                "covariates are not inputs of these models; drop them, or pivot them into series of "
                                "their own to forecast them jointly")
    dup = data.duplicated(["unique_id", "ds"])
    if dup.any():
        row = data[dup].iloc[0]
        raise InvalidInputError(f"{name}: series {row['unique_id']!r} has two rows at ds={row['ds']}")
    wide = data.pivot(index="ds", columns="unique_id", values="y")
    wide.columns = [str(c) for c in wide.columns]
    holes = wide.isna().to_numpy()
    if holes.any():
        r, c = np.argwhere(holes)[0]
        raise InvalidInputError(f"{name}: the series do not share their timestamps: {wide.columns[c]!r} has no row at "
                                f"ds={wide.index[r]} ({int(holes.sum())} gaps in all); these models forecast the series "
                                "jointly on one time grid")
    wide.attrs.update(data.attrs)
    return wide.sort_index()


def as_frame(data: Any, name: str = "data", *, min_length: int = 1) -> pd.DataFrame:
    """Validate ``data`` and return a float64 ``DataFrame`` with a strictly increasing ``DatetimeIndex``.

    Accepts a ``DataFrame`` indexed by timestamps, Nixtla's long format (columns ``unique_id``, ``ds``,
    ``y``, one column per series after pivoting), an xarray ``Dataset`` of 1-D variables over
    ``time`` or a 2-D ``DataArray`` with a ``time`` dim. Rejects (naming the column / timestamp):
    a non-datetime index, duplicate or decreasing timestamps, duplicate column names, non-numeric
    columns, NaN or inf, no rows or fewer than ``min_length``. Messages name the file a loader
    recorded in ``attrs[SOURCE]``, which the returned frame keeps.
    """
    if isinstance(data, pd.Series):
        data = data.to_frame()
    if not isinstance(data, pd.DataFrame):
        data = _from_xarray(data, name)
    if isinstance(data, pd.DataFrame) and {"unique_id", "ds", "y"} <= set(map(str, data.columns)):
        data = _long_to_wide(data, name)
    source = data.attrs.get(SOURCE)
    name = source_label(data, name)
    if data.shape[1] == 0:
        raise InvalidInputError(f"{name} has no columns; expected at least one variable")
    names = pd.Index([str(c) for c in data.columns])
    if names.has_duplicates:
        raise InvalidInputError(f"{name}: duplicate column name(s) {sorted(set(names[names.duplicated()]))}; "
                                "every variable needs its own name")
    if len(data) == 0:
        raise InvalidInputError(f"{name} has no rows; at least {max(min_length, 1)} are needed")
    if not isinstance(data.index, pd.DatetimeIndex):
        try:
            if pd.api.types.is_numeric_dtype(data.index.dtype):
                raise TypeError("numbers are not timestamps")
            with warnings.catch_warnings():  # pandas' "could not infer format": the error below says it all
                warnings.simplefilter("ignore", UserWarning)
                idx = pd.DatetimeIndex(pd.to_datetime(data.index))
        except (TypeError, ValueError):
            hint = ' (try df.set_index(pd.to_datetime(df["date"])))' if "date" in data.columns else ""
            raise InvalidInputError(
                f"{name} must be indexed by timestamps (a DatetimeIndex), got a {type(data.index).__name__}{hint}"
            ) from None
        data = data.set_axis(idx, axis=0)
    idx = data.index
    if idx.hasnans:
        raise InvalidInputError(f"{name}: the time index contains NaT at row {int(np.flatnonzero(idx.isna())[0])}")
    dup = idx.duplicated()
    if dup.any():
        raise InvalidInputError(f"{name}: duplicate timestamp {idx[dup][0]} (row {int(np.flatnonzero(dup)[0])}); "
                                "timestamps must be unique")
    if not idx.is_monotonic_increasing:
        row = int(np.flatnonzero(np.diff(idx.asi8) < 0)[0]) + 1
        raise InvalidInputError(f"{name}: timestamps are not increasing at row {row} ({idx[row - 1]} then "
                                f"{idx[row]}); sort the frame with df.sort_index()")
    check_real(data, name, hint="give the real and imaginary parts as two columns")
    nonnum = [str(c) for c in data.columns if not pd.api.types.is_numeric_dtype(data[c])]
    if nonnum:
        raise InvalidInputError(f"{name}: non-numeric column(s) {nonnum}; expected numbers only")
    values = data.to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise InvalidInputError(f"{name}: column {data.columns[c]!r} has a non-finite value ({values[r, c]}) at "
                                f"{idx[r]} (row {r}); fill or drop missing values first")
    if len(data) < min_length:
        raise InvalidInputError(f"{name} has {len(data)} rows; at least {min_length} are needed")
    out = pd.DataFrame(values, index=pd.DatetimeIndex(idx, freq=None), columns=[str(c) for c in data.columns])
    out.index.name = "time"
    if source:
        out.attrs[SOURCE] = source
    return out


def check_columns(data: pd.DataFrame, expected: list[str], name: str = "data") -> None:
    """Raise if ``data`` does not have exactly the columns ``expected`` (in that order)."""
    got = list(data.columns)
    if got != list(expected):
        missing = [c for c in expected if c not in got]
        extra = [c for c in got if c not in expected]
        detail = f"missing {missing}, unexpected {extra}" if (missing or extra) else "same names, different order"
        raise InvalidInputError(f"{name}: columns do not match the training data ({detail}); "
                                f"expected {list(expected)}")
