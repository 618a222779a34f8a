"""From a field to training windows: the value transform and the contiguous ``context + horizon`` windows."""

from __future__ import annotations

import numpy as np
import pandas as pd
from torch.utils.data import Dataset

from scigen.core.errors import InvalidInputError

__all__ = ["Transform", "WindowDataset", "window_starts"]


class Transform:
    """Model units ``z`` of a field: ``log1p(x) / log1p(top)`` for rain and VIL (``x >= 0``), or
    ``(x − lo) / (top − lo)`` for dBZ; ``top`` (and ``lo``) from the first training data."""

    def __init__(self, units: str, top: float, lo: float = 0.0) -> None:
        self.units, self.top, self.lo = units, float(top), float(lo)
        if not self.top > self.lo:
            raise InvalidInputError(f"the training data are constant ({self.top}); nothing to learn")

    @classmethod
    def fit(cls, field) -> Transform:
        """``top`` (and ``lo``) of ``field``; a lazily opened field in one streaming pass over blocks of frames
        (max and min are exact, so the values equal the in-memory ones)."""
        units = field.attrs["units"]
        from scigen.weather.data.fields import field_blocks, is_lazy

        if not is_lazy(field):
            v = field.values
            return cls(units, float(v.max()), float(v.min()) if units == "dBZ" else 0.0)
        top, lo = -np.inf, np.inf
        for _, v in field_blocks(field):
            top, lo = max(top, float(v.max())), min(lo, float(v.min()))
        return cls(units, top, lo if units == "dBZ" else 0.0)

    def to_dict(self) -> dict:
        return {"units": self.units, "top": self.top, "lo": self.lo}

    @classmethod
    def from_dict(cls, d: dict) -> Transform:
        return cls(d["units"], d["top"], d["lo"])

    def forward(self, x: np.ndarray) -> np.ndarray:
        if self.units == "dBZ":
            return ((x - self.lo) / (self.top - self.lo)).astype(np.float32)
        return (np.log1p(np.maximum(x, 0)) / np.log1p(self.top)).astype(np.float32)

    def inverse(self, z: np.ndarray) -> np.ndarray:
        if self.units == "dBZ":
            return (self.lo + z * (self.top - self.lo)).astype(np.float32)
        return np.maximum(np.expm1(z * np.log1p(self.top)), 0.0).astype(np.float32)


def window_starts(times, length: int, step: pd.Timedelta, stride: int = 1) -> np.ndarray:
    """Indices ``i`` where ``times[i : i + length]`` are evenly ``step`` apart, every ``stride``-th frame from
    the first of each run of consecutive frames."""
    t = pd.DatetimeIndex(times).asi8
    if len(t) < length:
        return np.zeros(0, dtype=int)
    ok = np.diff(t) == step.value  # ok[j]: frames j and j + 1 are consecutive
    run = np.concatenate([[0], np.cumsum(~ok)])  # gap counter; a window lies within one run of the counter
    starts = np.arange(len(t) - length + 1)
    good = run[starts + length - 1] == run[starts]
    first = np.concatenate([[0], np.nonzero(~ok)[0] + 1])  # the first frame of each run
    rel = starts - first[run[starts]]
    return starts[good & (rel % stride == 0)]


class WindowDataset(Dataset):
    """The training windows of a field read on demand (a lazily opened field larger than memory): item ``k``
    is ``transform(field[starts[k] : starts[k] + length])`` as a float32 tensor ``[length, y, x]`` (plus the
    ``extra`` channels of that window, e.g. the extrapolated context), exactly row ``k`` of the in-memory
    windows tensor. A torch ``Dataset`` (map-style)."""

    def __init__(self, field, starts: np.ndarray, length: int, transform: Transform, extra=None) -> None:
        self.field, self.starts, self.length = field, np.asarray(starts, dtype=np.int64), int(length)
        self.transform, self.extra = transform, extra

    def __len__(self) -> int:
        return int(self.starts.shape[0])

    def __getitem__(self, k: int):
        import torch

        i = int(self.starts[k])
        v = np.asarray(self.field.isel(time=slice(i, i + self.length)).values, dtype=np.float32)
        row = torch.as_tensor(self.transform.forward(v))
        if self.extra is not None:
            row = torch.cat([row, self.extra(row[None])[0]], dim=0)
        return row
