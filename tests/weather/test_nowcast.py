"""The nowcast's wiring against closed forms: windows, lead weights, the flow's start point, valid times,
seeds, save/load, bad inputs; the quality claims (stage 1 beats persistence; the flow restores intensity
distribution and spectrum) are slow tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.weather import Nowcast, NowcastConfig
from scigen.weather.data import make_field, synthetic_storms
from scigen.weather.nowcast.windows import window_starts


def test_windows_never_cross_a_gap():
    t = pd.DatetimeIndex(list(pd.date_range("2024-01-01", periods=6, freq="5min"))
                         + list(pd.date_range("2024-01-01 02:00", periods=4, freq="5min")))
    np.testing.assert_array_equal(window_starts(t, 3, pd.Timedelta("5min")), [0, 1, 2, 3, 6, 7])
    np.testing.assert_array_equal(window_starts(t, 3, pd.Timedelta("5min"), stride=2), [0, 2, 6])
    assert window_starts(t, 7, pd.Timedelta("5min")).size == 0
    t0 = pd.Timestamp("2024-01-01")
    t2 = pd.DatetimeIndex([t0 + pd.Timedelta(hours=2 * e, minutes=5 * i) for e in range(3) for i in range(4)])
    np.testing.assert_array_equal(window_starts(t2, 4, pd.Timedelta("5min"), stride=4), [0, 4, 8])


def test_lead_weights_and_their_frame_sampling():
    from scigen.weather.nowcast.training import lead_mask

    c = NowcastConfig(horizon=5, lead_weight_min=0.2)
    np.testing.assert_allclose(c.lead_weights(), [0.2, 0.4, 0.6, 0.8, 1.0])
    assert NowcastConfig(lead_weighting="uniform").lead_weights() == [1.0] * 20
    w = torch.tensor(c.lead_weights())
    m = lead_mask(w, 20000, torch.Generator().manual_seed(0))
    freq = m.float().mean(dim=(0, 2, 3))
    np.testing.assert_allclose(freq.numpy(), w.numpy(), atol=4 * np.sqrt(0.25 / 20000))  # 4 binomial sd


def test_source_noise_is_pmrfs_constant_and_the_removed_far_noise_is_ignored():
    """PMRF's ``sigma_s`` at every lead; ``sigma_s_far`` (ours, swept and removed) in an old config loads with a
    DeprecationWarning and changes nothing."""
    assert NowcastConfig(horizon=3, sigma_s=0.07).source_noise() == [0.07] * 3
    with pytest.warns(DeprecationWarning, match=r"NowcastConfig\.sigma_s_far was removed"):
        c = NowcastConfig.preset("tiny", horizon=5, sigma_s=0.05, sigma_s_far=0.25)
    assert c.source_noise() == [0.05] * 5 and c == NowcastConfig.preset("tiny", horizon=5, sigma_s=0.05)


def test_spread_inflation_schedule_and_its_closed_form():
    """``spread_inflation`` (ours): ``x̄ + k_l·(x_m − x̄)`` keeps the ensemble mean and multiplies every
    member's deviation (so the spread) by ``k_l`` exactly; ``k = 1`` and one member are the identity."""
    from scigen.weather.nowcast.forecast import inflate

    c = NowcastConfig(horizon=5, spread_inflation=1.0, spread_inflation_far=3.0)
    np.testing.assert_allclose(c.inflation(), [1.0, 1.5, 2.0, 2.5, 3.0])
    assert NowcastConfig(horizon=3, spread_inflation=1.5).inflation() == [1.5] * 3
    assert NowcastConfig(horizon=3).inflation() == [1.0] * 3  # off by default
    x = torch.randn(6, 2, 5, 4, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    k = torch.tensor(c.inflation(), dtype=torch.float64)
    y = inflate(x, c.inflation())
    torch.testing.assert_close(y.mean(0), x.mean(0))
    torch.testing.assert_close(y - y.mean(0), k.view(1, 1, -1, 1, 1) * (x - x.mean(0)))
    torch.testing.assert_close(y.std(0), k.view(1, -1, 1, 1) * x.std(0))
    assert torch.equal(inflate(x, [1.0] * 5), x) and torch.equal(inflate(x[:1], c.inflation()), x[:1])
    with pytest.raises(Exception, match="spread_inflation"):
        NowcastConfig(spread_inflation=0.0)
    with pytest.raises(InvalidInputError, match="3 factors"):
        inflate(x, [1.0, 2.0, 3.0])
    with pytest.raises(InvalidInputError, match="> 0"):
        inflate(x, [1.0, 1.0, -1.0, 1.0, 1.0])


def test_spread_inflation_acts_in_rain_units_and_keeps_rain_non_negative(trained2):
    """In mm/h: members = mean + k·(member − mean) wherever no member is pushed below 0, and 0 where one would
    be (the forward transform's floor); the ensemble mean moves only there."""
    from scigen.weather.nowcast.forecast import inflate_members

    model, data = trained2
    z = torch.as_tensor(model.transform.forward(np.abs(np.random.default_rng(0).normal(2.0, 1.5, (5, 2, 20, 16, 16)))))
    x = model.transform.inverse(z.numpy()).astype(np.float64)
    y = model.transform.inverse(inflate_members(model, z, [2.0] * 20).numpy()).astype(np.float64)
    want = x.mean(0) + 2.0 * (x - x.mean(0))
    assert (y >= 0).all() and (want < 0).any()
    np.testing.assert_allclose(y, np.maximum(want, 0.0), rtol=1e-4, atol=1e-4)
    fine = (want >= 0).all(0)
    np.testing.assert_allclose(y.mean(0)[fine], x.mean(0)[fine], rtol=1e-4, atol=1e-4)
    assert torch.equal(inflate_members(model, z, [1.0] * 20), z)


def test_untrained_flow_starts_from_mean_plus_per_lead_noise(trained2):
    """A zero velocity (the zero-initialised output layer) leaves ``x1 = mean + sigma_s·eps``: the members'
    deviation from the mean has standard deviation ``sigma_s`` at every lead (model units)."""
    from scigen.weather.nowcast.forecast import draw_members

    model, data = trained2
    m = Nowcast(NowcastConfig.preset("tiny", sigma_s=0.3))
    m.prepare_data(data, role="data")
    m.metadata["trained_steps"] = 1
    ctx = m.windows(data)[:4, :5]
    d = (draw_members(m, ctx, 64, 0, None, None) - draw_members(m, ctx, 1, 0, None, None, "mean")).double()
    sd = d.std(dim=(0, 1, 3, 4)).numpy()  # per lead, over 64 x 4 x 16 x 16 values
    np.testing.assert_allclose(sd, m.config.source_noise(), rtol=0.02)


def test_untrained_flow_with_zero_noise_returns_the_stage1_mean(trained2):
    """sigma_s = 0 and a zero velocity (the zero-initialised output layer): x1 = mean is never moved."""
    model, data = trained2
    m = Nowcast(NowcastConfig.preset("tiny", sigma_s=0.0))
    m.prepare_data(data, role="data")
    m.metadata["trained_steps"] = 1
    ctx = data.isel(time=slice(0, 5))
    np.testing.assert_allclose(m.sample(ctx, n_samples=2, seed=0).values,
                               np.repeat(m.sample(ctx, stage="mean").values, 2, axis=0), rtol=1e-5, atol=1e-6)


def test_forecast_is_xarray_with_members_leads_and_valid_times(trained2):
    model, data = trained2
    ctx = data.isel(time=slice(3, 9))
    fc = model.sample(ctx, n_samples=3, seed=1, method="heun", steps=2)
    assert fc.dims == ("member", "lead_time", "y", "x") and fc.shape == (3, 20, 16, 16)
    t_last = pd.Timestamp(ctx["time"].values[-1])
    assert pd.Timestamp(fc["valid_time"].values[0]) == t_last + pd.Timedelta("5min")
    assert pd.Timestamp(fc["valid_time"].values[-1]) == t_last + pd.Timedelta("100min")
    assert fc.attrs["units"] == "mm/h" and float(fc.min()) >= 0
    np.testing.assert_array_equal(fc.values, model.sample(ctx, n_samples=3, seed=1, method="heun", steps=2).values)
    assert not np.array_equal(fc.values, model.sample(ctx, n_samples=3, seed=2, method="heun", steps=2).values)


def test_save_load_round_trip_gives_the_same_forecast(trained2, tmp_path):
    model, data = trained2
    model.save(tmp_path / "run")
    again = Nowcast.load(tmp_path / "run")
    a, b = model.sample(data, n_samples=2, seed=0), again.sample(data, n_samples=2, seed=0)
    np.testing.assert_array_equal(a.values, b.values)
    cli = again.sample_for_cli(2, 0)  # the training data's last context, kept in the weights file
    np.testing.assert_allclose(cli.values, a.values, rtol=1e-5, atol=1e-5)


def test_units_needing_a_stated_relation_are_refused_then_converted_as_stated(trained2):
    from scigen.weather.data import to_units

    model, data = trained2
    ctx = data.isel(time=slice(0, 5))
    a = model.sample(ctx, stage="mean").values
    dbz = to_units(ctx, "dBZ")  # Marshall-Palmer, a = 200, b = 1.6
    with pytest.raises(InvalidInputError, match=r"context is in dBZ, the model in mm/h: the conversion needs a Z-R "
                                                r"relation.*to_units\(context, 'mm/h', a=200, b=1.6\)"):
        model.sample(dbz, stage="mean")
    b = model.sample(to_units(dbz, "mm/h", a=200, b=1.6), stage="mean").values  # the advised call
    np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-3)


