"""Displacement-interpolation baseline against brute force and the 1-D quantile formula."""

import itertools

import anndata
import numpy as np
import pandas as pd
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.singlecell.baselines import displacement_interpolation, interpolate_holdout


def test_matching_is_the_brute_force_optimal_permutation():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(6, 2, generator=g, dtype=torch.float64)
    b = torch.randn(6, 2, generator=g, dtype=torch.float64) + 1.0
    best = min(itertools.permutations(range(6)), key=lambda p: float(((a - b[list(p)]) ** 2).sum()))
    out = displacement_interpolation(a, b, 0.25)
    torch.testing.assert_close(out, 0.75 * a + 0.25 * b[list(best)])


def test_one_dimensional_interpolation_is_the_quantile_average():
    rng = np.random.default_rng(1)
    a, b = rng.normal(0, 1, 200), rng.exponential(2.0, 200)
    out = displacement_interpolation(torch.tensor(a)[:, None], torch.tensor(b)[:, None], 0.3)[:, 0].numpy()
    np.testing.assert_allclose(np.sort(out), 0.7 * np.sort(a) + 0.3 * np.sort(b), atol=1e-12)


def _course():
    rng = np.random.default_rng(0)
    times = (0.0, 1.0, 3.0, 4.0)
    X = np.concatenate([rng.normal([2 * t, 0], 0.5, (100, 2)) for t in times])
    obs = pd.DataFrame({"day": np.repeat(times, 100)}, index=[f"c{i}" for i in range(400)])
    return anndata.AnnData(X=X.astype(np.float32), obs=obs)


def test_holdout_uses_the_neighbours_and_skips_excluded_times():
    ad = _course()
    # t=2 lies between days 1 and 3: mean 2*2 = 4; with day 3 excluded, between 1 and 4: tau = 1/3
    x = interpolate_holdout(ad, 2.0, time_key="day")
    assert x.shape == (100, 2) and abs(float(x[:, 0].mean()) - 4.0) < 0.15
    y = interpolate_holdout(ad, 2.0, time_key="day", exclude=(3.0,))
    assert abs(float(y[:, 0].mean()) - (2 / 3 * 2 + 1 / 3 * 8)) < 0.15
    with pytest.raises(InvalidInputError, match="both sides"):
        interpolate_holdout(ad, 5.0, time_key="day")
    with pytest.raises(InvalidInputError, match="tau"):
        displacement_interpolation(torch.zeros(3, 2), torch.zeros(3, 2), 1.5)
