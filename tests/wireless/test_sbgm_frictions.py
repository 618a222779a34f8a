"""SBGM as a wireless engineer meets it (issue 37): numpy arrays and a constructor for observations, scalar
noise variances and real selection matrices, channel dims beside ``y``, the channel layout stated or refused
(never guessed from the width of ``A``), planar arrays from the data's attributes, the array convention
(element spacing, steering sign) and custom dictionaries, angles in degrees, NaN-padded path tables, and
plain HDF5 files. (``fit(progress=True)`` drawing CSGMM's bar: ``test_sbgm_progress.py``.)"""

from __future__ import annotations

import math
import warnings

import h5py
import numpy as np
import pytest
import torch
import xarray as xr
from scipy.stats import wasserstein_distance

from scigen.core.errors import InvalidInputError
from scigen.wireless import (
    SBGM,
    SBGMConfig,
    generate_channels,
    make_site,
    observations_from_arrays,
    observe,
    pilot_matrix,
    read_dataset,
)
from scigen.wireless.dictionaries import Dictionary
from scigen.wireless.metrics import nmse_db, power_profile, rms_spread, spread_distances


@pytest.fixture(scope="module")
def data():
    return SBGM.default_data(quick=True).isel(sample=slice(200))


def _tiny(**kw):
    return SBGM(SBGMConfig.preset("tiny", **kw))


def _fit(obj, data, steps=4):
    return obj.fit(data, max_steps=steps, progress=False)


# ------------------------------------------------------------------ arrays and the observation constructor
def test_complex_numpy_channel_arrays_are_accepted(data):
    ref = _fit(_tiny(), data[["h"]])  # clean channels from the Dataset
    H4 = data["h"].values
    four = _fit(_tiny(), H4)
    two = _fit(_tiny(), H4[:, :, 0, 0])  # [sample, antenna]: a SIMO array
    for m in (four, two):
        assert m.geometry == {"n_antennas": 32, "n_subcarriers": 1, "n_symbols": 1}
        torch.testing.assert_close(m.network.gamma, ref.network.gamma)
    torch.testing.assert_close(_fit(_tiny(), torch.as_tensor(H4)).network.gamma, ref.network.gamma)
    # [sample, element] laid out by the config's counts
    ch = generate_channels(60, n_antennas=1, n_subcarriers=6, n_symbols=4, seed=0)
    flat = ch["h"].values.reshape(60, -1)
    m = _fit(_tiny(n_subcarriers=6, n_symbols=4, delay_grid=8, doppler_grid=8), flat, 2)
    assert m.geometry == {"n_antennas": 1, "n_subcarriers": 6, "n_symbols": 4}
    with pytest.raises(InvalidInputError, match=r"\[sample, antenna, subcarrier, symbol\] or \[sample, element\]"):
        _tiny().fit(ch["h"].values[:, 0], max_steps=1)


def test_observations_from_arrays_fits_like_the_dataset(data):
    y, z, A = data["y"].values, data["noise_var"].values, data["A"].values
    obs = observations_from_arrays(y, z, A.real, n_antennas=32)  # a real 0/1 selection matrix
    assert obs["A"].dtype == np.complex128 and obs.attrs["n_antennas"] == 32
    np.testing.assert_array_equal(obs["y"].values, y)
    a, b = _fit(_tiny(), obs), _fit(_tiny(), data)
    torch.testing.assert_close(a.network.gamma, b.network.gamma)
    # one noise variance for all; true channels flat [sample, element] reshaped by the counts
    one = observations_from_arrays(y, 0.05, A, h=data["h"].values.reshape(200, -1), n_antennas=32)
    np.testing.assert_array_equal(one["noise_var"].values, np.full(200, 0.05))
    np.testing.assert_array_equal(one["h"].values, data["h"].values)
    assert "NMSE_dB" in b.evaluate(one)
    # A=None: every element observed
    assert np.array_equal(observations_from_arrays(y, 0.1, n_antennas=16)["A"].values, np.eye(16))
    for kw, match in [({"y": y[0]}, r"one observation is y\[None, :\]"), ({"A": A[:5]}, "with 16 rows"),
                      ({"noise_var": -1.0}, "noise_var must be finite and > 0"),
                      ({"noise_var": z[:3]}, "one per sample"),
                      ({"h": data["h"].values.reshape(200, -1), "n_antennas": None}, "laid out"),
                      ({"n_antennas": 30}, "A has 32 columns")]:
        args = {"y": y, "noise_var": z, "A": A, "n_antennas": 32, **kw}
        with pytest.raises(InvalidInputError, match=match):
            observations_from_arrays(**args)


