"""NsDiff system: learnability vs baselines, TMDM mode, save/load/sample round trip, bad inputs, demo."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.timeseries import NsDiff
from scigen.timeseries.data import make_windows, split_ratio, synthetic_nonstationary
from scigen.timeseries.metrics import crps_ensemble
from scigen.timeseries.nsdiff.process import NsDiffNet, nsdiff_loss

SMALL = dict(context_length=32, horizon=8, rolling_length=8, diffusion_steps=30, beta_end=0.4, d_model=16,
             n_heads=2, e_layers=1, d_layers=1, d_ff=32, g_hidden=32, denoiser_hidden=48, batch_size=64, lr=3e-3,
             n_samples=40, dropout=0.0)


@pytest.fixture(scope="module")
def trained():
    df = synthetic_nonstationary(1500, 2, seed=3)
    sp = split_ratio(df, SMALL["context_length"])
    untrained = NsDiff(**SMALL)
    untrained.fit(sp.train, max_steps=1)
    model = NsDiff(**SMALL, val_every=50, patience=3).fit(sp.train, max_steps=350, val_data=sp.val)
    return model, untrained, sp


def test_learns_better_than_untrained_and_gaussian_baselines(trained):
    model, untrained, sp = trained
    kw = dict(stride=8, max_windows=40, seed=0)
    after, before = model.evaluate(sp.val, **kw), untrained.evaluate(sp.val, **kw)
    # baselines in standardised space: N(0, 1) (train mean/var) and N(context mean, context var) per window
    z = model.scaler.transform(sp.val.to_numpy())
    X, Y, _ = make_windows(z, 32, 8, 8)
    X, Y = X[:40], Y[:40]
    rng = np.random.default_rng(0)
    base_global = crps_ensemble(rng.normal(size=(400, *Y.shape)), Y)
    m, s = X.mean(1, keepdims=True), X.std(1, keepdims=True)
    base_ctx = crps_ensemble(m + s * rng.normal(size=(400, *Y.shape)), Y)
    assert after["CRPS"] < 0.7 * before["CRPS"]
    assert after["CRPS"] < base_global
    # the per-window N(context mean, context var) baseline is the strong one: 0.585 vs 0.614 measured (before the
    # Analytic-DPM reverse variance and the scale-equivariant g / denoiser NsDiff only tied it, 0.62 vs 0.61)
    assert after["CRPS"] < base_ctx
    assert 0 <= after["QICE"] <= 0.18 and after["QICE_x100"] == pytest.approx(100 * after["QICE"])
    assert 0.7 < after["PICP"] <= 1  # nominal 0.9; 0.80 measured
    # early stopping on the validation loss ran: validations every 50 steps, the best weights kept
    assert len(model.metadata["val_losses"]) >= 2 and model.metadata["best_step"] % 50 == 0


def test_sample_is_a_dataarray_with_future_timestamps_and_load_round_trips(trained, tmp_path):
    model, _, sp = trained
    ctx = sp.val.iloc[:40]
    fc = model.sample(ctx, n=5, seed=7)
    assert fc.dims == ("sample", "time", "variable") and fc.shape == (5, 8, 2)
    assert list(fc["variable"].values) == ["x0", "x1"]
    expected = pd.date_range(ctx.index[-1] + pd.Timedelta("1h"), periods=8, freq="1h")
    assert (pd.DatetimeIndex(fc["time"].values) == expected).all()
    model.save(tmp_path / "run")
    back = NsDiff.load(tmp_path / "run")
    np.testing.assert_allclose(back.sample(ctx, n=5, seed=7).values, fc.values, rtol=1e-5, atol=1e-5)
    # samples are in data units: the median sits near the recent level, not near 0
    assert abs(float(fc.median(("sample", "time")).sel(variable="x0")) - ctx["x0"].iloc[-8:].mean()) < 3 * ctx["x0"].std()


def test_tmdm_mode_is_the_same_code_with_unit_variances():
    torch.manual_seed(0)
    model = NsDiff(**SMALL, mode="tmdm")
    net = NsDiffNet(model.config, 2)
    x, y = torch.randn(6, 32, 2), torch.randn(6, 8, 2)
    f, g = net.mean_var(x)
    assert torch.equal(g, torch.ones_like(f))
    gen = torch.Generator().manual_seed(5)
    loss, parts = nsdiff_loss(net, model.schedule, x, y, 8, gen)
    assert set(parts) == {"eps", "f"}
    # redo the loss by hand with TMDM's closed-form forward: sqrt(ab) y0 + (1 − sqrt(ab)) f + sqrt(1 − ab) eps
    gen = torch.Generator().manual_seed(5)
    k = torch.randint(1, 31, (3,), generator=gen)
    k = torch.cat([k, 31 - k])
    eps = torch.randn(y.shape, generator=gen)
    ab = model.schedule.alpha_bar[k].float()[:, None, None]
    yk = ab.sqrt() * y + (1 - ab.sqrt()) * f + (1 - ab).sqrt() * eps
    eps_hat, _ = net.denoiser(yk, k, f, torch.ones_like(f))
    expect = ((eps_hat - eps) ** 2).mean() + ((f - y) ** 2).mean()
    assert float(loss.detach()) == pytest.approx(float(expect.detach()), rel=1e-5)


def test_bad_inputs_are_named(trained):
    model, _, sp = trained
    with pytest.raises(InvalidInputError, match="not trained yet"):
        NsDiff(**SMALL).sample(sp.val, n=2)
    with pytest.raises(InvalidInputError, match=r"missing \['x1'\]"):
        model.sample(sp.val[["x0"]], n=2)
    with pytest.raises(InvalidInputError, match="context has 10 rows; context_length = 32"):
        model.sample(sp.val.iloc[:10], n=2)
    bad = sp.val.copy()
    bad.iloc[3, 0] = np.nan
    with pytest.raises(InvalidInputError, match="column 'x0'"):
        model.evaluate(bad)
    with pytest.raises(InvalidInputError, match="n must be a positive"):
        model.sample(sp.val, n=0)
    with pytest.raises(InvalidInputError, match="rolling_length"):
        NsDiff(context_length=16, rolling_length=20)
    with pytest.raises(InvalidInputError, match="data has 20 rows"):
        NsDiff(**SMALL).fit(sp.train.iloc[:20], max_steps=1)


def test_demo_quick_end_to_end(tmp_path, monkeypatch):
    small = {**NsDiff.demo_config(True), **{k: SMALL[k] for k in ("d_model", "n_heads", "d_ff")}}
    monkeypatch.setattr(NsDiff, "demo_config", classmethod(lambda cls, quick=False: {**small, "max_steps": 30}))
    res = NsDiff.demo(tmp_path, quick=True)
    report = json.loads((tmp_path / "report.json").read_text())
    assert {"CRPS", "CRPS_sum", "QICE", "PICP", "MSE", "MAE", "CRPS_gaussian_baseline"} <= set(report["metrics"])
    assert (tmp_path / "forecast.png").stat().st_size > 1000
    assert NsDiff.load(tmp_path / "model").config.horizon == small["horizon"]
    assert res.metrics["CRPS"] > 0
