"""Global-translation motion (:mod:`scigen.weather.motion`, numpy/scipy only): a known sub-pixel motion of
analytic Gaussian storms is recovered, the extrapolation is an exact translation (integer shifts against a
zero-filled roll; a constant motion field against pysteps' semi-Lagrangian scheme where pysteps is
installed), bad input is refused by name, and a nowcast with ``advection_motion="global"`` trains and
forecasts with pysteps unimportable."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from scigen.core.errors import InvalidInputError
from scigen.weather.motion import global_motion, translate_extrapolation


def _storms(u: float, v: float, n: int = 5, size: int = 48, seed: int = 0) -> np.ndarray:
    """``[n, size, size]`` mm/h: five Gaussian cells whose centres move by ``(u, v)`` pixels a step (x, y),
    evaluated analytically (no interpolation), kept away from the edges."""
    rng = np.random.default_rng(seed)
    cy, cx = rng.uniform(14, size - 14, (2, 5))
    amp, width = rng.uniform(2, 10, 5), rng.uniform(2, 4, 5)
    yy, xx = np.mgrid[0:size, 0:size].astype(float)
    return np.stack([
        sum(a * np.exp(-((yy - y - k * v) ** 2 + (xx - x - k * u) ** 2) / (2 * w**2))
            for a, y, x, w in zip(amp, cy, cx, width, strict=True))
        for k in range(n)
    ])


@pytest.mark.parametrize(("u", "v"), [(1.0, 2.0), (-1.3, 0.6), (0.25, -1.75), (0.0, 0.0)])
def test_global_motion_recovers_a_known_sub_pixel_translation(u, v):
    for seed in range(3):
        du, dv = global_motion(_storms(u, v, seed=seed))
        assert abs(du - u) < 0.15 and abs(dv - v) < 0.15, (seed, du, dv)


def test_global_motion_of_a_dry_context_is_zero():
    assert global_motion(np.zeros((3, 16, 16))) == (0.0, 0.0)


def test_integer_translation_is_a_zero_filled_roll():
    frame = np.random.default_rng(1).uniform(0, 5, (20, 24))
    out = translate_extrapolation(frame, (2, -1), 3)
    assert out.shape == (3, 20, 24)
    for lead in range(1, 4):
        ref = np.zeros_like(frame)
        dx, dy = 2 * lead, -1 * lead
        ref[max(dy, 0):20 + min(dy, 0), dx:] = frame[max(-dy, 0):20 - max(dy, 0), :24 - dx]
        np.testing.assert_allclose(out[lead - 1], ref, atol=1e-12)


def test_sub_pixel_translation_moves_a_storm_to_its_true_position():
    frames = _storms(0.7, -1.4, n=9)
    ex = translate_extrapolation(frames[4], (0.7, -1.4), 4)
    inner = (slice(None), slice(8, 40), slice(8, 40))
    err, persist = np.abs(ex - frames[5:])[inner].mean(), np.abs(frames[4] - frames[5:])[inner].mean()
    assert err < 0.1 * persist, (err, persist)


def test_translation_equals_pysteps_semi_lagrangian_with_a_constant_motion_field():
    pysteps = pytest.importorskip("pysteps")
    frame = _storms(0, 0, n=1)[0]
    u, v = 1.3, -0.8
    field = np.stack([np.full(frame.shape, u), np.full(frame.shape, v)])
    ref = np.nan_to_num(pysteps.extrapolation.semilagrangian.extrapolate(frame, field, 3), nan=0.0)
    ours = translate_extrapolation(frame, (u, v), 3)
    inner = (slice(None), slice(6, 42), slice(6, 42))  # pysteps' NaN border and edge handling differ
    np.testing.assert_allclose(ours[inner], ref[inner], atol=0.05 * frame.max())


def test_bad_input_is_refused_by_name():
    with pytest.raises(InvalidInputError, match="C >= 2"):
        global_motion(np.ones((1, 8, 8)))
    with pytest.raises(InvalidInputError, match="NaN"):
        global_motion(np.full((2, 8, 8), np.nan))
    with pytest.raises(InvalidInputError, match="non-negative"):
        global_motion(-np.ones((2, 8, 8)))
    with pytest.raises(InvalidInputError, match=r"\[y, x\]"):
        translate_extrapolation(np.ones((2, 8, 8)), (1, 1), 2)
    from scigen.weather.nowcast.advection import extrapolate

    with pytest.raises(InvalidInputError, match="motion must be one of"):
        extrapolate(np.ones((2, 8, 8)), 2, motion="optical")


def test_global_advection_input_needs_no_pysteps(monkeypatch):
    from scigen.weather import Nowcast
    from scigen.weather.data import synthetic_storms

    monkeypatch.setitem(sys.modules, "pysteps", None)  # `import pysteps` raises ImportError
    cfg = Nowcast.Config.preset("tiny", advection_input=True, advection_motion="global",
                                train={"max_steps": 2, "progress": False})
    model = Nowcast(cfg)
    data = synthetic_storms(2, cfg.context_frames + cfg.horizon + 2, 16, seed=0)
    model.fit(data, logger=None)
    out = model.sample(data.isel(time=slice(0, cfg.context_frames)), n_samples=2, seed=0)
    assert np.isfinite(out.values).all() and out.sizes["lead_time"] == cfg.horizon
