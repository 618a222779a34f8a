"""D3U as a system: user forecasters plug in (and are checked before training), staged fit on the engine,
reproducible sampling, save/load, xarray output, the demo."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from scigen.core.errors import InvalidInputError
from scigen.timeseries import D3U
from scigen.timeseries.data import synthetic_nonstationary

TINY = dict(context_length=16, horizon=5, f_d_model=8, f_n_heads=2, f_e_layers=1, f_d_ff=16, d_model=8, n_heads=2,
            t_embed_dim=16, n_samples=8, steps=5, train={"batch_size": 32, "progress": False})


class LastValue(nn.Module):
    """A user forecaster: a learned per-step gain on the last context value (no tokens)."""

    def __init__(self, horizon=5):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(horizon, 1))

    def forward(self, x):
        return self.gain * x[:, -1:]


class WithTokens(LastValue):
    def forward_with_tokens(self, x):
        return self.forward(x), x.transpose(1, 2)[:, :, -4:]  # [B, N, 4]: its own per-variable tokens


class WrongShape(nn.Module):
    def forward(self, x):
        return x[:, -3:]  # 3 steps instead of the horizon


class MakesNaN(LastValue):
    def forward(self, x):
        return super().forward(x) * float("nan")


@pytest.fixture(scope="module")
def series():
    return synthetic_nonstationary(200, 2, seed=1)


@pytest.fixture(scope="module")
def model(series):
    return D3U(**TINY).fit(series, max_steps=6)


def test_fit_splits_the_budget_and_samples_a_dataarray(model, series):
    assert model.history.steps == 6 and model.metadata["forecaster"] == "PatchTST"
    fc = model.sample(series, n_samples=4, seed=0)
    assert fc.dims == ("sample", "time", "variable") and fc.shape == (4, 5, 2)
    step = series.index[1] - series.index[0]
    assert fc.time.values[0] == (series.index[-1] + step).to_datetime64()
    assert list(fc["variable"].values) == ["x0", "x1"]


def test_sampling_is_reproducible_by_seed_and_mean_is_the_frozen_forecast(model, series):
    a, b = model.sample(series, n_samples=6, seed=3), model.sample(series, n_samples=6, seed=3)
    assert (a == b).all() and not (a == model.sample(series, n_samples=6, seed=4)).all()
    X = torch.as_tensor(model.scaler.transform(series.to_numpy()[-16:]), dtype=torch.float32)[None]
    y_hat = model.scaler.inverse(model.point_forecast(X)[0].double().numpy())
    assert abs(a.mean("sample").values - y_hat).max() < 1e-4  # centred residual draws: the mean is Ŷ


@pytest.mark.parametrize("method", ["ddpm", "ddim", "unipc", "euler"])
def test_any_engine_method_samples(model, series, method):
    assert model.sample(series, n_samples=2, seed=0, method=method, steps=4).shape == (2, 5, 2)


def test_save_load_round_trip(model, series, tmp_path):
    model.save(tmp_path / "run")
    again = D3U.load(tmp_path / "run")
    assert (again.sample(series, n_samples=3, seed=0) == model.sample(series, n_samples=3, seed=0)).all()
    assert again.history.losses == model.history.losses


@pytest.mark.parametrize("cls", [LastValue, WithTokens])
def test_a_user_module_plugs_in_trains_and_reloads(cls, series, tmp_path):
    user = cls()
    m = D3U(forecaster=user, **TINY).fit(series, max_steps=4)
    assert m.config.forecaster == "custom" and m.network.forecaster is user
    assert m.metadata["cond_dim"] == (4 if cls is WithTokens else 5)
    assert not torch.equal(user.gain.detach(), torch.ones(5, 1))  # stage 1 trained it with MSE
    fc = m.sample(series, n_samples=3, seed=0)
    m.save(tmp_path / "run")
    with pytest.raises(InvalidInputError, match="forecaster=module"):
        D3U.load(tmp_path / "run")
    again = D3U.load(tmp_path / "run", forecaster=cls())
    assert (again.sample(series, n_samples=3, seed=0) == fc).all()


def test_a_trained_user_module_stays_frozen_with_stage_residual(series):
    user = LastValue()
    with torch.no_grad():
        user.gain.fill_(0.9)
    m = D3U(forecaster=user, **TINY).fit(series, max_steps=3, stage="residual")
    assert torch.equal(user.gain.detach(), torch.full((5, 1), 0.9)) and m.history.steps == 3


@pytest.mark.parametrize("bad,match", [(WrongShape(), r"returned \(\d+, 3, 2\).*expected \(batch, horizon, "
                                                      r"variables\) = \(\d+, 5, 2\)"),
                                       (MakesNaN(), "non-finite")])
def test_a_broken_user_forecaster_is_refused_before_training(bad, match, series):
    m = D3U(forecaster=bad, **TINY)
    with pytest.raises(InvalidInputError, match=match):
        m.fit(series, max_steps=2)
    assert m.history.steps == 0


def test_bad_arguments_are_named(model, series):
    with pytest.raises(InvalidInputError, match="stage"):
        D3U(**TINY).fit(series, max_steps=2, stage="all")
    with pytest.raises(InvalidInputError, match="forecaster_steps"):
        D3U(**TINY).fit(series, max_steps=2, forecaster_steps=2)
    with pytest.raises(InvalidInputError, match="unknown forecaster|forecaster"):
        D3U(**TINY, forecaster="lstm")
    with pytest.raises(InvalidInputError, match="method"):
        model.sample(series, n_samples=2, method="rk9")
    with pytest.raises(InvalidInputError, match="needs the module"):
        D3U(**TINY, forecaster="custom").fit(series, max_steps=2)


def test_demo_quick_end_to_end(tmp_path):
    res = D3U.demo(tmp_path, quick=True)
    assert (tmp_path / "forecast.png").stat().st_size > 1000 and (tmp_path / "report.json").exists()
    assert res.metrics["CRPS"] < 0.9 and res.metrics["PICP"] > 0.5


def test_two_stage_fit_resumes_exactly_from_its_checkpoints(series, tmp_path, monkeypatch):
    """A two-stage fit stopped inside the residual stage and rerun with resume=True ends at the same weights and
    losses as an uninterrupted one, training only the missing residual steps (the forecaster stage is complete)."""
    from scigen.timeseries.d3u import process

    cfg = {**TINY, "train": {**TINY["train"], "checkpoint_every": 3}}
    full = D3U(**cfg).fit(series, max_steps=12, forecaster_steps=6)
    ck = tmp_path / "ck"
    D3U(**cfg).fit(series, max_steps=9, forecaster_steps=6, checkpoint_dir=str(ck))  # stops at residual step 3
    assert sorted(p.name for p in ck.iterdir()) == ["forecaster", "residual", "stages.json"]
    f_calls, r_calls = [], []
    real = process.residual_loss
    monkeypatch.setattr(process, "residual_loss", lambda *a, **k: r_calls.append(1) or real(*a, **k))
    monkeypatch.setattr(D3U, "_forecaster_loss",
                        lambda self, net, b: f_calls.append(1) or nn.functional.mse_loss(
                            net.forecaster(b[:, : self.config.context_length]), b[:, self.config.context_length :]))
    resumed = D3U(**{**cfg, "train": {**cfg["train"], "resume": True}}).fit(series, max_steps=12, forecaster_steps=6,
                                                                            checkpoint_dir=str(ck))
    assert len(f_calls) == 0 and len(r_calls) == 3  # residual steps 3, 4, 5 only
    for k, v in full.network.state_dict().items():
        torch.testing.assert_close(resumed.network.state_dict()[k], v, rtol=0, atol=0)
    assert resumed.history.steps == 12 and resumed.history.losses == pytest.approx(full.history.losses, rel=1e-6)
    torch.testing.assert_close(resumed.sample(series, n_samples=4, seed=0).values,
                               full.sample(series, n_samples=4, seed=0).values, rtol=0, atol=0)


@pytest.fixture(scope="module")
def calibrated(series):
    """A tiny D3U fitted with validation data (so ``calibrate`` runs), and its validation windows."""
    m = D3U(**TINY).fit(series.iloc[:150], val_data=series.iloc[150:], max_steps=6)
    return m, m.prepare_data(series.iloc[150:], role="val_data")


@pytest.mark.parametrize("center", [True, False])
def test_center_residuals_subtracts_the_draws_mean_and_nothing_else(model, series, center):
    """``center_residuals`` (ours): the forecast is ``Ŷ + r̂ − mean_n r̂`` (its mean is Ŷ exactly); off (the paper),
    ``Ŷ + r̂`` with the chain's draws as they come."""
    from scigen.timeseries.d3u.process import sample_residuals

    X = model.prepare_data(series, role="val_data")[:4, :16]
    c = model.config
    y_hat, r = sample_residuals(model.network, c, X, 6, method=c.method, steps=c.steps, generator=model.generator(2))
    expected = y_hat[None] + (r - r.mean(0, keepdim=True) if center else r)
    assert "spread_scale" not in model.metadata  # fitted without val_data: nothing calibrated
    model.config.center_residuals = center
    try:
        got = model._sample_std(X, 6, 2, None, None)
    finally:
        model.config.center_residuals = True
    torch.testing.assert_close(got, expected, rtol=1e-6, atol=1e-6)
    assert float((r.mean(0)).abs().max()) > 1e-6  # the uncentred draws do have a mean of their own


