"""D3U as a forecaster meets it (issues 36.3 and 37): uncalibrated draws of a calibrated model, one default
sample count, the stage split of ``max_steps``, a residual stage around an untrained forecaster, the
official recipe's switches (step lr decay, NS-Transformer time features, PatchTST BatchNorm), the
calibration pass's size and evaluate's cost per window."""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.timeseries import D3U
from scigen.timeseries.data import synthetic_nonstationary

TINY = dict(context_length=16, horizon=5, f_d_model=8, f_n_heads=2, f_e_layers=1, f_d_ff=16, d_model=8, n_heads=2,
            t_embed_dim=16, n_samples=8, steps=5, train={"batch_size": 32, "progress": False})


@pytest.fixture(scope="module")
def series():
    return synthetic_nonstationary(200, 2, seed=1)


@pytest.fixture(scope="module")
def calibrated(series):
    return D3U(**TINY).fit(series.iloc[:150], val_data=series.iloc[150:], max_steps=6)


def _spread(fc):
    return fc.values.std(0)  # [H, N]: the spread of the draws per step and variable


def test_calibrate_false_gives_the_papers_uncalibrated_draws(calibrated, series):
    """A calibrated model's draws are ``Ŷ + κ_{h,n}·r̂`` (centred chain draws r̂); ``calibrate=False`` gives
    ``Ŷ + r̂`` from the same chain (same seed), and switching ``config.calibrate`` off does the same."""
    from scigen.timeseries.d3u.process import sample_residuals

    m = calibrated
    c = m.config
    kappa = torch.tensor(m.metadata["spread_scale"])
    X = m.prepare_data(series.iloc[150:], role="val_data")[:3, : c.context_length]
    y_hat, r = sample_residuals(m.network, c, X, 6, method=c.method, steps=c.steps, generator=m.generator(1))
    r = r - r.mean(0, keepdim=True)
    with m._calibration(False):
        off = m._sample_std(X, 6, 1, None, None)
    torch.testing.assert_close(off, y_hat[None] + r, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(m._sample_std(X, 6, 1, None, None), y_hat[None] + r * kappa.float(), rtol=1e-5,
                               atol=1e-6)
    on = m.sample(series, n_samples=6, seed=3)
    uncal = m.sample(series, n_samples=6, seed=3, calibrate=False)
    assert _spread(uncal).max() < 0.5 * _spread(on).max()  # the factors are far from 1 after 6 steps
    m.config.calibrate = False
    try:
        np.testing.assert_array_equal(m.sample(series, n_samples=6, seed=3).values, uncal.values)
    finally:
        m.config.calibrate = True
    np.testing.assert_array_equal(m.sample(series, n_samples=6, seed=3).values, on.values)
    assert m.evaluate(series.iloc[150:], calibrate=False)["CRPS"] != m.evaluate(series.iloc[150:])["CRPS"]
    bare = D3U(**{**TINY, "calibrate": False}).fit(series, max_steps=4)
    with pytest.raises(InvalidInputError, match="no calibration factors"):
        bare.sample(series, calibrate=True)
    with pytest.raises(InvalidInputError, match="calibrate must be"):
        m.sample(series, calibrate="yes")


def test_sample_and_evaluate_draw_the_configs_number(calibrated, series):
    assert calibrated.sample(series).sizes["sample"] == calibrated.config.n_samples == 8
    seen = []
    real = calibrated._sample_std

    def spy(X, n, *a, **k):
        seen.append(n)
        return real(X, n, *a, **k)

    calibrated._sample_std = spy
    try:
        calibrated.evaluate(series.iloc[150:], max_windows=2)
        calibrated.sample(series)
    finally:
        del calibrated._sample_std
    assert seen == [8, 8]


def test_max_steps_is_split_over_the_two_stages_and_logged_once(series, caplog):
    with caplog.at_level(logging.INFO, logger="scigen.timeseries.d3u"):
        m = D3U(**TINY).fit(series, max_steps=10)
    msgs = [r.getMessage() for r in caplog.records if r.name == "scigen.timeseries.d3u"]
    assert len(msgs) == 1 and "max_steps=10 is the budget of both stages together: forecaster 5 + residual 5" in msgs[0]
    assert [(n, e - s) for n, s, e in m.history.stages] == [("forecaster", 5), ("residual", 5)]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="scigen.timeseries.d3u"):
        m = D3U(**{**TINY, "stage_shares": {"forecaster": 0.3}}).fit(series, max_steps=10)
    assert "forecaster 3 + residual 7" in caplog.records[-1].getMessage()
    assert [(n, e - s) for n, s, e in m.history.stages] == [("forecaster", 3), ("residual", 7)]
    assert "in all" in D3U.fit.__doc__ and "fit(max_steps=10)" in D3U.fit.__doc__


def test_residual_stage_on_an_untrained_builtin_forecaster_warns(series):
    with pytest.warns(UserWarning, match="has not been trained"):
        D3U(**TINY).fit(series, max_steps=3, stage="residual")
    m = D3U(**TINY).fit(series, max_steps=3, stage="forecaster")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        m.fit(series, max_steps=3, stage="residual")  # trained first: no warning