def test_scalar_noise_variance_and_sample_antenna_channels_in_a_dataset(data):
    model = _fit(_tiny(), data)
    ds = xr.Dataset({"y": data["y"], "noise_var": 0.05, "A": (("pilot", "element"), data["A"].values.real),
                     "h": (("sample", "antenna"), data["h"].values[:, :, 0, 0])})
    per_sample = data.assign(noise_var=(("sample",), np.full(200, 0.05)))
    np.testing.assert_allclose(model.estimate(ds).values, model.estimate(per_sample).values)
    assert model.evaluate(ds)["NMSE_dB"] == pytest.approx(model.evaluate(per_sample)["NMSE_dB"])
    assert _fit(_tiny(), ds, 1).geometry["n_antennas"] == 32  # (sample, antenna) states a 32-antenna array
    bad = ds.rename({"antenna": "element"})
    with pytest.raises(InvalidInputError, match=r"h have dims \('sample', 'element'\)"):
        _tiny().fit(bad, max_steps=1)


# ------------------------------------------------------------------ the channel layout is stated, never guessed
def test_ofdm_pilots_without_a_layout_are_refused_and_with_one_give_a_delay_doppler_model():
    ch = generate_channels(120, n_antennas=1, n_subcarriers=24, n_symbols=14, seed=0)
    H = ch["h"].values.reshape(120, -1)
    rng = np.random.default_rng(0)
    A = np.eye(48, 336)[:, rng.permutation(336)]  # 48 pilots of your own, a real selection matrix
    y = H @ A.T + 0.1 * (rng.standard_normal((120, 48)) + 1j * rng.standard_normal((120, 48))) / math.sqrt(2)
    bare = xr.Dataset({"y": (("sample", "pilot"), y), "noise_var": 0.01, "A": (("pilot", "element"), A)})
    with pytest.raises(InvalidInputError, match=r"A has 336 columns .* n_subcarriers= / n_symbols="):
        _tiny().fit(bare, max_steps=1)
    obs = observations_from_arrays(y, 0.01, A, n_subcarriers=24, n_symbols=14)
    m = _fit(_tiny(delay_grid=16, doppler_grid=8), obs, 2)
    d = m.dictionary()
    assert (d.n_antennas, d.n_subcarriers, d.n_symbols, d.grid_shape) == (1, 24, 14, (1, 16, 8))
    # the config may say it instead; a contradiction is named
    assert _fit(_tiny(n_subcarriers=24, n_symbols=14, delay_grid=16, doppler_grid=8), bare, 1).geometry == \
        {"n_antennas": 1, "n_subcarriers": 24, "n_symbols": 14}
    with pytest.raises(InvalidInputError, match="n_subcarriers=24 but the config has n_subcarriers=12"):
        _tiny(n_subcarriers=12).fit(obs, max_steps=1)


