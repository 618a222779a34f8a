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
