"""Hostile inputs to SBGM (wireless) through the Python API and the CLI: real arrays where complex ones
are needed, dims in the wrong order, a pilot matrix that does not fit, zero / negative noise variance,
NaN, unreadable files — each a named error naming the array, its shape and what was expected."""

from __future__ import annotations

import numpy as np
import pytest

from scigen.core.errors import InvalidInputError, NotTrainedError
from scigen.wireless import SBGM, SBGMConfig, as_channels, observe, pilot_matrix, write_dataset

from .helpers import assert_one_line_error, cli


@pytest.fixture(scope="module")
def data():
    return SBGM.default_data(quick=True).isel(sample=slice(60))


@pytest.fixture(scope="module")
def model(data):
    return SBGM(SBGMConfig.preset("tiny")).fit(data, max_steps=2)


def _set(ds, var, values):
    out = ds.copy()
    out[var] = (ds[var].dims, values)
    return out


@pytest.mark.parametrize(("broken", "match"), [
    (lambda d: _set(d, "y", d["y"].values.real), r"observations.y must be complex \(sample x pilot\), got real shape \(60, 16\)"),
    (lambda d: d.assign(y=d["y"].transpose("pilot", "sample")), r"observations.y has dims \('pilot', 'sample'\); expected \('sample', 'pilot'\)"),
    (lambda d: _set(d, "noise_var", np.zeros(60)), r"noise_var must be real, finite and > 0 per sample; got \[0.0, 0.0, 0.0\]"),
    (lambda d: _set(d, "noise_var", -d["noise_var"].values), "noise_var must be real, finite and > 0"),
    (lambda d: _set(d, "y", np.where(np.arange(16)[None] == 3, np.nan, d["y"].values)), r"observations.y \(shape \(60, 16\).*60 NaN/inf"),
    (lambda d: d.drop_vars("A"), r"observations lacks \['A'\]"),
])
def test_bad_observations(model, data, broken, match):
    with pytest.raises(InvalidInputError, match=match):
        model.estimate(broken(data))


def test_a_real_selection_matrix_is_cast_to_complex(model, data):
    """A real 0/1 selection matrix (issue 37) is accepted: the same estimate as the complex one."""
    real = _set(data, "A", data["A"].values.real)
    assert not np.iscomplexobj(real["A"].values)
    np.testing.assert_allclose(model.estimate(real).values, model.estimate(data).values)


def test_pilot_matrix_that_does_not_fit_the_dictionary(model, data):
    ch = data[["h"]].isel(antenna=slice(20))
    bad = observe(ch, pilot_matrix(20, 16, seed=0), 10.0)
    with pytest.raises(InvalidInputError, match=r"pilot matrix A has shape \(16, 20\); the model's dictionary has N = 32"):
        model.estimate(bad)
    with pytest.raises(InvalidInputError, match=r"pilot matrix A has shape \(16, 31\); expected \(n_pilots, 32\)"):
        observe(data[["h"]], pilot_matrix(31, 16), 10.0)


def test_bad_channel_arrays():
    h = np.ones((4, 8, 1, 1))
    with pytest.raises(InvalidInputError, match=r"channels must be complex .*got real shape \(4, 8, 1, 1\)"):
        as_channels(h)
    import xarray as xr

    da = xr.DataArray(h + 0j, dims=("antenna", "sample", "subcarrier", "symbol"))
    with pytest.raises(InvalidInputError, match=r"dims \('antenna', 'sample', 'subcarrier', 'symbol'\); expected \('sample', 'antenna'"):
        as_channels(da)
    with pytest.raises(InvalidInputError, match=r"got shape \(4, 8, 2\)"):
        as_channels(np.ones((4, 8, 2)) + 0j)
    bad = np.ones((4, 8), dtype=complex)
    bad[1, 2] = np.nan
    with pytest.raises(InvalidInputError, match=r"channels \(shape \(4, 8, 1, 1\).*1 NaN/inf"):
        as_channels(bad)


def test_bad_requests(model, data):
    with pytest.raises(NotTrainedError, match="untrained"):
        SBGM(SBGMConfig.preset("tiny")).estimate(data)
    for kw, match in [({"n_samples": 0}, "n_samples must be a positive int"), ({"max_paths": 0}, "max_paths must be"),
                      ({"geometry": {"n_antenas": 64}}, r"unknown keys \['n_antenas'\]"),
                      ({"geometry": {"n_subcarriers": 12}}, "trained with n_subcarriers=1")]:
        with pytest.raises(InvalidInputError, match=match):
            model.sample(**{"n_samples": 2, **kw})
    with pytest.raises(InvalidInputError, match="max_steps"):
        SBGM(SBGMConfig.preset("tiny")).fit(data, max_steps=0)
    with pytest.raises(InvalidInputError, match="data has n_antennas=32 but the config has n_antennas=16"):
        SBGM(SBGMConfig.preset("tiny", n_antennas=16)).fit(data, max_steps=1)


def test_cli_reports_bad_files_in_one_line(model, data, tmp_path):
    model.save(tmp_path / "run")
    write_dataset(_set(data, "noise_var", np.zeros(60)), tmp_path / "zero.nc")
    write_dataset(data, tmp_path / "good.h5")
    (tmp_path / "junk.nc").write_text("junk")
    r = cli("wireless", "sbgm", "estimate", "--run", str(tmp_path / "run"), "--data", str(tmp_path / "zero.nc"),
            "--out", str(tmp_path / "e.nc"))
    assert_one_line_error(r, "noise_var must be real, finite and > 0")
    assert not (tmp_path / "e.nc").exists()
    r = cli("wireless", "sbgm", "train", "--data", str(tmp_path / "junk.nc"), "--out", str(tmp_path / "r2"),
            "--preset", "tiny")
    assert_one_line_error(r, "junk.nc")
    r = cli("wireless", "sbgm", "estimate", "--run", str(tmp_path / "run"), "--data", str(tmp_path / "good.h5"),
            "--out", str(tmp_path / "e.h5"))
    assert r.exit_code == 0, r.output
    assert "NMSE_dB" in r.output and (tmp_path / "e.h5").exists()
    r = cli("wireless", "sbgm", "estimate", "--run", str(tmp_path / "run"), "--data", str(tmp_path / "good.h5"),
            "--out", str(tmp_path / "e.h5"))
    assert_one_line_error(r, "exists")