def test_a_planar_array_in_the_data_gets_a_planar_dictionary():
    site = make_site(3, seed=1, planar=True)
    train = observe(generate_channels(400, array=(4, 4), site=site, seed=0), pilot_matrix(16, 8, seed=1), (5.0, 15.0))
    test = observe(generate_channels(150, array=(4, 4), site=site, seed=5), pilot_matrix(16, 8, seed=1), 10.0, seed=6)
    assert list(train.attrs["array"]) == [4, 4]
    m = _fit(_tiny(angle_grid=8, vertical_grid=8), train, 15)
    assert m.geometry["array"] == (4, 4)
    want = Dictionary.build(16, array=(4, 4), angle_grid=8, vertical_grid=8).matrix
    torch.testing.assert_close(m.dictionary().matrix, want)
    assert not torch.allclose(Dictionary.build(16, angle_grid=64).matrix, want)  # what a ULA would have been
    from scigen.wireless.baselines import ls_estimate

    h = test["h"].values.reshape(150, -1)
    ours = nmse_db(m.estimate(test).values.reshape(150, -1), h)
    assert ours < nmse_db(ls_estimate(test["y"].values, test["A"].values), h) - 1.0
    gen = m.sample(5, seed=0, geometry={"array": (8, 8)})
    assert gen["h"].shape == (5, 64, 1, 1) and "path_vertical_angle" in gen
    with pytest.raises(InvalidInputError, match=r"planar array \(4, 4\)"):
        m.sample(2, geometry={"n_antennas": 64})
    assert "angle_spread_W1_deg" in m.evaluate(test)


# ------------------------------------------------------------------ array convention and custom dictionaries
@pytest.mark.parametrize(("spacing", "sign"), [(0.5, -1), (0.25, 1), (1.0, -1)])
def test_steering_vectors_follow_the_element_spacing_and_sign(spacing, sign):
    m = SBGM(SBGMConfig.preset("tiny", element_spacing=spacing, steering_sign=sign, angle_grid=16))
    m.fit(observations_from_arrays(np.ones((3, 8), complex), 0.1, n_antennas=8), max_steps=1, progress=False)
    d = m.dictionary()
    theta = -math.pi / 2 + math.pi * np.arange(16) / 16
    want = np.exp(sign * 2j * math.pi * spacing * np.arange(8)[:, None] * np.sin(theta)[None]) / 4.0
    np.testing.assert_allclose(d.matrix.numpy(), want, atol=1e-12)


def test_data_with_the_opposite_steering_sign_is_read_with_steering_sign_plus_one():
    """Conjugated channels are the same paths under the convention exp(+jπ n sin θ): with steering_sign=+1 the
    generated paths sit at the planted cluster angles, with the default sign at their mirror images."""
    data = SBGM.default_data(quick=True)
    conj = data.copy()
    conj["h"] = data["h"].conj()
    conj["y"] = data["y"].conj()
    true = np.sort(np.asarray(data.attrs["site_angles"]))

    def peaks(model):
        gen = model.sample(n_samples=800, seed=0)
        grid = model.dictionary().angles.numpy()
        prof = power_profile(gen["path_angle"].values, gen["path_power"].values, grid)
        picked = []
        for i in np.argsort(prof)[::-1]:
            if all(abs(i - j) >= 5 for j in picked):
                picked.append(i)
            if len(picked) == len(true):
                break
        return np.sort(grid[picked])

    plus = SBGM(SBGMConfig.preset("small", steering_sign=1)).fit(conj, max_steps=20, progress=False)
    np.testing.assert_allclose(np.degrees(peaks(plus)), np.degrees(true), atol=4.0)
    minus = SBGM(SBGMConfig.preset("small")).fit(conj, max_steps=20, progress=False)
    np.testing.assert_allclose(np.degrees(peaks(minus)), np.degrees(np.sort(-true)), atol=4.0)


def test_a_custom_dictionary_is_used_saved_and_kept_to_its_configuration(data, tmp_path):
    standard = _fit(_tiny(), data)
    D = Dictionary.build(32, angle_grid=64).matrix.numpy()
    custom = SBGM(SBGMConfig.preset("tiny")).fit(data, max_steps=4, progress=False, dictionary=D)
    torch.testing.assert_close(custom.network.gamma, standard.network.gamma)
    assert custom.metadata["custom_dictionary"]
    gen = custom.sample(3, seed=0)
    assert np.isnan(gen["path_angle"].values).all() and gen["path_index"].shape == (3, 8)  # no physical grid given
    custom.save(tmp_path / "run")
    back = SBGM.load(tmp_path / "run")
    np.testing.assert_allclose(back.estimate(data).values, standard.estimate(data).values)
    with pytest.raises(InvalidInputError, match="custom dictionary"):
        back.sample(2, geometry={"n_antennas": 64})
    # with its physical grid, paths carry angles again
    named = Dictionary.custom(D, 32, angles=Dictionary.build(32, angle_grid=64).angles)
    m = SBGM(SBGMConfig.preset("tiny")).fit(data, max_steps=2, progress=False, dictionary=named)
    assert np.isfinite(m.sample(3, seed=0)["path_angle"].values).all()
    with pytest.raises(InvalidInputError, match="data has n_antennas=32 but the custom dictionary has n_antennas=16"):
        SBGM(SBGMConfig.preset("tiny")).fit(data, max_steps=1, dictionary=Dictionary.custom(D[:16], 16))


