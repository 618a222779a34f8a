"""``probability_matching`` (ours, off by default): each member takes the last observed frame's values in its own
rank order — STEPS' empirical-CDF matching, checked against pysteps' own implementation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.weather.nowcast.forecast import match_intensities


def _fields(seed=0):
    g = torch.Generator().manual_seed(seed)
    members = torch.rand(3, 2, 4, 8, 8, generator=g, dtype=torch.float64) * 5
    reference = torch.relu(torch.randn(2, 8, 8, generator=g, dtype=torch.float64)) * 10  # many exact zeros (dry)
    return members, reference


def test_each_field_takes_the_reference_values_in_its_own_rank_order():
    members, reference = _fields()
    out = match_intensities(members, reference)
    for m in range(3):
        for b in range(2):
            ref_sorted = torch.sort(reference[b].flatten()).values
            for lead in range(4):
                x, y = members[m, b, lead].flatten(), out[m, b, lead].flatten()
                assert torch.equal(torch.sort(y).values, ref_sorted)  # exactly the observed distribution
                assert bool((torch.diff(y[torch.argsort(x)]) >= 0).all())  # the member's rank order is kept


def test_matches_pysteps_empirical_cdf_matching():
    pm = pytest.importorskip("pysteps.postprocessing.probmatching")
    members, reference = _fields(1)
    out = match_intensities(members, reference)
    for m in range(3):
        for b in range(2):
            for lead in range(4):
                ref = pm.nonparam_match_empirical_cdf(members[m, b, lead].numpy(), reference[b].numpy())
                np.testing.assert_allclose(out[m, b, lead].numpy(), ref, rtol=0, atol=1e-12)


def test_shapes_are_checked():
    with pytest.raises(InvalidInputError, match=r"members \[n, B, L, H, W\] and a reference \[B, H, W\]"):
        match_intensities(torch.zeros(2, 1, 3, 4, 4), torch.zeros(2, 4, 4))


def test_the_switch_makes_every_member_carry_the_last_frames_distribution():
    from scigen.weather import Nowcast
    from scigen.weather.data.synthetic import synthetic_storms

    model = Nowcast(Nowcast.Config.preset("tiny", horizon=3, context_frames=3, steps=2))
    train = synthetic_storms(4, 12, 16, seed=0)
    model.fit(train, max_steps=2, progress=False, logger=None)
    ctx = train.isel(time=slice(0, 3))
    plain = model.sample(ctx, n_samples=2, seed=0)
    model.config.probability_matching = True
    matched = model.sample(ctx, n_samples=2, seed=0)
    last = np.sort(ctx.values[-1].ravel())
    for m in range(2):
        for lead in range(3):
            got = np.sort(matched.values[m, lead].ravel())
            np.testing.assert_allclose(got, last, rtol=1e-4, atol=1e-4)  # through the model-unit round trip
    assert not np.allclose(np.sort(plain.values[0, 0].ravel()), last, atol=1e-3)  # off: the flow's own values
