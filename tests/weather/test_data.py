"""Synthetic storms (advection by the known motion, the power-law spectrum), field validation, NetCDF/Zarr
round trips, and the SEVIR / MeteoNet loaders on small files written in the real formats."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scigen.core.errors import InvalidInputError
from scigen.weather.data import (
    as_field,
    load_meteonet,
    load_sevir,
    make_field,
    read_field,
    synthetic_storms,
    write_field,
)


def test_frozen_storm_moves_by_the_known_motion():
    """rho = 1, g = 0: frame n is frame 0 advected by n·(u, v); skimage's phase correlation recovers it."""
    from skimage.registration import phase_cross_correlation

    d = synthetic_storms(1, 6, 32, seed=4, rho=1.0, growth=0.0, max_speed=3.0)
    u, v = d.attrs["motion_u"][0], d.attrs["motion_v"][0]
    for n in (1, 3, 5):
        shift, _, _ = phase_cross_correlation(d.values[n], d.values[0], upsample_factor=100)
        np.testing.assert_allclose(shift, [n * v, n * u], atol=0.1)
    d = synthetic_storms(1, 4, 32, seed=4, rho=1.0, growth=0.0, motion=(2, -1))
    for n in (1, 3):  # integer motion: an exact roll by n·(v, u) pixels (rows = y, columns = x)
        np.testing.assert_allclose(d.values[n], np.roll(d.values[0], (-n, 2 * n), axis=(0, 1)), atol=1e-4)


def test_integer_motion_is_an_exact_roll():
    from scigen.weather.data import synthetic as S

    rng = np.random.default_rng(0)
    f = S.power_law_noise(16, 3.0, rng)
    np.testing.assert_allclose(S._shift(f, 2, -3), np.roll(f, (2, -3), axis=(0, 1)), atol=1e-10)


def test_evolving_storm_still_moves_with_its_motion():
    from skimage.registration import phase_cross_correlation

    d = synthetic_storms(3, 4, 64, seed=1, rho=0.98, growth=0.02)
    for e in range(3):
        fr = d.values[d["event"].values == e]
        shift, _, _ = phase_cross_correlation(fr[3], fr[0], upsample_factor=20)
        np.testing.assert_allclose(shift, [3 * d.attrs["motion_v"][e], 3 * d.attrs["motion_u"][e]], atol=0.35)


def test_power_law_noise_has_the_spectral_slope():
    from scigen.weather.data.synthetic import power_law_noise
    from scigen.weather.metrics import rapsd

    rng = np.random.default_rng(0)
    psd = np.mean([rapsd(power_law_noise(64, 3.0, rng))[0] for _ in range(20)], axis=0)
    r = np.arange(psd.size)
    slope = np.polyfit(np.log(r[2:28]), np.log(psd[2:28]), 1)[0]
    assert slope == pytest.approx(-3.0, abs=0.25)


def test_storms_are_seeded_nonnegative_and_wet_as_asked():
    a, b = synthetic_storms(2, 5, 32, seed=7), synthetic_storms(2, 5, 32, seed=7)
    np.testing.assert_array_equal(a.values, b.values)
    assert float(a.min()) >= 0 and 0.25 < float((a.values > 0).mean()) < 0.45 and a.attrs["units"] == "mm/h"


def _field(**kw):
    return make_field(np.ones((4, 8, 8)), pd.date_range("2024-01-01", periods=4, freq="5min"), **kw)


@pytest.mark.parametrize("change,needle", [
    (lambda f: f.rename({"y": "lat"}), "dims must be ('time', 'y', 'x')"),
    (lambda f: f.isel(time=0), "dims must be"),
    (lambda f: f.where(f.x != 3), "NaN/inf values, the first at time=2024-01-01 00:00:00, y=0, x=3"),
    (lambda f: f * 0 - 1, "negative mm/h value -1 at time="),
    (lambda f: f.assign_attrs(units="inch"), "unknown units 'inch'"),
    (lambda f: f.drop_attrs(), "attrs['units'] is missing"),
    (lambda f: f.isel(time=[1, 0, 2, 3]), "'time' must increase"),
])
def test_bad_fields_are_named(change, needle):
    with pytest.raises(InvalidInputError, match=None) as ei:
        as_field(change(_field()), "data")
    assert needle in str(ei.value)