def test_subcarrier_spacing_is_named_as_such_and_the_old_name_still_loads():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        c = SBGMConfig(spacing=30e3)
    assert c.subcarrier_spacing == 30e3 and any("subcarrier_spacing" in str(x.message) for x in w)
    d = Dictionary.build(1, 8, delay_grid=4, subcarrier_spacing=30e3, tau_max=4e-6)
    tau = np.arange(4) * 1e-6
    np.testing.assert_allclose(d.matrix.numpy() * 2, np.exp(-2j * math.pi * np.arange(8)[:, None] * 30e3 * tau),
                               atol=1e-12)


# ------------------------------------------------------------------ path tables
def test_angles_beyond_pi_are_refused_and_degrees_with_units_converted(data):
    gen = data[["path_angle", "path_power"]].isel(sample=slice(100))
    ref = data[["path_angle", "path_power"]].isel(sample=slice(100, 200))
    want = spread_distances(gen, ref)["angle_spread_W1_deg"]
    deg = ref.copy()
    deg["path_angle"] = np.degrees(ref["path_angle"])
    with pytest.raises(InvalidInputError, match=r"> π: angles are radians"):
        spread_distances(gen, deg)
    deg["path_angle"].attrs["units"] = "deg"
    assert spread_distances(gen, deg)["angle_spread_W1_deg"] == pytest.approx(want, rel=1e-12)


def test_nan_padded_path_tables():
    values = np.array([[0.1, 0.3, np.nan], [-0.2, np.nan, np.nan], [np.nan, np.nan, np.nan]])
    powers = np.array([[1.0, 3.0, np.nan], [2.0, np.nan, np.nan], [np.nan, np.nan, np.nan]])
    got = rms_spread(values, powers)
    mean = (0.1 * 1 + 0.3 * 3) / 4
    assert got[0] == pytest.approx(math.sqrt((1 * (0.1 - mean) ** 2 + 3 * (0.3 - mean) ** 2) / 4))
    assert got[1] == 0.0 and np.isnan(got[2])
    # the distance between NaN-padded tables is that of their channels with paths (scipy's W1, degrees)
    rng = np.random.default_rng(0)
    a_v, a_p = rng.uniform(-1, 1, (40, 5)), rng.uniform(0.1, 1, (40, 5))
    b_v, b_p = rng.uniform(-0.5, 0.5, (30, 5)), rng.uniform(0.1, 1, (30, 5))
    b_v[::3, 3:] = np.nan  # padding in the angle only ...
    b_p[1::3, 2:] = np.nan  # ... or in the power only
    b_v[5] = np.nan  # a channel without paths
    ds = lambda v, p: xr.Dataset({"path_angle": (("sample", "path"), v), "path_power": (("sample", "path"), p)})  # noqa: E731
    got = spread_distances(ds(a_v, a_p), ds(b_v, b_p))["angle_spread_W1_deg"]
    sb = [rms_spread(b_v[i:i + 1][:, ~np.isnan(b_v[i] + b_p[i])], b_p[i:i + 1][:, ~np.isnan(b_v[i] + b_p[i])])[0]
          for i in range(30) if i != 5]
    assert got == pytest.approx(wasserstein_distance(np.degrees(rms_spread(a_v, a_p)), np.degrees(sb)), rel=1e-9)