# ---------------------------------------------------------------------------------------------- calibration size
def test_kappa_standard_error_matches_a_monte_carlo_of_the_estimator():
    """The documented relative SE of a calibration factor, sqrt((1 + 1/n) / (2W)), against 4,000 simulated
    calibrations with Gaussian residuals (sd 0.7) and draws (sd 0.3)."""
    from scigen.timeseries.d3u.process import kappa_relative_se

    rng = np.random.default_rng(0)
    for W, n in ((128, 8), (32, 2)):
        e = rng.normal(0, 0.7, size=(4000, W))
        r = rng.normal(0, 0.3, size=(4000, W * n))
        kappa = np.sqrt((e**2).mean(1) / (r**2).mean(1))
        assert kappa.std() / (0.7 / 0.3) == pytest.approx(kappa_relative_se(W, n), rel=0.06), (W, n)
    assert kappa_relative_se(128, 8) == pytest.approx(0.0663, abs=5e-4)


def test_the_calibration_pass_takes_its_size_from_the_config(series, monkeypatch):
    from scigen.timeseries.d3u import process
    from scigen.timeseries.d3u.process import kappa_relative_se

    calls = []
    real = process.sample_residuals

    def spy(net, cfg, x, n, **kw):
        calls.append((x.shape[0], n))
        return real(net, cfg, x, n, **kw)

    monkeypatch.setattr(process, "sample_residuals", spy)
    m = D3U(**TINY, calibrate_windows=7, calibrate_draws=3).fit(series.iloc[:150], val_data=series.iloc[150:],
                                                               max_steps=4)
    assert calls == [(7, 3)]
    assert m.metadata["spread_scale_windows"] == 7
    assert m.metadata["spread_scale_rel_se"] == pytest.approx(kappa_relative_se(7, 3))
    calls.clear()
    D3U(**TINY).fit(series.iloc[:150], val_data=series.iloc[150:], max_steps=4)
    n_val = 200 - 150 - 16 - 5 + 1  # windows of the validation frame, fewer than the default 128
    assert calls == [(n_val, 8)]
    with pytest.raises(InvalidInputError, match="calibrate_draws"):
        D3U(**TINY, calibrate_draws=1)


