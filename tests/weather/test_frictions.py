"""A meteorologist's radar cubes (issue 37): unit spellings, dims, no-data, jittered times, other grids,
unit-dependent thresholds. Nothing is assumed; each refusal says what to pass."""

import numpy as np
import pandas as pd
import pytest

from scigen.core.errors import InvalidInputError
from scigen.weather.data import make_field
from scigen.weather.data.fields import as_field
from scigen.weather.data.units import check_units


def _cube(units="mm/h", n=5, size=16):
    rng = np.random.default_rng(0)
    return make_field(rng.gamma(0.5, 2.0, (n, size, size)), pd.date_range("2024-01-01", periods=n, freq="5min"),
                      units=units)


@pytest.mark.parametrize("spelling", ["mm/h", "mm h-1", "mm/hr", "mm hr-1", "mm h**-1", "mm.h-1", "mm h^-1",
                                      "MM/H", "mm/hour", "millimeters per hour", "mm / h"])
def test_rain_rate_spellings_are_mm_per_hour(spelling):
    assert check_units(spelling) == "mm/h"


@pytest.mark.parametrize("spelling", ["kg/m2", "kg m-2", "kg m**-2", "kg m^-2", "kg/m²", "kg.m-2"])
def test_vil_spellings_are_kg_per_m2(spelling):
    assert check_units(spelling) == "kg/m2"


@pytest.mark.parametrize("spelling", ["dBZ", "dbz", "DBZ", "dBz"])
def test_reflectivity_spellings(spelling):
    assert check_units(spelling) == "dBZ"


@pytest.mark.parametrize("units,hint", [("mm", "accumulation: divide by the time step in hours"),
                                        ("kg m-2 s-1", "flux: multiply by 3600"),
                                        ("mm/day", "divide by 24")])
def test_other_quantities_are_refused_with_the_conversion(units, hint):
    with pytest.raises(InvalidInputError, match=f"unknown units '{units}'.*not a rain rate.*{hint}"):
        check_units(units)


def test_missing_units_are_refused_not_assumed():
    f = _cube()
    f.attrs = {}
    with pytest.raises(InvalidInputError, match=r"attrs\['units'\] is missing; set one of mm/h, dBZ"):
        as_field(f)


@pytest.mark.parametrize("names,hint", [
    ({"y": "lat", "x": "lon"}, "field.rename({'lat': 'y', 'lon': 'x'})"),
    ({"time": "t", "y": "row", "x": "col"}, "field.rename({'t': 'time', 'row': 'y', 'col': 'x'})"),
    ({"y": "a", "x": "b"}, "name the dimensions time (datetime64), y (rows) and x (columns)"),
])
def test_other_dim_names_get_the_rename_to_apply(names, hint):
    with pytest.raises(InvalidInputError) as ei:
        as_field(_cube().rename(names))
    assert hint in str(ei.value)


def test_no_data_nan_is_refused_with_what_to_fill():
    f = _cube()
    f[:, :3, :3] = np.nan  # outside the radar's range
    with pytest.raises(InvalidInputError, match=r"no no-data mask: crop .* fill no-data with 0 mm/h"):
        as_field(f)
    g = make_field(np.full((2, 4, 4), 20.0), pd.date_range("2024-01-01", periods=2, freq="5min"), units="dBZ")
    g[0, 0, 0] = np.nan
    with pytest.raises(InvalidInputError, match=r"no-echo value \(e\.g\. -15 dBZ\)"):
        as_field(g)


def test_numpy_input_names_make_field():
    with pytest.raises(InvalidInputError, match=r"got ndarray; wrap an array with scigen.weather.data.make_field"):
        as_field(np.zeros((5, 4, 4)))


def test_jittered_scan_times_get_the_rounding_to_apply(trained2):
    model, data = trained2
    ctx = data.isel(time=slice(0, 5))
    jit = ctx.assign_coords(time=pd.DatetimeIndex(ctx.time.values) + pd.to_timedelta([0, 0, 10, 0, -7], "s"))
    with pytest.raises(InvalidInputError, match=r"field.time.dt.round\('5min'\)"):
        model.sample(jit, stage="mean")
    fixed = jit.assign_coords(time=jit.time.dt.round("5min"))  # the advised fix
    np.testing.assert_array_equal(model.sample(fixed, stage="mean").values, model.sample(ctx, stage="mean").values)


def test_a_grid_elsewhere_keeps_its_coordinates_and_another_spacing_is_refused(trained2):
    model, data = trained2
    ctx = data.isel(time=slice(0, 5))
    moved = ctx.assign_coords(x=ctx.x.values + 500.0, y=ctx.y.values - 200.0)  # same spacing, another place
    fc = model.sample(moved, stage="mean")
    np.testing.assert_array_equal(fc.x.values, moved.x.values)  # was: the training grid's coordinates
    np.testing.assert_array_equal(fc.y.values, moved.y.values)
    with pytest.raises(InvalidInputError, match="dimension 'x' is spaced 2, the training grid 1; regrid"):
        model.sample(ctx.assign_coords(x=ctx.x.values * 2), stage="mean")


def test_mm_per_hour_thresholds_are_refused_on_a_model_in_other_units():
    from scigen.weather import Nowcast, NowcastConfig
    from scigen.weather.data import synthetic_storms, to_units

    data = to_units(synthetic_storms(2, 26, 16, seed=0), "dBZ")
    model = Nowcast(NowcastConfig.preset("tiny")).fit(data, max_steps=2, progress=False)
    with pytest.raises(InvalidInputError, match=r"thresholds \(0.5, 2.0, 5.0, 10.0\) are the mm/h defaults but "
                                                r"the model is in dBZ"):
        model.evaluate(data, max_windows=1, n_samples=1)
    model.config.thresholds = (20.0, 30.0, 40.0)  # the advised fix
    assert "flow/CSI_30" in model.evaluate(data, max_windows=1, n_samples=1)


def test_jittered_training_times_are_refused_not_dropped():
    from scigen.weather import Nowcast, NowcastConfig
    from scigen.weather.data import synthetic_storms

    data = synthetic_storms(1, 60, 16, seed=0)
    t = pd.DatetimeIndex(data.time.values)
    jitter = pd.to_timedelta(np.where(np.arange(60) % 7 == 3, 12, 0), "s")  # every 7th scan 12 s late
    model = Nowcast(NowcastConfig.preset("tiny"))
    with pytest.raises(InvalidInputError, match=r"are 0 days 00:05:12 apart, near the 0 days 00:05:00 step .*"
                                                r"would be dropped silently: round the times"):
        model.fit(data.assign_coords(time=t + jitter), max_steps=1, progress=False)
    # a real gap between events (here an hour) is not jitter: windows stay inside each event
    gap = t + pd.to_timedelta(np.where(np.arange(60) >= 30, 3600, 0), "s")
    model = Nowcast(NowcastConfig.preset("tiny"))
    rows = model.prepare_data(data.assign_coords(time=gap), role="data")
    assert rows.shape[0] == 2 * (30 - 25 + 1)  # 6 windows of 25 frames in each 30-frame event
