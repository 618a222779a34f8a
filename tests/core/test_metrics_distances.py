"""Distribution distances against SciPy, POT, brute force and closed forms."""

from __future__ import annotations

import itertools

import numpy as np
import ot
import pytest
import scipy.linalg
import scipy.stats
import torch

from scigen.core.metrics import (
    energy_distance,
    linear_mmd,
    mmd_rbf,
    rbf_bandwidths,
    sinkhorn_cost,
    w1,
    w2,
    w2_squared,
)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _t(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


# ----------------------------------------------------------------------------- Wasserstein


def test_w1_1d_matches_scipy_with_and_without_weights():
    r = _rng(0)
    x, y = r.normal(size=37), r.gamma(2.0, size=23)
    assert float(w1(_t(x), _t(y))) == pytest.approx(scipy.stats.wasserstein_distance(x, y), rel=1e-12)
    a, b = r.random(37), r.random(23)
    ref = scipy.stats.wasserstein_distance(x, y, a, b)
    assert float(w1(_t(x), _t(y), _t(a), _t(b))) == pytest.approx(ref, rel=1e-12)


def test_w2_1d_equal_sizes_is_the_sorted_matching():
    r = _rng(1)
    x, y = r.normal(size=50), r.exponential(size=50)
    ref = np.mean((np.sort(x) - np.sort(y)) ** 2)
    assert float(w2_squared(_t(x), _t(y))) == pytest.approx(ref, rel=1e-12)
    assert float(w2(_t(x), _t(y))) == pytest.approx(np.sqrt(ref), rel=1e-12)


def _brute_force(x: np.ndarray, y: np.ndarray, p: int) -> float:
    C = np.linalg.norm(x[:, None] - y[None], axis=-1) ** p
    return min(C[np.arange(len(x)), list(s)].mean() for s in itertools.permutations(range(len(y))))


@pytest.mark.parametrize("d", [2, 3])
def test_w1_w2_on_five_points_equal_brute_force_permutation_ot(d):
    r = _rng(2 + d)
    x, y = r.normal(size=(5, d)), r.normal(size=(5, d)) + 0.3
    assert float(w1(_t(x), _t(y))) == pytest.approx(_brute_force(x, y, 1), rel=1e-12)
    assert float(w2_squared(_t(x), _t(y))) == pytest.approx(_brute_force(x, y, 2), rel=1e-12)
    assert float(w2(_t(x), _t(y))) ** 2 == pytest.approx(_brute_force(x, y, 2), rel=1e-12)


def test_w1_multid_weighted_matches_scipy_nd_and_w2_matches_pot():
    r = _rng(4)
    x, y = r.normal(size=(7, 2)), r.normal(size=(4, 2))
    a, b = r.random(7) + 0.1, r.random(4) + 0.1
    ref = scipy.stats.wasserstein_distance_nd(x, y, a, b)
    assert float(w1(_t(x), _t(y), _t(a), _t(b))) == pytest.approx(ref, rel=1e-7)
    ref2 = ot.emd2(a / a.sum(), b / b.sum(), ot.dist(x, y))
    assert float(w2_squared(_t(x), _t(y), _t(a), _t(b))) == pytest.approx(ref2, rel=1e-10)


def test_w2_of_large_gaussian_samples_approaches_the_bures_closed_form():
    r = _rng(5)
    m1, m2 = np.zeros(2), np.array([3.0, -1.0])
    S1 = np.array([[1.0, 0.3], [0.3, 0.5]])
    rot = np.array([[np.cos(0.7), -np.sin(0.7)], [np.sin(0.7), np.cos(0.7)]])
    S2 = rot @ np.diag([2.0, 0.3]) @ rot.T
    s1h = scipy.linalg.sqrtm(S1).real
    bures = np.trace(S1 + S2 - 2 * scipy.linalg.sqrtm(s1h @ S2 @ s1h).real)
    closed = float(np.sum((m1 - m2) ** 2) + bures)  # W2² of the two Gaussians (Dowson & Landau 1982)
    x = r.multivariate_normal(m1, S1, size=700)
    y = r.multivariate_normal(m2, S2, size=700)
    est = float(w2_squared(_t(x), _t(y)))
    assert est == pytest.approx(closed, rel=0.03)
    # 1-D fast path with many points: W2² = (m1 - m2)² + (s1 - s2)²
    u, v = r.normal(1.0, 2.0, size=200_000), r.normal(-0.5, 0.5, size=300_000)
    assert float(w2_squared(_t(u), _t(v))) == pytest.approx(1.5**2 + 1.5**2, rel=0.02)


def test_w2_is_differentiable():
    x = torch.randn(6, 2, dtype=torch.float64, requires_grad=True)
    y = torch.randn(6, 2, dtype=torch.float64)
    w2_squared(x, y).backward()
    # the gradient of W2² at a unique optimal permutation j is 2 (x_i - y_j) / n
    j = torch.from_numpy(
        np.argmax(ot.emd(np.full(6, 1 / 6), np.full(6, 1 / 6), ot.dist(x.detach().numpy(), y.numpy())), 1)
    )
    torch.testing.assert_close(x.grad, 2 * (x.detach() - y[j]) / 6)


def test_sinkhorn_cost_matches_pot_and_tends_to_exact():
    r = _rng(6)
    x, y = r.normal(size=(9, 2)), r.normal(size=(6, 2)) + 1.0
    for cost, metric in (("sqeuclidean", "sqeuclidean"), ("euclidean", "euclidean")):
        M = ot.dist(x, y, metric=metric)
        ref = ot.sinkhorn2(
            ot.unif(9), ot.unif(6), M, 0.5, method="sinkhorn_log", stopThr=1e-12, numItermax=10000
        )
        got = float(sinkhorn_cost(_t(x), _t(y), 0.5, cost=cost, tol=1e-12))
        assert got == pytest.approx(float(ref), rel=1e-8)
    exact = float(w2_squared(_t(x), _t(y)))
    near = float(sinkhorn_cost(_t(x), _t(y), 1e-3, max_iter=5000, tol=1e-10))
    assert exact <= near + 1e-8 and near - exact < 1e-3 * np.log(54) + 1e-6


# ----------------------------------------------------------------------------- MMD


def _mmd_double_loop(x: np.ndarray, y: np.ndarray, hs: list[float], unbiased: bool) -> float:
    def k(a, b):
        return sum(np.exp(-np.sum((a - b) ** 2) / (2 * h * h)) for h in hs)

    n, m = len(x), len(y)
    sxx = sum(k(x[i], x[j]) for i in range(n) for j in range(n) if not (unbiased and i == j))
    syy = sum(k(y[i], y[j]) for i in range(m) for j in range(m) if not (unbiased and i == j))
    sxy = sum(k(x[i], y[j]) for i in range(n) for j in range(m))
    if unbiased:
        return sxx / (n * (n - 1)) + syy / (m * (m - 1)) - 2 * sxy / (n * m)
    return sxx / n**2 + syy / m**2 - 2 * sxy / (n * m)


@pytest.mark.parametrize("unbiased", [False, True])
def test_mmd_matches_numpy_double_loop(unbiased):
    r = _rng(7)
    x, y = r.normal(size=(9, 3)), r.normal(size=(7, 3)) * 1.5 + 0.2
    hs = [0.5, 1.0, 2.0]
    ref = _mmd_double_loop(x, y, hs, unbiased)
    assert float(mmd_rbf(_t(x), _t(y), hs, unbiased=unbiased)) == pytest.approx(ref, rel=1e-10)


def test_default_bandwidths_reproduce_mmsfm_mioflow_mmd():
    # MMSFM's MMD_G (MIOFlow MMD_loss): bw = mean_{i != j} D²_ij over the pooled sample, kernels
    # exp(-D²/(bw·2^k)) for k = -2..2, loss = mean(XX + YY - XY - YX) for equal sizes.
    r = _rng(8)
    x, y = r.normal(size=(30, 4)), r.normal(size=(30, 4)) + 0.4
    z = np.concatenate([x, y])
    D2 = ((z[:, None] - z[None]) ** 2).sum(-1)
    bw = D2.sum() / (60**2 - 60)
    K = sum(np.exp(-D2 / (bw * 2.0**k)) for k in range(-2, 3))
    ref = np.mean(K[:30, :30] + K[30:, 30:] - K[:30, 30:] - K[30:, :30])
    assert float(mmd_rbf(_t(x), _t(y))) == pytest.approx(ref, rel=1e-10)
    hs = rbf_bandwidths(_t(x), _t(y), heuristic="median")
    med = np.median(scipy.spatial.distance.pdist(z))
    np.testing.assert_allclose(hs.numpy(), med * np.sqrt(2.0 ** np.arange(-2, 3)), rtol=1e-12)


def test_biased_mmd_is_zero_for_identical_sets_and_unbiased_is_unbiased():
    r = _rng(9)
    x = _t(r.normal(size=(15, 2)))
    assert float(mmd_rbf(x, x, [1.0])) == pytest.approx(0.0, abs=1e-14)
    biased, unbiased = [], []
    for _ in range(300):
        a, b = _t(r.normal(size=(10, 2))), _t(r.normal(size=(10, 2)))
        biased.append(float(mmd_rbf(a, b, [1.0])))
        unbiased.append(float(mmd_rbf(a, b, [1.0], unbiased=True)))
    se = np.std(unbiased) / np.sqrt(len(unbiased))
    assert abs(np.mean(unbiased)) < 3 * se
    assert np.mean(biased) > 10 * se  # the V-statistic is biased upwards, visibly so here


def test_mmd_of_two_gaussians_matches_the_closed_form():
    # X ~ N(mu1, s1² I), Y ~ N(mu2, s2² I) in d dims, k = exp(-|a-b|²/(2h²)):
    # E k(X, Y) = (h²/(h² + s1² + s2²))^(d/2) exp(-|mu1 - mu2|² / (2 (h² + s1² + s2²)))
    r = _rng(10)
    d, h, s1, s2 = 2, 1.3, 1.0, 0.7
    mu = np.array([0.8, -0.4])

    def ek(v1, v2, dm2):
        return (h * h / (h * h + v1 + v2)) ** (d / 2) * np.exp(-dm2 / (2 * (h * h + v1 + v2)))

    closed = ek(s1**2, s1**2, 0.0) + ek(s2**2, s2**2, 0.0) - 2 * ek(s1**2, s2**2, float(mu @ mu))
    x, y = r.normal(size=(3000, d)) * s1, r.normal(size=(3000, d)) * s2 + mu
    est = float(mmd_rbf(_t(x), _t(y), [h], unbiased=True))
    assert est == pytest.approx(closed, rel=0.05)


def test_linear_mmd_hand_case():
    x = torch.tensor([[0.0, 0.0], [2.0, 2.0]])
    y = torch.tensor([[1.0, 4.0], [1.0, 2.0], [1.0, 0.0]])
    assert float(linear_mmd(x, y)) == pytest.approx(0.0 + 1.0)  # means (1, 1) and (1, 2)


# ----------------------------------------------------------------------------- energy distance


def test_energy_distance_1d_is_scipy_squared():
    r = _rng(11)
    x, y = r.normal(size=40), r.normal(0.5, 2.0, size=25)
    ref = scipy.stats.energy_distance(x, y)  # scipy returns the square root of the V-statistic
    assert float(energy_distance(_t(x), _t(y))) == pytest.approx(ref**2, rel=1e-10)


@pytest.mark.parametrize("unbiased", [False, True])
def test_energy_distance_multid_matches_double_loop(unbiased):
    r = _rng(12)
    x, y = r.normal(size=(8, 3)), r.normal(size=(6, 3)) + 0.5
    n, m = len(x), len(y)
    dxy = np.mean([np.linalg.norm(a - b) for a in x for b in y])
    sxx = sum(np.linalg.norm(x[i] - x[j]) for i in range(n) for j in range(n))
    syy = sum(np.linalg.norm(y[i] - y[j]) for i in range(m) for j in range(m))
    nx, ny = (n * (n - 1), m * (m - 1)) if unbiased else (n * n, m * m)
    ref = 2 * dxy - sxx / nx - syy / ny
    assert float(energy_distance(_t(x), _t(y), unbiased=unbiased)) == pytest.approx(ref, rel=1e-10)


def test_energy_distance_matches_dcor_if_installed():
    dcor = pytest.importorskip("dcor")
    r = _rng(13)
    x, y = r.normal(size=(20, 2)), r.normal(size=(15, 2))
    assert float(energy_distance(_t(x), _t(y))) == pytest.approx(dcor.energy_distance(x, y), rel=1e-10)


# ----------------------------------------------------------------------------- bad input


def test_bad_inputs_raise_clear_errors():
    x = torch.randn(5, 2)
    for fn in (w1, w2, w2_squared, mmd_rbf, energy_distance, linear_mmd):
        with pytest.raises(ValueError, match="feature dimension"):
            fn(x, torch.randn(5, 3))
        with pytest.raises(ValueError, match="NaN"):
            fn(x, torch.full((5, 2), float("nan")))
        with pytest.raises(ValueError, match="empty"):
            fn(torch.empty(0, 2), x)
        with pytest.raises(TypeError, match="torch.Tensor"):
            fn([[0.0, 1.0]], x)
    with pytest.raises(ValueError, match="at least 2 row"):
        mmd_rbf(x[:1], x, [1.0], unbiased=True)
    with pytest.raises(ValueError, match="bandwidths"):
        mmd_rbf(x, x, [0.0])
    with pytest.raises(ValueError, match="eps"):
        sinkhorn_cost(x, x, -1.0)
    with pytest.raises(ValueError, match="coincide"):
        mmd_rbf(torch.ones(3, 2), torch.ones(3, 2))
