"""The vectorised torch splines against scipy, per sample with its own knots."""

import numpy as np
import pytest
import torch
from scipy.interpolate import CubicSpline, PchipInterpolator

from scigen.singlecell.mmsfm.spline import Spline


def _random(B=40, K=4, d=3, seed=0):
    rng = np.random.default_rng(seed)
    knots = np.sort(rng.uniform(0, 1, (B, K)), 1) + np.arange(K) * 0.01
    y = rng.normal(size=(B, K, d))
    t = rng.uniform(knots[:, 0], knots[:, -1])
    return knots, y, t


@pytest.mark.parametrize("kind,ref", [("pchip", PchipInterpolator),
                                      ("cubic", lambda x, y: CubicSpline(x, y, bc_type="natural"))])
@pytest.mark.parametrize("K", [2, 3, 5])
def test_matches_scipy_values_and_derivatives(kind, ref, K):
    knots, y, t = _random(K=K, seed=K)
    val, der = Spline(torch.tensor(knots), torch.tensor(y), kind).evaluate(torch.tensor(t))
    for b in range(len(t)):
        s = ref(knots[b], y[b])
        np.testing.assert_allclose(val[b].numpy(), s(t[b]), atol=1e-10)
        np.testing.assert_allclose(der[b].numpy(), s.derivative()(t[b]), atol=1e-9)


def test_pchip_at_knots_and_shared_knots():
    knots, y, _ = _random(B=5, K=4)
    shared = torch.tensor([0.0, 0.2, 0.5, 1.0], dtype=torch.float64)
    sp = Spline(shared, torch.tensor(y))
    for k in range(4):
        np.testing.assert_allclose(sp(shared[k].expand(5)).numpy(), y[:, k], atol=1e-12)
        ref = np.stack([PchipInterpolator(shared.numpy(), y[b]).derivative()(shared[k].item()) for b in range(5)])
        np.testing.assert_allclose(sp.derivative(shared[k].expand(5)).numpy(), ref, atol=1e-10)


def test_pchip_is_monotone_where_the_data_are():
    rng = np.random.default_rng(1)
    B, K = 30, 5
    knots = torch.tensor(np.sort(rng.uniform(0, 1, (B, K)), 1) + np.arange(K) * 0.01)
    y = torch.tensor(np.cumsum(rng.exponential(size=(B, K, 1)) * rng.choice([0.01, 5.0], (B, K, 1)), 1))
    sp = Spline(knots, y, "pchip")
    grid = torch.linspace(0, 1, 400, dtype=torch.float64)
    vals = torch.stack([sp(knots[:, 0] + g * (knots[:, -1] - knots[:, 0])) for g in grid])  # [G, B, 1]
    assert bool((vals.diff(dim=0) >= -1e-12).all())
    assert bool((torch.stack([sp.derivative(knots[:, 0] + g * (knots[:, -1] - knots[:, 0])) for g in grid]) >= -1e-12).all())
    # the natural cubic spline overshoots on the same data (why MMSFM uses PCHIP)
    cub = Spline(knots, y, "cubic")
    cvals = torch.stack([cub(knots[:, 0] + g * (knots[:, -1] - knots[:, 0])) for g in grid])
    assert bool((cvals.diff(dim=0) < -1e-9).any())


def test_linear_matches_numpy_interp_and_secants():
    knots, y, t = _random(B=20, K=4, d=1)
    val, der = Spline(torch.tensor(knots), torch.tensor(y), "linear").evaluate(torch.tensor(t))
    for b in range(20):
        assert val[b, 0].item() == pytest.approx(np.interp(t[b], knots[b], y[b, :, 0]), abs=1e-12)
        i = np.searchsorted(knots[b], t[b]) - 1
        assert der[b, 0].item() == pytest.approx((y[b, i + 1, 0] - y[b, i, 0]) / (knots[b, i + 1] - knots[b, i]))


def test_bad_inputs():
    y = torch.zeros(3, 4, 2)
    with pytest.raises(ValueError, match="kind"):
        Spline(torch.linspace(0, 1, 4), y, "quadratic")
    with pytest.raises(ValueError, match="strictly increasing"):
        Spline(torch.tensor([0.0, 0.5, 0.5, 1.0]), y)
    with pytest.raises(ValueError, match="y must be"):
        Spline(torch.linspace(0, 1, 4), torch.zeros(3, 1, 2))
    with pytest.raises(ValueError, match=r"t must have shape \[B\]"):
        Spline(torch.linspace(0, 1, 4), y)(torch.zeros(5))
