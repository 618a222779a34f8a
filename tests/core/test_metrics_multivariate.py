"""Energy and variogram scores against scoringrules (``es_ensemble`` / ``vs_ensemble``) and hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from scigen.core.metrics import crps_ensemble, energy_score, variogram_score


def _t(a) -> torch.Tensor:
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


def test_energy_score_hand_cases():
    # one member: ES = ||x - y||
    assert float(energy_score(_t([[3.0, 4.0]]), _t([0.0, 0.0]))) == pytest.approx(5.0)
    # two members (0,0), (3,4), y = (0,0): (0 + 5)/2 - (0 + 5 + 5 + 0)/(2·4) = 2.5 - 1.25
    ens = _t([[0.0, 0.0], [3.0, 4.0]])
    assert float(energy_score(ens, _t([0.0, 0.0]))) == pytest.approx(1.25)
    # fair: pair sum / (2·2·1) = 10/4
    assert float(energy_score(ens, _t([0.0, 0.0]), fair=True)) == pytest.approx(0.0)


def test_energy_score_of_one_variable_is_the_crps():
    r = np.random.default_rng(1)
    fc, obs = _t(r.normal(size=(9, 7, 1))), _t(r.normal(size=(7, 1)))
    assert float(energy_score(fc, obs)) == pytest.approx(float(crps_ensemble(fc, obs)), rel=1e-12)


def test_variogram_score_hand_case():
    # members (0,1), (0,3), y = (0,0): mean |x_1 - x_2|^p = (1 + 3^p)/2, |y_1 - y_2|^p = 0, two ordered pairs
    ens, y = _t([[0.0, 1.0], [0.0, 3.0]]), _t([0.0, 0.0])
    assert float(variogram_score(ens, y, p=1.0)) == pytest.approx(2 * 2.0**2)
    assert float(variogram_score(ens, y)) == pytest.approx(2 * ((1 + math.sqrt(3)) / 2) ** 2)
    w = _t([[0.0, 1.0], [0.0, 0.0]])  # only the pair (1, 2)
    assert float(variogram_score(ens, y, p=1.0, weights=w)) == pytest.approx(4.0)


def test_scores_equal_scoringrules():
    sr = pytest.importorskip("scoringrules")
    r = np.random.default_rng(0)
    fc = r.normal(size=(12, 5, 3, 6))  # [m, batch..., D]
    obs = r.normal(size=(5, 3, 6))
    fc_sr = np.moveaxis(fc, 0, -2)  # scoringrules: [..., m, D]
    es = energy_score(_t(fc), _t(obs), reduction="none").numpy()
    np.testing.assert_allclose(es, sr.es_ensemble(obs, fc_sr, estimator="nrg"), rtol=1e-10)
    np.testing.assert_allclose(energy_score(_t(fc), _t(obs), fair=True, reduction="none").numpy(),
                               sr.es_ensemble(obs, fc_sr, estimator="fair"), rtol=1e-10)
    for p in (0.5, 1.0, 2.0):
        vs = variogram_score(_t(fc), _t(obs), p=p, reduction="none").numpy()
        np.testing.assert_allclose(vs, sr.vs_ensemble(obs, fc_sr, p=p), rtol=1e-10)
    w = r.uniform(size=(6, 6))
    np.testing.assert_allclose(variogram_score(_t(fc), _t(obs), weights=_t(w), reduction="none").numpy(),
                               sr.vs_ensemble(obs, fc_sr, w=w, p=0.5), rtol=1e-10)


def test_variogram_blocks_do_not_change_the_result(monkeypatch):
    import scigen.core.metrics.multivariate as mv

    r = np.random.default_rng(3)
    fc, obs = _t(r.normal(size=(4, 10, 5))), _t(r.normal(size=(10, 5)))
    whole = variogram_score(fc, obs, reduction="none")
    monkeypatch.setattr(mv, "_BLOCK", 25 * 3)  # 3 batch rows per block
    torch.testing.assert_close(variogram_score(fc, obs, reduction="none"), whole)


def test_clear_errors():
    with pytest.raises(ValueError, match="last axis"):
        energy_score(torch.randn(5, 3), torch.randn(5), dim=-1)
    with pytest.raises(ValueError, match="p must be a positive"):
        variogram_score(torch.randn(5, 3), torch.randn(3), p=0)
    with pytest.raises(ValueError, match=r"weights must have shape \[D, D\] = \[3, 3\]"):
        variogram_score(torch.randn(5, 3), torch.randn(3), weights=torch.ones(2, 2))
    with pytest.raises(ValueError, match="at least 2"):
        energy_score(torch.randn(1, 3), torch.randn(3), fair=True)
