"""Forecast scores against properscoring, scoringrules, closed forms and CARD's definitions."""

from __future__ import annotations

import numpy as np
import properscoring
import pytest
import scoringrules
import torch
from scipy.stats import norm

from scigen.core.metrics import crps_ensemble, crps_sum, picp, qice, quantile_loss


def _t(a) -> torch.Tensor:
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


def test_crps_matches_properscoring_and_scoringrules_nrg():
    r = np.random.default_rng(0)
    obs = r.normal(size=(4, 6))
    fc = r.normal(size=(4, 6, 17)) * 1.3 + 0.2  # members last
    ref = properscoring.crps_ensemble(obs, fc)
    got = crps_ensemble(_t(fc), _t(obs), dim=-1, reduction="none")
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)
    np.testing.assert_allclose(got.numpy(), scoringrules.crps_ensemble(obs, fc, estimator="nrg"), rtol=1e-10)
    got0 = crps_ensemble(_t(np.moveaxis(fc, -1, 0)), _t(obs))  # members first, mean reduction
    assert float(got0) == pytest.approx(ref.mean(), rel=1e-12)


def test_fair_crps_matches_scoringrules_fair():
    r = np.random.default_rng(1)
    obs = r.normal(size=50)
    fc = r.normal(size=(50, 9))
    ref = scoringrules.crps_ensemble(obs, fc, estimator="fair")
    got = crps_ensemble(_t(fc), _t(obs), dim=1, fair=True, reduction="none")
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-10)


def test_crps_of_a_gaussian_ensemble_matches_the_closed_form():
    # CRPS(N(mu, s²), y) = s [z (2 Phi(z) - 1) + 2 phi(z) - 1/sqrt(pi)], z = (y - mu)/s (Gneiting 2005)
    r = np.random.default_rng(2)
    mu, s = 0.5, 1.7
    y = np.array([-2.0, 0.0, 0.5, 1.0, 4.0])
    z = (y - mu) / s
    closed = s * (z * (2 * norm.cdf(z) - 1) + 2 * norm.pdf(z) - 1 / np.sqrt(np.pi))
    ens = r.normal(mu, s, size=(40000, 1)) * np.ones((1, 5))
    got = crps_ensemble(_t(ens), _t(y), fair=True, reduction="none").numpy()
    np.testing.assert_allclose(got, closed, rtol=0.02, atol=0.005)


def test_crps_sum_is_the_crps_of_the_summed_ensemble():
    r = np.random.default_rng(3)
    fc = r.normal(size=(25, 8, 3))  # [member, time, variable]
    obs = r.normal(size=(8, 3))
    per_t = properscoring.crps_ensemble(obs.sum(-1), fc.sum(-1).T)  # [time]
    assert float(crps_sum(_t(fc), _t(obs))) == pytest.approx(per_t.mean(), rel=1e-12)
    norm_ref = per_t.sum() / np.abs(obs.sum(-1)).sum()
    assert float(crps_sum(_t(fc), _t(obs), normalize=True)) == pytest.approx(norm_ref, rel=1e-12)
    # other layouts: [time, variable, member] with members last
    fc2 = np.moveaxis(fc, 0, -1)
    got = crps_sum(_t(fc2), _t(obs), sample_dim=-1, variable_dim=1, reduction="none")
    np.testing.assert_allclose(got.numpy(), per_t, rtol=1e-12)


def test_quantile_loss_hand_case_and_crps_relation():
    pred = torch.tensor([[0.0, 2.0, 1.5]])
    obs = torch.tensor([1.0])
    # u = y - q = (1, -1, -0.5): rho = (0.1·1, 0.1·1, 0.5·0.5) = (0.1, 0.1, 0.25)
    got = quantile_loss(pred, obs, [0.1, 0.9, 0.5], reduction="none")
    torch.testing.assert_close(got, torch.tensor([[0.1, 0.1, 0.25]]))
    assert float(quantile_loss(pred, obs, [0.1, 0.9, 0.5])) == pytest.approx(0.45 / 3)
    # 2 ∫ rho_tau(y - F^-1(tau)) dtau = CRPS(F, y): check with N(0, 1) on a dense grid
    taus = (np.arange(2000) + 0.5) / 2000
    y = np.array([-1.0, 0.3, 2.2])
    q = np.tile(norm.ppf(taus), (3, 1))
    approx = 2 * quantile_loss(_t(q), _t(y), _t(taus), reduction="none").mean(-1)
    np.testing.assert_allclose(approx.numpy(), properscoring.crps_gaussian(y, 0, 1), rtol=2e-3)