def _ctx(n=5, size=16, freq="5min", units="mm/h"):
    return make_field(np.ones((n, size, size)), pd.date_range("2024-01-01", periods=n, freq=freq), units=units)


@pytest.mark.parametrize("bad,needle", [
    (lambda: _ctx(n=3), "context: dimension 'time' has 3 frames; the model needs context_frames = 5"),
    (lambda: _ctx(size=8), "grid (y, x) = (8, 8) differs from the training grid (16, 16)"),
    (lambda: _ctx(freq="10min"), "dimension 'time' steps by 0 days 00:10:00; the model was trained on 0 days 00:05:00"),
    (lambda: _ctx().rename({"x": "lon"}), "dims must be ('time', 'y', 'x'), got ('time', 'y', 'lon')"),
    (lambda: _ctx() * np.nan, "NaN/inf values"),
    (lambda: _ctx() - 2, "negative mm/h value -1"),
    (lambda: _ctx().assign_attrs(units="furlongs"), "unknown units 'furlongs'"),
])
def test_bad_context_is_named(trained2, bad, needle):
    model, _ = trained2
    with pytest.raises(InvalidInputError) as ei:
        model.sample(bad(), n_samples=1)
    assert needle in str(ei.value)


def test_bad_sampler_options_are_named(trained2):
    model, data = trained2
    with pytest.raises(InvalidInputError, match="unknown flow sampler method 'ddpm'"):
        model.sample(data, n_samples=1, method="ddpm")
    with pytest.raises(InvalidInputError, match="stage must be 'flow' or 'mean'"):
        model.sample(data, stage="both")
    with pytest.raises(InvalidInputError, match="n_samples"):
        model.sample(data, n_samples=0)


