"""Nowcast energy / variogram scores against scoringrules and hand cases; the references ``evaluate`` prints
beside ours (scoringrules, pysteps) against our own scores."""

from __future__ import annotations

import numpy as np
import pytest

from scigen.core.errors import InvalidInputError
from scigen.weather import metrics as M


def _ensemble(seed=0, shape=(5, 3, 20, 18), clip=True):
    rng = np.random.default_rng(seed)
    obs = np.where(rng.random(shape[1:]) < 0.4, rng.gamma(1.0, 3.0, shape[1:]), 0.0)
    members = obs + rng.normal(0, 2.0, shape)
    return (np.clip(members, 0, None) if clip else members), obs


def test_energy_score_hand_case():
    # two members of a 1 x 2 field: (0, 0), (3, 4); obs (0, 0): (0 + 5)/2 - (5 + 5)/(2·4) = 1.25
    members = np.array([[[0.0, 0.0]], [[3.0, 4.0]]])
    assert M.energy_score(members, np.zeros((1, 2))) == pytest.approx(1.25)
    # one member: the Euclidean error of the field
    assert M.energy_score(members[1:], np.zeros((1, 2))) == pytest.approx(5.0)


def test_pool_mean_blocks_and_partial_blocks():
    from skimage.measure import block_reduce

    f = np.arange(48.0).reshape(6, 8)
    np.testing.assert_allclose(M.pool_mean(f, 2), block_reduce(f, (2, 2), np.mean))
    g = np.arange(15.0).reshape(3, 5)  # 2 x 2 blocks: the last row / column blocks hold fewer pixels
    want = np.array([[np.mean([0, 1, 5, 6]), np.mean([2, 3, 7, 8]), np.mean([4, 9])],
                     [np.mean([10, 11]), np.mean([12, 13]), 14.0]])
    np.testing.assert_allclose(M.pool_mean(g, 2), want)
    assert M.vs_pool((128, 128)) == 8 and M.vs_pool((20, 18)) == 2 and M.vs_pool((16, 16)) == 1


def test_variogram_score_hand_case():
    # fields 1 x 2, pool 1: members (0, 1), (0, 3), obs (0, 0); p = 1: 2 ordered pairs x (mean |diff| = 2)²
    members = np.array([[[0.0, 1.0]], [[0.0, 3.0]]])
    assert M.variogram_score(members, np.zeros((1, 2)), p=1.0, pool=1) == pytest.approx(8.0)


def test_energy_and_variogram_scores_equal_scoringrules():
    sr = pytest.importorskip("scoringrules")
    members, obs = _ensemble()
    fct = np.moveaxis(members.reshape(5, 3, -1), 0, 1)  # [fields, m, pixels]
    assert M.energy_score(members, obs) == pytest.approx(sr.es_ensemble(obs.reshape(3, -1), fct).mean(), rel=1e-10)
    assert M.variogram_score(members, obs, pool=1) == pytest.approx(sr.vs_ensemble(obs.reshape(3, -1), fct).mean(),
                                                                    rel=1e-10)
    pm, po = M.pool_mean(members, 2), M.pool_mean(obs, 2)  # the default pool for 20 x 18: 10 x 9 points
    want = sr.vs_ensemble(po.reshape(3, -1), np.moveaxis(pm.reshape(5, 3, -1), 0, 1)).mean()
    assert M.variogram_score(members, obs) == pytest.approx(want, rel=1e-10)


def test_references_equal_our_scores_and_non_finite_pixels_drop_out():
    pytest.importorskip("scoringrules")
    pytest.importorskip("pysteps")
    members, obs = _ensemble(seed=1, clip=False)  # no member equals its observation (see the next test)
    obs[0, 2, 3] = np.nan
    ref = M.reference_scores(members, obs, thr=1.0, fss_scale=4)
    assert ref["CRPS[scoringrules]"] == pytest.approx(M.crps(members, obs), rel=1e-10)
    assert ref["CRPS[pysteps]"] == pytest.approx(M.crps(members, obs), rel=1e-10)
    assert ref["ES[scoringrules]"] == pytest.approx(M.energy_score(members, obs), rel=1e-10)
    assert ref["VS[scoringrules]"] == pytest.approx(M.variogram_score(members, obs), rel=1e-10)
    assert ref["FSS[pysteps]"] == pytest.approx(np.mean([M.fss(m, obs, 1.0, 4) for m in members]), rel=1e-12)
    # the NaN pixel is dropped: equal to the ES with that pixel set to the same value everywhere
    clean_m, clean_o = members.copy(), np.nan_to_num(obs)
    clean_m[:, 0, 2, 3] = 0.0
    assert M.energy_score(members, obs) == pytest.approx(M.energy_score(clean_m, clean_o), rel=1e-12)


def test_crps_at_ties_with_the_observation():
    """Rain fields tie constantly (zero rain in the observation and in members). The CRPS of members (0, 0, 1)
    for y = 0 is ``(0 + 0 + 1)/3 − (2·(1 + 1))/(2·9) = 1/9``; ours and scoringrules' give it. pysteps'
    ``probscores.CRPS`` (1.21) gives 0 here: its Hersbach bins use strict inequalities, so a bin whose lower edge
    equals the observation is dropped, and ``CRPS[pysteps]`` in ``evaluate`` reads low on fields with zero rain."""
    members, y = np.array([0.0, 0.0, 1.0]).reshape(3, 1, 1), np.zeros((1, 1))
    assert M.crps(members, y) == pytest.approx(1 / 9, rel=1e-12)
    sr = pytest.importorskip("scoringrules")
    assert float(sr.crps_ensemble(y, members, m_axis=0, estimator="nrg")[0, 0]) == pytest.approx(1 / 9, rel=1e-12)


def test_shape_errors_are_named():
    with pytest.raises(InvalidInputError, match="do not match"):
        M.energy_score(np.zeros((3, 4, 4)), np.zeros((5, 4)))
    with pytest.raises(InvalidInputError, match="pool size"):
        M.variogram_score(np.zeros((3, 4, 4)), np.zeros((4, 4)), pool=0)