def _card_qice(y_true: np.ndarray, gen: np.ndarray, n_bins: int = 10) -> float:
    # CARD (Han et al. 2022) regression QICE, written from the paper's definition
    qs = np.percentile(gen, q=np.arange(n_bins + 1) * (100 / n_bins), axis=1)  # [n_bins+1, N]
    membership = (y_true[None] - qs > 0).sum(0)
    counts = np.array([(membership == v).sum() for v in range(n_bins + 2)])
    counts[1] += counts[0]
    counts[-2] += counts[-1]
    ratio = counts[1:-1] / len(y_true)
    return float(np.abs(np.ones(n_bins) / n_bins - ratio).mean())


def test_qice_matches_card_definition_and_is_small_for_calibrated_samples():
    r = np.random.default_rng(4)
    mu = r.normal(size=300)
    y = mu + r.normal(size=300)
    gen_narrow = mu[:, None] + 0.5 * r.normal(size=(300, 40))  # [N, members], too narrow
    got = qice(_t(gen_narrow), _t(y), dim=1)
    assert float(got) == pytest.approx(_card_qice(y, gen_narrow), rel=1e-12)
    assert float(got) > 0.04

    mu = r.normal(size=3000)
    y = mu + r.normal(size=3000)
    gen = mu[None, :] + r.normal(size=(500, 3000))  # [members, N] from the true predictive
    calibrated = float(qice(_t(gen), _t(y)))
    assert calibrated == pytest.approx(_card_qice(y, gen.T), rel=1e-12)
    assert calibrated < 0.01


def test_picp_is_about_nominal_for_calibrated_samples():
    r = np.random.default_rng(5)
    mu = r.normal(size=4000)
    y = mu + r.normal(size=4000)
    gen = mu[None, :] + r.normal(size=(400, 4000))
    assert float(picp(_t(gen), _t(y))) == pytest.approx(0.9, abs=0.02)
    assert float(picp(_t(gen), _t(y), interval=(0.025, 0.975))) == pytest.approx(0.95, abs=0.015)
    # hand case: members 0..10, [5%, 95%] quantiles are 0.5 and 9.5
    ens = torch.arange(11.0)[:, None].expand(11, 4)
    obs = torch.tensor([0.4, 0.5, 9.5, 9.6])
    assert float(picp(ens, obs)) == pytest.approx(0.5)


def test_bad_inputs_raise_clear_errors():
    s, o = torch.randn(10, 3), torch.randn(3)
    with pytest.raises(ValueError, match="obs must have samples' shape"):
        crps_ensemble(s, torch.randn(4))
    with pytest.raises(ValueError, match="NaN"):
        crps_ensemble(s, torch.tensor([0.0, float("nan"), 1.0]))
    with pytest.raises(ValueError, match="at least 2 ensemble"):
        crps_ensemble(s[:1], o, fair=True)
    with pytest.raises(ValueError, match="reduction"):
        crps_ensemble(s, o, reduction="avg")
    with pytest.raises(ValueError, match="out of range"):
        crps_ensemble(s, o, dim=3)
    with pytest.raises(ValueError, match="differ"):
        crps_sum(torch.randn(5, 4, 3), torch.randn(4, 3), sample_dim=0, variable_dim=-3)
    with pytest.raises(ValueError, match="obs must have pred' shape"):
        quantile_loss(torch.randn(4, 2), o, [0.1, 0.9])
    with pytest.raises(ValueError, match="levels"):
        quantile_loss(torch.randn(3, 2), o, [0.5])
    with pytest.raises(ValueError, match=r"\(0, 1\)"):
        quantile_loss(torch.randn(3, 2), o, [0.0, 0.5])
    with pytest.raises(ValueError, match="interval"):
        picp(s, o, interval=(0.9, 0.1))
    with pytest.raises(ValueError, match="empty"):
        qice(torch.empty(0, 3), o)