def test_training_data_checks():
    m = Nowcast(NowcastConfig.preset("tiny"))
    with pytest.raises(InvalidInputError, match=r"grid \(y, x\) = \(15, 16\) must be divisible by 2"):
        m.fit(synthetic_storms(1, 26, 16).isel(y=slice(0, 15)), max_steps=1)
    gappy = synthetic_storms(3, 20, 16)  # events of 20 frames, windows need 25
    with pytest.raises(InvalidInputError, match="no run of 25 evenly spaced frames"):
        Nowcast(NowcastConfig.preset("tiny")).fit(gappy, max_steps=1)


def _trained(steps: int, **over):
    data = synthetic_storms(24, 30, 32, seed=0)
    test = synthetic_storms(8, 25, 32, seed=1)
    m = Nowcast(NowcastConfig.preset("tiny", **over)).fit(data, max_steps=steps, progress=False, logger=None)
    return m, m.windows(test, "test", stride=25)


@pytest.mark.slow
def test_stage1_beats_persistence_on_mse():
    m, rows = _trained(300, stage_shares={"flow": 0.0})
    from scigen.weather.nowcast.forecast import predict_mean

    ctx, y = rows[:, :5], rows[:, 5:]
    mse_model = float(((predict_mean(m, ctx) - y) ** 2).mean())
    mse_persist = float(((ctx[:, -1:] - y) ** 2).mean())
    assert mse_model < 0.8 * mse_persist, (mse_model, mse_persist)


