"""Radar cubes larger than memory: Nowcast.fit trains from a lazily opened field (Zarr path, open_field, or any
DataArray not in memory) reading one window per item, with the in-memory weights, statistics equal to the
in-memory ones, never reading the whole cube, and a peak RSS that does not grow with the cube."""

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import xarray as xr
from xarray.backends import BackendArray
from xarray.core import indexing

import scigen.weather.data.fields as fields
from scigen.weather import Nowcast, NowcastConfig, synthetic_storms
from scigen.weather.data import make_field, open_field, write_field, write_field_blocks
from scigen.weather.nowcast.windows import Transform

_spec = importlib.util.spec_from_file_location("_rss", Path(__file__).parents[1] / "_rss.py")
_rss = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_rss)


class _Spy(BackendArray):
    """A lazily indexed array that records the most frames one read returned."""

    def __init__(self, values):
        self.values, self.shape, self.dtype, self.most = values, values.shape, values.dtype, 0

    def __getitem__(self, key):
        return indexing.explicit_indexing_adapter(key, self.shape, indexing.IndexingSupport.BASIC, self._read)

    def _read(self, key):
        out = self.values[key]
        self.most = max(self.most, out.shape[0] if out.ndim == 3 else 1)
        return out


def _spied(field):
    spy = _Spy(field.values)
    lazy = xr.DataArray(indexing.LazilyIndexedArray(spy), dims=field.dims, coords=field.coords, attrs=field.attrs,
                        name=field.name)
    assert fields.is_lazy(lazy)
    return lazy, spy


def test_statistics_streamed_equal_in_memory(monkeypatch):
    monkeypatch.setattr(fields, "BLOCK_VALUES", 32 * 32 * 7)  # blocks of 7 frames: many blocks, a ragged last one
    f = synthetic_storms(n_events=3, frames=30, size=32, seed=2)
    lazy, spy = _spied(f)
    assert Transform.fit(lazy).to_dict() == Transform.fit(f).to_dict()
    dbz = make_field(np.random.default_rng(0).uniform(-10, 60, (40, 8, 8)), pd.date_range("2024", periods=40, freq="5min"),
                     units="dBZ")
    assert Transform.fit(_spied(dbz)[0]).to_dict() == Transform.fit(dbz).to_dict()
    assert spy.most <= 7


def test_fit_from_a_lazy_field_gives_the_in_memory_weights_and_never_reads_the_cube(tmp_path, monkeypatch):
    monkeypatch.setattr(fields, "BLOCK_VALUES", 32 * 32 * 8)
    f = synthetic_storms(n_events=4, frames=30, size=32, seed=1)
    cfg = NowcastConfig.preset("tiny")
    ref = Nowcast(cfg).fit(f, max_steps=4, batch_size=4, progress=False).network.state_dict()
    lazy, spy = _spied(f)
    write_field_blocks((f.isel(time=slice(i, i + 25)) for i in range(0, 120, 25)), tmp_path / "cube.zarr", time_chunk=5)
    for data in (lazy, str(tmp_path / "cube.zarr"), open_field(tmp_path / "cube.zarr")):
        got = Nowcast(cfg).fit(data, max_steps=4, batch_size=4, progress=False).network.state_dict()
        assert all(torch.equal(ref[k], got[k]) for k in ref)
    window = cfg.context_frames + cfg.horizon
    assert 0 < spy.most <= max(8, window) < f.sizes["time"]
    assert fields.is_lazy(lazy)


def test_bad_values_in_a_lazy_field_are_found_block_by_block(tmp_path, monkeypatch):
    monkeypatch.setattr(fields, "BLOCK_VALUES", 8 * 8 * 4)
    v = np.ones((40, 8, 8), np.float32)
    v[29, 3, 5] = np.nan
    f = make_field(v, pd.date_range("2024", periods=40, freq="5min"))
    write_field(f, tmp_path / "nan.zarr", time_chunk=4)
    with pytest.raises(Exception, match=r"NaN/inf values, the first at time=2024-01-01 02:25:00, y=3, x=5"):
        open_field(tmp_path / "nan.zarr")


def test_peak_rss_does_not_grow_with_the_cube(tmp_path):
    """Peak RSS of 3 training steps from a Zarr cube of 2,000 and of 8,000 frames (32 x 32: 8 and 33 MB of
    float32); slack 8 MiB (a block of the streaming pass is 4 MiB)."""
    rng = np.random.default_rng(0)
    peaks = []
    for n in (2000, 8000):
        t = pd.date_range("2024-06-01", periods=n, freq="5min")
        blocks = (make_field(rng.gamma(0.3, 2.0, (500, 32, 32)), t[i:i + 500]) for i in range(0, n, 500))
        path = write_field_blocks(blocks, tmp_path / f"c{n}.zarr", time_chunk=25)
        peaks.append(_rss.child_peak_rss(f"""
from scigen.weather import Nowcast, NowcastConfig
Nowcast(NowcastConfig.preset("tiny")).fit({str(path)!r}, max_steps=3, batch_size=4, progress=False)
""")[0])
    assert peaks[1] - peaks[0] < 8.0, peaks