def test_netcdf_round_trip_keeps_values_coords_and_attrs(tmp_path):
    d = synthetic_storms(2, 4, 16, seed=0)
    p = write_field(d, tmp_path / "s.nc")
    back = read_field(p)
    np.testing.assert_array_equal(back.values, d.values)
    assert (back["time"].values == d["time"].values).all() and back.attrs["units"] == "mm/h"
    np.testing.assert_allclose(back.attrs["motion_u"], d.attrs["motion_u"])
    with pytest.raises(InvalidInputError, match="already exists"):
        write_field(d, p)


def test_zarr_round_trip(tmp_path):
    pytest.importorskip("zarr")
    d = synthetic_storms(1, 3, 16, seed=0)
    back = read_field(write_field(d, tmp_path / "s.zarr"))
    np.testing.assert_array_equal(back.values, d.values)


def test_sevir_loader_reads_the_release_layout(tmp_path):
    import h5py

    rng = np.random.default_rng(0)
    vil = rng.integers(0, 255, (2, 16, 16, 4), dtype=np.uint8)  # SEVIR: [event, y, x, frame]
    (tmp_path / "vil" / "2019").mkdir(parents=True)
    with h5py.File(tmp_path / "vil" / "2019" / "SEVIR_VIL_STORMEVENTS_2019_0101_0630.h5", "w") as h5:
        h5["id"] = np.array([b"S1", b"S2"])
        h5["vil"] = vil
    pd.DataFrame({"id": ["S1", "S2", "S1"], "file_name": ["vil/2019/SEVIR_VIL_STORMEVENTS_2019_0101_0630.h5"] * 2 + ["ir/x.h5"],
                  "file_index": [0, 1, 0], "img_type": ["vil", "vil", "ir069"],
                  "time_utc": ["2019-06-01 12:00:00", "2019-06-02 00:00:00", "2019-06-01 12:00:00"],
                  "minute_offsets": ["-10:-5:0:5"] * 3}).to_csv(tmp_path / "CATALOG.csv", index=False)
    f = load_sevir(tmp_path)
    assert f.sizes == {"time": 8, "y": 16, "x": 16} and f.attrs["units"] == "VIL digital"
    np.testing.assert_array_equal(f.values[:4], np.moveaxis(vil[0], -1, 0))
    assert str(f["time"].values[0])[:19] == "2019-06-01T11:50:00" and list(f["event"].values[4:5]) == ["S2"]
    kg = load_sevir(tmp_path, event_ids=["S2"], units="kg/m2")
    from scigen.weather.data.units import vil_digital_to_kgm2

    np.testing.assert_allclose(kg.values, vil_digital_to_kgm2(np.moveaxis(vil[1], -1, 0)), rtol=1e-6)
    with pytest.raises(InvalidInputError, match="no VIL event with id"):
        load_sevir(tmp_path, event_ids=["nope"])


def test_meteonet_loader_reads_npz_in_hundredths_of_mm(tmp_path):
    import datetime as dt

    data = np.array([[[0, 10], [-1, 250]], [[5, 0], [0, 0]]], dtype=np.int16)
    dates = np.array([dt.datetime(2016, 1, 1, 0, 0), dt.datetime(2016, 1, 1, 0, 5)], dtype=object)
    (tmp_path / "NW_rainfall_2016").mkdir()
    np.savez(tmp_path / "NW_rainfall_2016" / "rainfall-NW-2016-01-1.npz", data=data, dates=dates,
             miss_dates=np.array([], dtype=object))
    np.savez(tmp_path / "radar_coords_NW.npz", lats=np.array([[51.0, 51.0], [50.99, 50.99]]),
             lons=np.array([[-6.0, -5.99], [-6.0, -5.99]]))
    f = load_meteonet(tmp_path, missing="zero")
    np.testing.assert_allclose(f.values[0], [[0, 10 / 100 * 12], [0, 250 / 100 * 12]], rtol=1e-6)
    assert f.attrs["units"] == "mm/h" and "lat" in f.coords
    nan = load_meteonet(tmp_path)
    assert np.isnan(nan.values[0, 1, 0]) and nan.attrs["missing_pixels"] == 1
    with pytest.raises(InvalidInputError, match="NaN/inf values, the first at time=2016-01-01 00:00:00, y=1, x=0"):
        as_field(nan)