@pytest.mark.slow
def test_flow_restores_intensity_distribution_and_spectrum_keeping_csi():
    """Stage 2 vs stage 1 on held-out storms: the wet-pixel intensity distribution (W1 to the truth's,
    scipy) and the RAPSD distance both shrink, and CSI at 0.5 mm/h stays within 0.1."""
    from scipy.stats import wasserstein_distance

    from scigen.weather import metrics as M
    from scigen.weather.nowcast.forecast import draw_members

    m, rows = _trained(600)
    tf = m.transform
    obs = tf.inverse(rows[:, 5:].numpy())
    mean = tf.inverse(draw_members(m, rows[:, :5], 1, 0, None, None, "mean").numpy())[0]
    flow = tf.inverse(draw_members(m, rows[:, :5], 4, 0, None, None).numpy())
    w_mean = wasserstein_distance(mean.ravel(), obs.ravel())
    w_flow = np.mean([wasserstein_distance(f.ravel(), obs.ravel()) for f in flow])
    assert w_flow < w_mean, (w_flow, w_mean)
    assert np.mean([M.spectral_distance(f, obs) for f in flow]) < M.spectral_distance(mean, obs)
    assert abs(np.mean([M.csi(f, obs, 0.5) for f in flow]) - M.csi(mean, obs, 0.5)) < 0.1


def test_flow_share_is_deprecated_for_stage_shares():
    """Issue 32: one budget name for every staged system; a saved config with the old name still loads."""
    from scigen.core.system import make_config

    with pytest.warns(DeprecationWarning, match=r"NowcastConfig.flow_share is deprecated; use "
                                                r"stage_shares=\{'flow': 0.0\}"):
        cfg = make_config(NowcastConfig, {"flow_share": 0.0})
    assert cfg.stage_shares == {"flow": 0.0} and NowcastConfig().stage_shares == {"flow": 0.5}
    with pytest.warns(DeprecationWarning):
        assert cfg.flow_share == 0.0


def test_staged_fit_interrupted_in_the_flow_stage_resumes_bit_for_bit(tmp_path, crash_after):
    """The engine's stages (issue 32): crashed inside ``flow`` (``estimator`` finished; EMA on), rerun with
    ``resume=True``: the estimator stage is skipped and the weights and losses equal the uninterrupted run's."""
    data = synthetic_storms(4, 30, 16, seed=0)
    cfg = NowcastConfig.preset("tiny", train={"checkpoint_every": 1})
    q = dict(progress=False, logger=None)
    full = Nowcast(cfg).fit(data, max_steps=6, **q)
    with pytest.raises(RuntimeError, match="simulated crash"):
        # crash after 5 steps: step 2 of flow (estimator: 3 of 6 steps)
        Nowcast(cfg).fit(data, max_steps=6, checkpoint_dir=str(tmp_path), callbacks=[crash_after(5)], **q)
    resumed = Nowcast(cfg).fit(data, max_steps=6, checkpoint_dir=str(tmp_path), resume=True, **q)
    assert resumed.history.stages == full.history.stages == [("estimator", 0, 3), ("flow", 3, 6)]
    assert resumed.history.losses == full.history.losses
    for k, v in full.network.state_dict().items():
        assert torch.equal(resumed.network.state_dict()[k], v), k