def test_evaluate_on_nan_padded_planted_paths(data):
    model = _fit(_tiny(), data)
    pad = data.copy()
    pa, pp = data["path_angle"].values.copy(), data["path_power"].values.copy()
    pa[::2, 6:] = np.nan
    pp[::2, 6:] = np.nan
    pad["path_angle"] = (("sample", "path"), pa)
    pad["path_power"] = (("sample", "path"), pp)
    out = model.evaluate(pad, seed=0)
    gen = model.sample(200, seed=0)
    assert out["angle_spread_W1_deg"] == pytest.approx(spread_distances(gen, pad)["angle_spread_W1_deg"])
    assert np.isfinite(out["angle_spread_W1_deg"]) and np.isfinite(out["NMSE_dB"])


def test_planar_samples_are_compared_on_the_spatial_angle():
    rng = np.random.default_rng(1)
    az, el, p = rng.uniform(-1, 1, (20, 4)), rng.uniform(-0.5, 0.5, (20, 4)), rng.uniform(0.1, 1, (20, 4))
    ref = xr.Dataset({"path_angle": (("sample", "path"), az), "path_elevation": (("sample", "path"), el),
                      "path_power": (("sample", "path"), p)})
    g_h, g_v = rng.uniform(-1, 1, (20, 4)), rng.uniform(-0.5, 0.5, (20, 4))
    gen = xr.Dataset({"path_angle": (("sample", "path"), g_h), "path_vertical_angle": (("sample", "path"), g_v),
                      "path_power": (("sample", "path"), p)})
    spatial = np.arcsin(np.cos(el) * np.sin(az))
    want = wasserstein_distance(np.degrees(rms_spread(g_h, p)), np.degrees(rms_spread(spatial, p)))
    assert spread_distances(gen, ref)["angle_spread_W1_deg"] == pytest.approx(want, rel=1e-9)


# ------------------------------------------------------------------ plain HDF5 files
def test_plain_complex_hdf5_files_are_read(tmp_path, data):
    H = data["h"].values[:, :, 0, 0]
    with h5py.File(tmp_path / "native.h5", "w") as f:
        f["H"] = H
    got = read_dataset(tmp_path / "native.h5")
    assert got["h"].dims == ("sample", "antenna")
    np.testing.assert_array_equal(got["h"].values, H)
    assert _fit(_tiny(), got, 1).geometry["n_antennas"] == 32
    comp = np.zeros(H.shape, dtype=[("real", "f8"), ("imag", "f8")])
    comp["real"], comp["imag"] = H.real, H.imag
    ofdm = generate_channels(5, n_antennas=1, n_subcarriers=6, n_symbols=4)["h"].values[:, 0]
    with h5py.File(tmp_path / "several.h5", "w") as f:
        f["chan"] = comp
        f["grid"] = ofdm
        f["freqs"] = np.arange(3.0)
    with pytest.raises(InvalidInputError, match=r"several datasets .* pass name="):
        read_dataset(tmp_path / "several.h5")
    np.testing.assert_array_equal(read_dataset(tmp_path / "several.h5", name="chan")["h"].values, H)
    np.testing.assert_array_equal(read_dataset(tmp_path / "several.h5", name="chan", lazy=True)["h"].values, H)
    with pytest.raises(InvalidInputError, match=r"shape \(5, 6, 4\); pass dims="):
        read_dataset(tmp_path / "several.h5", name="grid")
    g = read_dataset(tmp_path / "several.h5", name="grid", dims=("sample", "subcarrier", "symbol"))
    from scigen.wireless import as_channels

    assert as_channels(g).shape == (5, 1, 6, 4)
    with pytest.raises(InvalidInputError, match="no dataset 'nope'"):
        read_dataset(tmp_path / "several.h5", name="nope")
    # plain y / A / noise_var datasets are observations
    with h5py.File(tmp_path / "obs.h5", "w") as f:
        f["y"], f["A"], f["noise_var"] = data["y"].values, data["A"].values.real, data["noise_var"].values
    obs = read_dataset(tmp_path / "obs.h5")
    assert set(obs.data_vars) == {"y", "A", "noise_var"} and obs["y"].dims == ("sample", "pilot")
    m = _fit(_tiny(n_antennas=32), obs, 4)
    torch.testing.assert_close(m.network.gamma, _fit(_tiny(), data, 4).network.gamma)
