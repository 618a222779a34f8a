"""SBGM end to end on the synthetic site: planted path angles are recovered from generated samples,
estimation beats LS and OMP across SNRs, the model transfers to a 64-antenna array without retraining,
and the Kronecker CSGMM works on an OFDM grid."""

from __future__ import annotations

import numpy as np
import pytest

from scigen.wireless import SBGM, SBGMConfig, generate_channels, make_site, observe, pilot_matrix
from scigen.wireless.baselines import estimate_all
from scigen.wireless.metrics import power_profile
from scigen.wireless.sbgm.system import DEFAULT_DATA


@pytest.fixture(scope="module")
def data():
    return SBGM.default_data(quick=True)


@pytest.fixture(scope="module")
def model(data):
    return SBGM(SBGMConfig.preset("small")).fit(data, max_steps=25)


def _peaks(profile, grid, n):
    """The ``n`` largest local maxima of a profile, at least 5 grid points apart."""
    order = np.argsort(profile)[::-1]
    picked = []
    for i in order:
        if all(abs(i - j) >= 5 for j in picked):
            picked.append(i)
        if len(picked) == n:
            break
    return np.sort(grid[picked])


def test_planted_cluster_angles_are_recovered_from_generated_samples(model, data):
    gen = model.sample(n_samples=1000, seed=0)
    grid = model.dictionary().angles.numpy()
    prof = power_profile(gen["path_angle"].values, gen["path_power"].values, grid)
    true = np.sort(np.asarray(data.attrs["site_angles"]))
    found = _peaks(prof, grid, len(true))
    np.testing.assert_allclose(np.degrees(found), np.degrees(true), atol=4.0)  # grid step 1.4 deg, spread 2 deg


def test_generated_paths_are_sparse_and_energy_preserving(model):
    gen = model.sample(n_samples=200, seed=1)
    assert gen.sizes["path"] == model.config.max_paths
    energy = (np.abs(gen["h"].values) ** 2).sum((1, 2, 3))
    assert 0.5 * 32 < energy.mean() < 2 * 32  # E‖h‖² = N for the unit-power site
    # the same seed gives the same samples, another seed others
    np.testing.assert_array_equal(model.sample(n_samples=5, seed=3)["h"].values, model.sample(n_samples=5, seed=3)["h"].values)
    assert not np.allclose(model.sample(n_samples=5, seed=4)["h"].values, model.sample(n_samples=5, seed=3)["h"].values)


@pytest.mark.parametrize("snr", [0.0, 10.0, 20.0])
def test_estimation_beats_ls_and_omp_across_snrs(model, data, snr):
    test = SBGM.default_data(quick=True, seed=50 + int(snr), snr_db=snr).isel(sample=slice(120))
    res = estimate_all(model, data, test, methods=("LS", "OMP"))
    assert res["SBGM-CSGMM"] < res["LS"] - 1.0 and res["SBGM-CSGMM"] < res["OMP"] - 0.5, res


def test_configuration_transfer_to_64_antennas_without_retraining(model):
    site = make_site(DEFAULT_DATA["n_clusters"], seed=DEFAULT_DATA["site_seed"])
    ch = generate_channels(150, n_antennas=64, site=site, seed=77)
    test = observe(ch, pilot_matrix(64, 32, "selection", seed=5), 10.0, seed=78)
    with pytest.raises(Exception, match="64"):
        model.estimate(test)  # the trained dictionary has 32 rows: a clear error, not a wrong answer
    est = model.estimate(test, geometry={"n_antennas": 64})
    assert est.sizes["antenna"] == 64
    from scigen.wireless.baselines import ls_estimate, omp_estimate
    from scigen.wireless.metrics import nmse_db

    h = ch["h"].values.reshape(150, -1)
    y, A, z = test["y"].values, test["A"].values, test["noise_var"].values
    ours = nmse_db(est.values.reshape(150, -1), h)
    D64 = model.dictionary({"n_antennas": 64}).matrix.numpy()
    assert ours < nmse_db(ls_estimate(y, A), h) - 1.0
    assert ours < nmse_db(omp_estimate(y, z, A, D64), h) - 0.5
    gen = model.sample(n_samples=20, seed=0, geometry={"n_antennas": 64})
    assert gen["h"].shape == (20, 64, 1, 1)


def test_kronecker_csgmm_on_an_ofdm_grid():
    site = make_site(2, seed=1)
    ch = generate_channels(200, n_antennas=1, n_subcarriers=12, n_symbols=7, site=site, seed=0)
    train = observe(ch, pilot_matrix(84, 24, "selection", seed=2), 15.0, seed=3)
    model = SBGM(SBGMConfig.preset("tiny", kronecker=True, delay_grid=16, doppler_grid=8, kron_inner_steps=5))
    model.fit(train, max_steps=8)
    assert model.network.kronecker and model.network.gamma.shape == (4, 16 * 8)
    test_ch = generate_channels(80, n_antennas=1, n_subcarriers=12, n_symbols=7, site=site, seed=9)
    test = observe(test_ch, pilot_matrix(84, 24, "selection", seed=2), 15.0, seed=10)
    res = estimate_all(model, train, test, methods=("LS",))
    assert res["SBGM-CSGMM"] < res["LS"] - 1.0, res
    gen = model.sample(n_samples=10, seed=0)
    assert gen["h"].shape == (10, 1, 12, 7) and np.all(gen["path_delay"].values >= 0)
    assert np.all(np.abs(gen["path_doppler"].values) <= model.config.nu_max)


def test_save_load_round_trip_gives_the_same_estimates(model, data, tmp_path):
    model.save(tmp_path / "run")
    again = SBGM.load(tmp_path / "run")
    sub = data.isel(sample=slice(20))
    np.testing.assert_allclose(again.estimate(sub).values, model.estimate(sub).values)
    assert again.history.losses == model.history.losses



def test_planted_path_delays_are_recovered_from_generated_samples():
    """Delay-only OFDM (64 subcarriers, 15 kHz: resolution 1/(64·15 kHz) ≈ 1.04 µs) with two clusters at
    1 µs and 4 µs: the power-delay profile of generated paths peaks at the planted delays."""
    from scigen.wireless import Site

    site = Site((0.0, 0.0), (1.0e-6, 4.0e-6), (0.0, 0.0), (0.6, 0.4))
    ch = generate_channels(300, n_antennas=1, n_subcarriers=64, n_symbols=1, site=site, seed=0)
    train = observe(ch, pilot_matrix(64, 32, "selection", seed=1), (10.0, 20.0), seed=2)
    model = SBGM(SBGMConfig.preset("tiny", delay_grid=64)).fit(train, max_steps=15)
    gen = model.sample(n_samples=1000, seed=0)
    grid = model.dictionary().delays.numpy()
    prof = power_profile(gen["path_delay"].values, gen["path_power"].values, grid)
    found = _peaks(prof, grid, 2)
    np.testing.assert_allclose(found, [1.0e-6, 4.0e-6], atol=0.3e-6)  # grid step 0.094 µs


def test_csgmm_refuses_gradient_training_options(data):
    model = SBGM(SBGMConfig.preset("tiny"))
    for bad in ({"lr": 1e-3}, {"batch_size": 8}, {"resume": True}):
        with pytest.raises(Exception, match=r"closed-form EM.*" + list(bad)[0]):
            model.fit(data, max_steps=1, **bad)
    assert not model.is_trained
    model.fit(data, max_steps=1, logger=None, resume=False, progress=False)  # options that ask for nothing pass
    assert model.history.steps == 1
