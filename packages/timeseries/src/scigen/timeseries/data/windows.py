"""Sliding windows, train-only standardisation and the standard benchmark splits.

Splits follow the Informer / Autoformer convention (Zhou et al. 2021; Wu et al. 2021) used by NsDiff:

* ETT: the first 20 "months" of 30 days: train months 0-12, validation 12-16, test 16-20;
* every other dataset: the first 70 % of rows train, the last 20 % test, the rest validation.

The validation and test frames start ``context`` rows early, so that their first forecast targets
the first row after the preceding split (windows never target a training row).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from scigen.core.errors import InvalidInputError

__all__ = ["Splits", "Standardizer", "make_windows", "split_ett", "split_ratio", "standard_split"]


def make_windows(values: np.ndarray, context: int, horizon: int, stride: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cut ``values [L, N]`` into ``X [W, context, N]``, ``Y [W, horizon, N]`` and the start rows ``[W]``.

    Window ``w`` starts at row ``s = w·stride``: ``X = values[s : s+context]``,
    ``Y = values[s+context : s+context+horizon]``; ``W = (L − context − horizon) // stride + 1``.
    """
    for v, n in ((context, "context"), (horizon, "horizon"), (stride, "stride")):
        if not isinstance(v, (int, np.integer)) or v <= 0:
            raise InvalidInputError(f"{n} must be a positive integer, got {v!r}")
    arr = np.asarray(values)
    if arr.ndim != 2:
        raise InvalidInputError(f"values must be 2-D [time, variable], got shape {arr.shape}")
    L = arr.shape[0]
    if L < context + horizon:
        raise InvalidInputError(f"series of length {L} is shorter than context + horizon = {context} + {horizon}; "
                                "use a shorter context/horizon or a longer series")
    starts = np.arange(0, L - context - horizon + 1, stride)
    view = np.lib.stride_tricks.sliding_window_view(arr, context + horizon, axis=0)  # [L', N, C+H]
    win = np.moveaxis(view[starts], -1, 1)  # [W, C+H, N]
    return np.ascontiguousarray(win[:, :context]), np.ascontiguousarray(win[:, context:]), starts


def time_features(index, step=None) -> np.ndarray:
    """Calendar features of a ``DatetimeIndex`` ``[L, F]`` in ``[−0.5, 0.5]``: the "timeF" encoding of the
    Informer / Autoformer / NS-Transformer code (Zhou et al. 2021, ``utils/timefeatures.py``), chosen by the
    series' step: ``MinuteOfHour`` (steps under an hour), ``HourOfDay`` (under a day), then ``DayOfWeek``,
    ``DayOfMonth``, ``DayOfYear`` — ``minute/59``, ``hour/23``, ``weekday/6``, ``(day−1)/30``,
    ``(dayofyear−1)/365``, each minus 0.5. ``step`` (a ``Timedelta``; default the median spacing) fixes F."""
    import pandas as pd

    idx = pd.DatetimeIndex(index)
    if step is None:
        step = pd.Series(idx).diff().median() if len(idx) > 1 else pd.Timedelta(hours=1)
    step = pd.Timedelta(step)
    cols = []
    if step < pd.Timedelta(hours=1):
        cols.append(idx.minute / 59.0 - 0.5)
    if step < pd.Timedelta(days=1):
        cols.append(idx.hour / 23.0 - 0.5)
    cols += [idx.dayofweek / 6.0 - 0.5, (idx.day - 1) / 30.0 - 0.5, (idx.dayofyear - 1) / 365.0 - 0.5]
    return np.stack([np.asarray(c, dtype=np.float64) for c in cols], axis=1)


@dataclasses.dataclass
class Standardizer:
    """Per-column ``(x − mean) / std`` with statistics from the training rows only (std with ddof = 0)."""

    mean: np.ndarray
    std: np.ndarray
    columns: list[str]

    @classmethod
    def fit(cls, train: pd.DataFrame, name: str = "train") -> Standardizer:
        v = train.to_numpy(dtype=np.float64)
        mean, std = v.mean(0), v.std(0)
        const = [str(c) for c, s, m in zip(train.columns, std, mean, strict=True) if s <= 1e-12 * max(1.0, abs(m))]
        if const:
            raise InvalidInputError(f"{name}: column(s) {const} are constant over the training rows; "
                                    "they cannot be standardised (drop them)")
        return cls(mean=mean, std=std, columns=[str(c) for c in train.columns])

    def transform(self, values: np.ndarray) -> np.ndarray:
        return (np.asarray(values, dtype=np.float64) - self.mean) / self.std

    def inverse(self, values: np.ndarray) -> np.ndarray:
        return np.asarray(values, dtype=np.float64) * self.std + self.mean

    def to_dict(self) -> dict:
        return {"mean": self.mean.tolist(), "std": self.std.tolist(), "columns": list(self.columns)}

    @classmethod
    def from_dict(cls, d: dict) -> Standardizer:
        return cls(mean=np.asarray(d["mean"], dtype=np.float64), std=np.asarray(d["std"], dtype=np.float64),
                   columns=list(d["columns"]))


@dataclasses.dataclass
class Splits:
    """Train / validation / test frames; ``val`` and ``test`` include ``context`` look-back rows."""

    train: pd.DataFrame
    val: pd.DataFrame
    test: pd.DataFrame


def _check_context(df: pd.DataFrame, context: int, borders: tuple[int, int], what: str) -> None:
    if not isinstance(context, (int, np.integer)) or context < 0:
        raise InvalidInputError(f"context must be a non-negative integer, got {context!r}")
    if context > borders[0]:
        raise InvalidInputError(f"context {context} is longer than the {what} training split ({borders[0]} rows)")
    if borders[1] > len(df):
        raise InvalidInputError(f"the {what} split needs {borders[1]} rows, the series has {len(df)}")


def split_ratio(df: pd.DataFrame, context: int, train: float = 0.7, test: float = 0.2) -> Splits:
    """0.7 / 0.1 / 0.2 split (Autoformer convention: ``n_train = int(0.7 L)``, ``n_test = int(0.2 L)``)."""
    if not (0 < train < 1 and 0 < test < 1 and train + test < 1):
        raise InvalidInputError(f"train and test fractions must be in (0, 1) with sum < 1, got {train}, {test}")
    L = len(df)
    n_train, n_test = int(L * train), int(L * test)
    n_val = L - n_train - n_test
    _check_context(df, context, (n_train, L), "ratio")
    return Splits(train=df.iloc[:n_train], val=df.iloc[n_train - context : n_train + n_val],
                  test=df.iloc[L - n_test - context :])


def split_ett(df: pd.DataFrame, context: int) -> Splits:
    """ETT split: 12 / 4 / 4 months of 30 days, counted in rows of the series' own sampling step."""
    if len(df) < 2:
        raise InvalidInputError("ETT split needs at least two rows to infer the sampling step")
    step = pd.Series(df.index).diff().median()
    per_month = int(round(pd.Timedelta(days=30) / step))
    a, b, c = 12 * per_month, 16 * per_month, 20 * per_month
    _check_context(df, context, (a, c), "ETT")
    return Splits(train=df.iloc[:a], val=df.iloc[a - context : b], test=df.iloc[b - context : c])


def standard_split(df: pd.DataFrame, dataset: str, context: int) -> Splits:
    """The split NsDiff uses for ``dataset`` (``ETT*`` → :func:`split_ett`, else :func:`split_ratio`)."""
    return split_ett(df, context) if dataset.upper().startswith("ETT") else split_ratio(df, context)