def test_calibrate_scales_the_draws_and_off_leaves_them(calibrated, series):
    """``calibrate`` (ours; std scaling, Levi et al. 2022): with val_data, fit stores a factor per horizon step and
    variable (``calibrate_by="step"``) that multiplies the centred draws; ``calibrate=False`` (the paper) stores none."""
    from scigen.timeseries.d3u.process import sample_residuals

    model, val_rows = calibrated
    kappa = torch.tensor(model.metadata["spread_scale"])
    assert kappa.shape == (5, 2) and bool((kappa > 0).all()) and not torch.allclose(kappa, torch.ones_like(kappa))
    X = val_rows[:3, :16]
    c = model.config
    y_hat, r = sample_residuals(model.network, c, X, 6, method=c.method, steps=c.steps, generator=model.generator(1))
    r = r - r.mean(0, keepdim=True)
    torch.testing.assert_close(model._sample_std(X, 6, 1, None, None), y_hat[None] + r * kappa.float(),
                               rtol=1e-5, atol=1e-6)
    off = D3U(**{**TINY, "calibrate": False}).fit(series.iloc[:150], val_data=series.iloc[150:], max_steps=6)
    assert "spread_scale" not in off.metadata


def test_calibrate_by_variable_pools_the_steps_of_each_variable(calibrated):
    """``calibrate_by="variable"``: one factor per variable, ``κ_n² = Σ_h E[(Y−Ŷ)²] / Σ_h E[r̂²]`` — a weighted mean
    of the per-step ``κ_{h,n}²`` over the same draws, so it lies between their extremes for each variable."""
    model, val_rows = calibrated
    saved = dict(model.metadata)
    try:
        model.config.calibrate_by = "step"
        model._calibrate(val_rows)
        step = torch.tensor(model.metadata["spread_scale"])
        model.config.calibrate_by = "variable"
        model._calibrate(val_rows)
        var = torch.tensor(model.metadata["spread_scale"])
    finally:
        model.config.calibrate_by = "step"
        model.metadata.clear()
        model.metadata.update(saved)
    assert step.shape == (5, 2) and var.shape == (2,)
    sq = step.pow(2)
    assert bool((var.pow(2) >= sq.min(0).values - 1e-9).all()) and bool((var.pow(2) <= sq.max(0).values + 1e-9).all())
    assert not torch.allclose(var, step.mean(0))  # a pooled ratio, not the mean of the per-step factors


class ShortHorizon(LastValue):
    """The same parameters as ``LastValue`` (so its weights load), but 3 steps out instead of 5."""

    def forward(self, x):
        return (self.gain * x[:, -1:])[:, :3]


def test_load_refuses_a_user_module_whose_outputs_do_not_fit_the_run(series, tmp_path):
    """Issue 35 case 8: ``load(forecaster=)`` used to accept a module of the wrong output shape (its state
    dict fits), failing later inside sampling; now it is refused at load, naming the run and the shapes."""
    D3U(forecaster=LastValue(), **TINY).fit(series, max_steps=4).save(tmp_path / "run")
    with pytest.raises(InvalidInputError, match=r"forecaster= does not fit this run: .*returned \(2, 3, 2\).*"
                                                r"\(batch, horizon, variables\) = \(2, 5, 2\)"):
        D3U.load(tmp_path / "run", forecaster=ShortHorizon())
    with pytest.raises(InvalidInputError, match="condition of size 4; the run was trained with 5"):
        D3U.load(tmp_path / "run", forecaster=WithTokens())