def test_evaluation_chains_run_in_window_sized_calls_in_draw_major_order(monkeypatch):
    """sample_residuals runs the n·W chains CHUNK_SEQUENCES // N at a time, chain i = draw i // W of window
    i % W, each call indexing the windows' condition (a fake chain returns its condition to check the order)."""
    from scigen.timeseries.d3u import process

    W, n, N, H = 9, 5, 4, 3
    sizes = []

    class FakeProcess:
        def prior(self, shape, generator=None, device=None, dtype=None):
            return torch.zeros(shape)

        def sample(self, r_T, *, times, method, generator, progress, cond):
            sizes.append(cond.shape[0])
            return cond[:, :, 0][:, None, :].expand(cond.shape[0], H, N).clone()

    cond = torch.arange(W * N, dtype=torch.float32).view(W, N, 1).expand(W, N, 2)
    monkeypatch.setattr(process, "residual_process", lambda cfg, den: FakeProcess())
    monkeypatch.setattr(process, "condition", lambda net, x, mode, marks=None: (torch.zeros(W, H, N), cond))
    monkeypatch.setattr(process, "CHUNK_SEQUENCES", 8)  # 8 // 4 = 2 chains per call
    cfg = D3U(**TINY).config
    net = torch.nn.Module()
    net.denoiser = torch.nn.Identity()  # unused: the fake process stands in for the chain
    _, r = process.sample_residuals(net, cfg, torch.zeros(W, 16, N), n, method="ddim", steps=2)
    assert sizes == [2] * (n * W // 2) + [1] and r.shape == (n, W, H, N)
    want = cond[:, :, 0][None, :, None, :].expand(n, W, H, N)
    torch.testing.assert_close(r, want)


# ---------------------------------------------------------------------------------------------- recipe switches
def test_paper_preset_has_the_official_recipes_switches():
    paper = D3U.Config.preset("paper")
    assert paper.f_norm == "batch" and paper.train.lr_schedule == "step" and paper.f_time_features
    assert paper.train.lr_step_size is None and paper.train.lr_gamma == 0.5  # halve every epoch (lradj type1)
    default = D3U.Config()
    assert default.f_norm == "layer" and default.train.lr_schedule is None


def test_step_lr_decay_halves_d3us_lr_every_epoch_of_windows_in_each_stage(series):
    from lightning.pytorch.callbacks import Callback

    seen = []

    class Record(Callback):
        def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
            seen.append(trainer.optimizers[0].param_groups[0]["lr"])

    lr = 4e-3
    m = D3U(**{**TINY, "train": {**TINY["train"], "lr": lr, "lr_schedule": "step"}})
    m.fit(series, max_steps=16, callbacks=[Record()])
    windows = 200 - 16 - 5 + 1  # 180 windows, batch 32: an epoch is 6 steps; each stage restarts its schedule
    per_epoch = -(-windows // 32)
    stage = [lr * 0.5 ** (s // per_epoch) for s in range(8)]
    assert per_epoch == 6 and seen == pytest.approx(stage + stage)


def _manual_bn_eval(bn, h):
    return (h - bn.running_mean) / torch.sqrt(bn.running_var + bn.eps) * bn.weight + bn.bias


def test_patchtst_batchnorm_layer_is_the_papers_post_norm_block(series):
    from scigen.timeseries.forecasters.patchtst import BatchNormEncoderLayer

    m = D3U(**TINY, f_norm="batch").fit(series, max_steps=4, stage="forecaster")
    enc = m.network.forecaster.encoder
    assert all(isinstance(layer, BatchNormEncoderLayer) for layer in enc)
    assert isinstance(m.network.forecaster.norm, torch.nn.Identity)
    layer = enc[0].eval()
    torch.manual_seed(0)
    h = torch.randn(3, 4, 8)
    att = layer.attn
    q, k, v = (h @ w.T + b for w, b in zip(att.in_proj_weight.chunk(3), att.in_proj_bias.chunk(3), strict=True))
    heads = att.num_heads
    split = lambda t: t.view(3, 4, heads, -1).transpose(1, 2)  # noqa: E731
    a = torch.softmax(split(q) @ split(k).transpose(-1, -2) / (8 // heads) ** 0.5, -1) @ split(v)
    a = a.transpose(1, 2).reshape(3, 4, 8) @ att.out_proj.weight.T + att.out_proj.bias
    h1 = _manual_bn_eval(layer.norm_attn.bn, h + a)
    ff = layer.ff[3](torch.nn.functional.gelu(layer.ff[0](h1)))
    want = _manual_bn_eval(layer.norm_ff.bn, h1 + ff)
    torch.testing.assert_close(layer(h), want, rtol=1e-5, atol=1e-5)
    default = D3U(**TINY).fit(series, max_steps=2, stage="forecaster")
    assert isinstance(default.network.forecaster.norm, torch.nn.LayerNorm)


def test_time_features_are_the_timef_calendar_encoding():
    import pandas as pd

    from scigen.timeseries.data import time_features

    idx = pd.DatetimeIndex(["2024-03-05 17:00", "2024-12-31 23:00"])  # a Tuesday, a Tuesday (leap year)
    tf = time_features(idx, pd.Timedelta(hours=1))
    want = [[17 / 23 - 0.5, 1 / 6 - 0.5, 4 / 30 - 0.5, 64 / 365 - 0.5],
            [23 / 23 - 0.5, 1 / 6 - 0.5, 30 / 30 - 0.5, 365 / 365 - 0.5]]
    np.testing.assert_allclose(tf, want)
    assert time_features(idx, pd.Timedelta(minutes=15)).shape == (2, 5)
    assert time_features(idx, pd.Timedelta(days=1)).shape == (2, 3)


def test_nstransformer_in_d3u_embeds_the_calendar_of_context_and_horizon(series, monkeypatch, tmp_path):
    import pandas as pd

    from scigen.timeseries.data import time_features

    m = D3U(**TINY, forecaster="nstransformer").fit(series, max_steps=4)
    f = m.network.forecaster
    assert m.metadata["time_features"] == 4 and f.time_features == 4 and f.mark_embed is not None
    seen = []
    real = m._sample_std
    monkeypatch.setattr(m, "_sample_std", lambda X, n, *a, **k: seen.append(k.get("marks")) or real(X, n, *a, **k))
    m.sample(series, n_samples=3, seed=0)
    step = series.index[1] - series.index[0]
    times = series.index[-16:].append(pd.DatetimeIndex([series.index[-1] + (i + 1) * step for i in range(5)]))
    torch.testing.assert_close(seen[0][0], torch.as_tensor(time_features(times, step), dtype=torch.float32))
    X, _ = m.evaluation_windows(series, max_windows=4)
    marks = m.evaluation_marks(series, max_windows=4)
    torch.testing.assert_close(marks[1], torch.as_tensor(time_features(series.index[1:22], step), dtype=torch.float32))
    with torch.no_grad():  # the marks are used: other calendar days give another forecast
        assert not torch.allclose(m.point_forecast(X, marks), m.point_forecast(X, marks.roll(7, dims=1)))
    with pytest.raises(InvalidInputError, match="evaluation_marks"):
        m.point_forecast(X)
    m.evaluate(series, max_windows=4)
    m.save(tmp_path / "run")
    back = D3U.load(tmp_path / "run")
    np.testing.assert_array_equal(back.sample(series, n_samples=3, seed=1).values,
                                  m.sample(series, n_samples=3, seed=1).values)
    off = D3U(**TINY, forecaster="nstransformer", f_time_features=False).fit(series, max_steps=2)
    assert off.network.forecaster.mark_embed is None and off.evaluation_marks(series) is None
