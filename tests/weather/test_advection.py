"""The advection input (``NowcastConfig.advection_input``, ours): the extrapolation against pysteps' and an
exact translation, its wiring into both stages (shapes, forecast, save/load), and (slow) that stage 1 with
it beats Lucas-Kanade extrapolation alone, and stage 1 without it, on its own objective (MSE in model units)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.weather import Nowcast, NowcastConfig
from scigen.weather.data import synthetic_storms, to_units

pysteps = pytest.importorskip("pysteps")


def _translated(u: int = 1, v: int = 2, n: int = 9, size: int = 48) -> np.ndarray:
    """``[n, size, size]`` mm/h: a smooth non-negative field moved by ``(u, v)`` pixels a step (x, y), exactly
    (periodic roll)."""
    from scipy.ndimage import gaussian_filter

    base = gaussian_filter(np.random.default_rng(0).standard_normal((size, size)), 3, mode="wrap")
    base = np.maximum(4 * base / base.std(), 0.0)
    return np.stack([np.roll(base, (v * k, u * k), axis=(0, 1)) for k in range(n)])


def test_extrapolation_equals_pysteps_and_moves_a_translated_field_to_the_right_place():
    from scigen.weather.baselines import lk_motion
    from scigen.weather.nowcast.advection import extrapolate

    frames = _translated()
    ctx, truth = frames[:5], frames[5:]
    ex = extrapolate(ctx, 4)
    motion = lk_motion(ctx)
    np.testing.assert_allclose(motion[0].mean(), 1.0, atol=0.1)  # u, pixels per step
    np.testing.assert_allclose(motion[1].mean(), 2.0, atol=0.1)  # v
    ref = np.nan_to_num(pysteps.nowcasts.get_method("extrapolation")(ctx[-1], motion, 4), nan=0.0)
    np.testing.assert_allclose(ex, ref, atol=1e-12)
    inner = (slice(None), slice(12, 36), slice(12, 36))  # upstream of it stays inside the grid for 4 leads
    err, persist = np.abs(ex - truth)[inner].mean(), np.abs(ctx[-1] - truth)[inner].mean()
    assert err < 0.1 * truth[inner].mean() and err < 0.1 * persist, (err, persist)


def test_extrapolation_batches_and_converts_units():
    from scigen.weather.nowcast.advection import extrapolate

    frames = _translated(size=32)
    ctx = np.stack([frames[:5], frames[2:7]])
    ex = extrapolate(ctx, 3)
    assert ex.shape == (2, 3, 32, 32)
    np.testing.assert_array_equal(ex[1], extrapolate(ctx[1], 3))
    dbz = to_units(synthetic_storms(1, 5, 16, seed=3), "dBZ")
    rr = to_units(dbz, "mm/h").values
    from scigen.weather.data import convert

    np.testing.assert_allclose(extrapolate(dbz.values, 2, "dBZ"), convert(extrapolate(rr, 2), "mm/h", "dBZ"),
                               atol=1e-5)
    with pytest.raises(InvalidInputError, match="C >= 2"):
        extrapolate(ctx[:, :1], 3)
    with pytest.raises(InvalidInputError, match="NaN"):
        extrapolate(np.full((5, 8, 8), np.nan), 3)


@pytest.fixture(scope="module")
def advected():
    data = synthetic_storms(4, 26, 16, seed=0)
    model = Nowcast(NowcastConfig.preset("tiny", advection_input=True))
    return model.fit(data, max_steps=2, progress=False, logger=None), data


def test_untrained_estimator_is_the_extrapolation():
    """The U-Net's zero-initialised output layer: before training, stage 1 is exactly its residual base."""
    from scigen.weather.nowcast.advection import extrapolate

    data = synthetic_storms(4, 26, 16, seed=0)
    m = Nowcast(NowcastConfig.preset("tiny", advection_input=True))
    m.prepare_data(data, role="data")
    m.metadata["trained_steps"] = 1
    ctx = data.isel(time=slice(3, 8))
    phys = m.transform.inverse(m.transform.forward(ctx.values))  # the model-unit round trip
    np.testing.assert_allclose(m.sample(ctx, stage="mean").values[0], extrapolate(phys, 20), rtol=1e-4, atol=1e-4)


def test_advection_input_forecasts_and_survives_save_load(advected, tmp_path):
    model, data = advected
    rows = model.prepare_data(data, role="data")
    assert rows.shape[1] == 5 + 20 + 20  # context, target, the extrapolated context
    ctx = data.isel(time=slice(3, 9))
    fc = model.sample(ctx, n_samples=3, seed=1)
    assert fc.dims == ("member", "lead_time", "y", "x") and fc.shape == (3, 20, 16, 16) and float(fc.min()) >= 0
    model.save(tmp_path / "run")
    again = Nowcast.load(tmp_path / "run")
    assert again.config.advection_input
    np.testing.assert_array_equal(again.sample(ctx, n_samples=3, seed=1).values, fc.values)
    scores = again.evaluate(data, max_windows=1)
    assert np.isfinite(scores["stage1/CRPS"]) and np.isfinite(scores["flow/CRPS"])
    with pytest.raises(ValueError, match="advection_input"):
        model.network.estimator(torch.zeros(1, 5, 16, 16))


def _stage1(seed: int, advection: bool):
    cfg = NowcastConfig.preset("tiny", advection_input=advection, stage_shares={"flow": 0.0}, train={"seed": seed})
    return Nowcast(cfg).fit(synthetic_storms(24, 30, 32, seed=seed), max_steps=300, progress=False, logger=None)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_stage1_with_advection_input_beats_lk_extrapolation_and_stage1_without_it(seed):
    """Held-out storms, the estimator's own objective (MSE in model units, ``log1p`` rain): stage 1 with the
    advection input (300 steps) is at least 5% below the LK extrapolation it refines and below stage 1
    without it (measured on seeds 0 / 1: ratios 0.91 / 0.91 to LK, 0.86 / 0.90 to stage 1 without).
    Its MAE in mm/h does not beat LK's at this size (measured 1.06-1.13 x LK's): not asserted."""
    from scigen.weather.nowcast.advection import advection_channels
    from scigen.weather.nowcast.forecast import predict_mean

    m = _stage1(seed, True)
    rows = m.windows(synthetic_storms(8, 25, 32, seed=10 + seed), "test", stride=25)
    ctx, y = rows[:, :5], rows[:, 5:]
    mse_adv = float(((predict_mean(m, ctx) - y) ** 2).mean())
    mse_lk = float(((advection_channels(m.transform, ctx, 20) - y) ** 2).mean())
    plain = _stage1(seed, False)
    rows0 = plain.windows(synthetic_storms(8, 25, 32, seed=10 + seed), "test", stride=25)
    np.testing.assert_allclose(rows0.numpy(), rows.numpy())  # same transform, same windows
    mse_plain = float(((predict_mean(plain, ctx) - y) ** 2).mean())
    assert mse_adv < 0.95 * mse_lk, (mse_adv, mse_lk)
    assert mse_adv < 0.95 * mse_plain, (mse_adv, mse_plain)
