"""The nowcast demo's shipped checkpoint (:mod:`scigen.weather.nowcast.demo_checkpoint`) is what its committed
command trains (config and steps), loads with the default install, and forecasts as the demo's caption says:
far ahead of persistence on the demo's test storms, members with the last observed frame's rain-rate
distribution (probability matching, checked against the empirical quantiles)."""

from __future__ import annotations

import numpy as np
import pytest

from scigen.weather import Nowcast
from scigen.weather.data import synthetic_storms
from scigen.weather.nowcast.demo_checkpoint import CHECKPOINT, RECIPE

pytestmark = pytest.mark.skipif(not (CHECKPOINT / "scigen.json").exists(), reason="checkpoint not shipped")


@pytest.fixture(scope="module")
def shipped():
    return Nowcast.load(CHECKPOINT, device="cpu")


def test_the_shipped_checkpoint_is_the_recipe(shipped):
    expected = Nowcast.Config.preset("tiny", **RECIPE)
    assert shipped.config.model_dump(mode="json") == expected.model_dump(mode="json")
    assert shipped.history.steps == RECIPE["train"]["max_steps"]
    assert shipped.config.advection_motion == "global"  # the demo needs no pysteps


def test_the_shipped_model_beats_persistence_on_the_demo_storms(shipped):
    scores = shipped.evaluate(synthetic_storms(4, 25, 32, seed=1), max_windows=4)
    assert scores["flow/CRPS"] < 0.7 * scores["persistence/CRPS"], scores
    assert scores["flow/FSS"] > scores["persistence/FSS"], scores


def test_members_carry_the_last_frames_rain_distribution(shipped):
    c = shipped.config
    ctx = synthetic_storms(1, c.context_frames, 32, seed=3)
    members = shipped.sample(ctx, n_samples=2, seed=0).values  # [member, lead, y, x] mm/h
    last = np.sort(ctx.values[-1].ravel())
    for m in members.reshape(-1, 32 * 32):
        np.testing.assert_allclose(np.sort(m), last, rtol=1e-4, atol=1e-4)
