"""Couplings checked against brute force, POT and the structure of 1-D optimal transport."""

from __future__ import annotations

import itertools

import numpy as np
import ot
import pytest
import torch
from scipy.stats import spearmanr

from scigen.core.couplings import (
    chain_coupling,
    chain_indices,
    exact_ot_cost,
    exact_ot_plan,
    independent_coupling,
    ot_coupling,
    ot_indices,
    sample_plan,
    sinkhorn_plan,
)


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _brute_force_assignment(x: np.ndarray, y: np.ndarray) -> tuple[float, tuple[int, ...]]:
    C = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    best = min(itertools.permutations(range(len(y))), key=lambda p: C[np.arange(len(x)), list(p)].sum())
    return float(C[np.arange(len(x)), list(best)].sum()), best


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_exact_ot_pairing_is_the_brute_force_optimal_permutation(seed):
    g = _gen(seed)
    x0 = torch.randn(6, 2, generator=g, dtype=torch.float64)
    x1 = torch.randn(6, 2, generator=g, dtype=torch.float64) + 1.0
    j = ot_indices(x0, x1)
    best_cost, best_perm = _brute_force_assignment(x0.numpy(), x1.numpy())
    assert sorted(j.tolist()) == list(range(6))  # a permutation
    ours = float(((x0 - x1[j]) ** 2).sum())
    assert ours == pytest.approx(best_cost, rel=1e-12)
    assert tuple(j.tolist()) == best_perm  # continuous random data: the optimum is unique


def test_ot_coupling_flattens_image_batches_and_keeps_x0():
    g = _gen(5)
    x0 = torch.randn(5, 1, 2, 2, generator=g)
    x1 = torch.randn(5, 1, 2, 2, generator=g)
    a, b = ot_coupling(x0, x1)
    assert a is x0 and b.shape == x1.shape
    cost, _ = _brute_force_assignment(x0.reshape(5, -1).double().numpy(), x1.reshape(5, -1).double().numpy())
    assert float(((a - b) ** 2).sum()) == pytest.approx(cost, rel=1e-5)


def test_exact_plan_with_weights_matches_marginals_and_pot():
    g = _gen(7)
    x0 = torch.randn(7, 3, generator=g, dtype=torch.float64)
    x1 = torch.randn(4, 3, generator=g, dtype=torch.float64)
    a = torch.rand(7, generator=g, dtype=torch.float64) + 0.1
    b = torch.rand(4, generator=g, dtype=torch.float64) + 0.1
    plan = exact_ot_plan(x0, x1, a, b)
    torch.testing.assert_close(plan.sum(1), a / a.sum())
    torch.testing.assert_close(plan.sum(0), b / b.sum())
    an, bn = (a / a.sum()).numpy(), (b / b.sum()).numpy()
    ref = ot.emd2(an, bn, ot.dist(x0.numpy(), x1.numpy(), metric="sqeuclidean"))
    assert float(exact_ot_cost(x0, x1, a, b)) == pytest.approx(ref, rel=1e-10)


def test_unequal_sizes_sample_rows_from_the_plan_conditionals():
    # x0 has 2 points, x1 has 4; in 1-D the plan sends x0[0] (left) to the two left points of x1.
    x0 = torch.tensor([[0.0], [10.0]])
    x1 = torch.tensor([[-1.0], [1.0], [9.0], [11.0]])
    counts = torch.zeros(2, 4)
    g = _gen(0)
    for _ in range(400):
        j = ot_indices(x0, x1, generator=g)
        counts[0, j[0]] += 1
        counts[1, j[1]] += 1
    assert counts[0, 2:].sum() == 0 and counts[1, :2].sum() == 0
    # each conditional is uniform over its two points (mass 1/4 each out of 1/2)
    assert abs(float(counts[0, 0]) / 400 - 0.5) < 0.1 and abs(float(counts[1, 3]) / 400 - 0.5) < 0.1


def test_sinkhorn_plan_marginals_and_pot_reference():
    g = _gen(11)
    x0 = torch.randn(8, 2, generator=g, dtype=torch.float64)
    x1 = torch.randn(5, 2, generator=g, dtype=torch.float64)
    a = torch.rand(8, generator=g, dtype=torch.float64) + 0.2
    b = torch.rand(5, generator=g, dtype=torch.float64) + 0.2
    a, b = a / a.sum(), b / b.sum()
    plan = sinkhorn_plan(x0, x1, 0.1, a, b, tol=1e-12)
    torch.testing.assert_close(plan.sum(1), a, atol=1e-10, rtol=0)
    torch.testing.assert_close(plan.sum(0), b, atol=1e-10, rtol=0)
    C = ot.dist(x0.numpy(), x1.numpy(), metric="sqeuclidean")
    ref = ot.sinkhorn(a.numpy(), b.numpy(), C, 0.1, method="sinkhorn_log", stopThr=1e-13, numItermax=100000)
    np.testing.assert_allclose(plan.numpy(), ref, atol=1e-9)
    # the fixed-iteration path through the scigen.kernels.sinkhorn_log op reaches the same plan
    plan_k = sinkhorn_plan(x0, x1, 0.1, a, b, n_iters=2000)
    np.testing.assert_allclose(plan_k.numpy(), ref, atol=1e-8)


def test_sinkhorn_cost_approaches_exact_ot_as_eps_goes_to_zero():
    # 0 <= <P_eps, C> - OT <= eps * log(n m): compare the entropic and the exact objective at
    # their minimisers (entropy of a coupling lies in [0, log nm]).
    g = _gen(3)
    x0 = torch.randn(8, 2, generator=g, dtype=torch.float64)
    x1 = torch.randn(8, 2, generator=g, dtype=torch.float64) + 0.5
    C = torch.cdist(x0, x1) ** 2
    exact = float(exact_ot_cost(x0, x1))
    gaps = []
    for eps in (0.5, 0.05, 0.005):
        plan = sinkhorn_plan(x0, x1, eps, max_iter=3000, tol=1e-8)
        slack = float(C.max()) * float((plan.sum(1) - 1 / 8).abs().sum())  # marginal error
        gap = float((plan * C).sum()) - exact
        assert -slack - 1e-12 <= gap <= eps * np.log(64) + slack, (eps, gap)
        gaps.append(gap)
    assert gaps == sorted(gaps, reverse=True)
    assert gaps[-1] < 1e-3 * exact


def _monotone_marginals(n: int, seed: int) -> list[torch.Tensor]:
    g = _gen(seed)
    return [
        torch.randn(n, 1, generator=g, dtype=torch.float64),
        torch.rand(n, 1, generator=g, dtype=torch.float64) * 4 + 3,
        torch.randn(n, 1, generator=g, dtype=torch.float64).exp(),
        torch.randn(n, 1, generator=g, dtype=torch.float64) * 0.3 - 2,
    ]


def test_chained_exact_ot_keeps_every_trajectory_comonotone():
    marg = _monotone_marginals(40, seed=0)
    traj = torch.cat(chain_coupling(marg), dim=1)  # [n, 4]: row i is one trajectory
    for a, b in itertools.combinations(range(4), 2):
        rho = spearmanr(traj[:, a].numpy(), traj[:, b].numpy()).statistic
        assert rho == pytest.approx(1.0, abs=1e-12), (a, b, rho)
    # a stacked [K, n, d] tensor is accepted too and gives the same trajectories
    stacked = torch.cat(chain_coupling(torch.stack(marg)), dim=1)
    torch.testing.assert_close(stacked, traj)
    # and each snapshot is a permutation of its input
    for m, t in zip(marg, traj.unbind(1), strict=True):
        torch.testing.assert_close(torch.sort(t).values, torch.sort(m[:, 0]).values)


def test_mmsfm_style_resampling_decouples_segments_while_ours_does_not():
    # The reference MMSFM sampler conditions segment 2 on the row index of X0 while the plan's rows
    # are the reordered X1. Reproduce that indexing to show the test above can tell the difference.
    marg = _monotone_marginals(200, seed=1)
    x0, x1, x2 = marg[:3]
    j1 = ot_indices(x0, x1)
    x1_re = x1[j1]
    plan_12 = exact_ot_plan(x1_re, x2)
    j_wrong = plan_12[j1].argmax(1)  # row j1[i] of the plan instead of row i
    rho_wrong = spearmanr(x0[:, 0].numpy(), x2[j_wrong, 0].numpy()).statistic
    idx = chain_indices(marg[:3])
    rho_ours = spearmanr(x0[:, 0].numpy(), x2[idx[2], 0].numpy()).statistic
    assert rho_ours == pytest.approx(1.0, abs=1e-12)
    assert abs(rho_wrong) < 0.3


def test_chain_with_unequal_sizes_stays_nearly_comonotone_and_row_aligned():
    g = _gen(4)
    marg = [
        torch.randn(60, 1, generator=g, dtype=torch.float64),
        torch.randn(90, 1, generator=g, dtype=torch.float64) + 3,
        torch.randn(45, 1, generator=g, dtype=torch.float64) * 2,
    ]
    out = chain_coupling(marg, generator=_gen(0))
    assert [t.shape[0] for t in out] == [60, 60, 60]
    for t, m in zip(out[1:], marg[1:], strict=True):  # every output row is a point of its snapshot
        assert bool((t[:, None, 0] == m[None, :, 0]).any(1).all())
    for a, b in ((0, 1), (1, 2), (0, 2)):
        assert spearmanr(out[a][:, 0].numpy(), out[b][:, 0].numpy()).statistic > 0.97


def test_chain_with_sinkhorn_and_independent_baseline():
    marg = _monotone_marginals(100, seed=2)
    ours = chain_coupling(marg, method="sinkhorn", eps=1e-3, generator=_gen(0))
    base = chain_coupling(marg, method="independent", generator=_gen(0))
    rho_ours = spearmanr(ours[0][:, 0].numpy(), ours[3][:, 0].numpy()).statistic
    rho_base = spearmanr(base[0][:, 0].numpy(), base[3][:, 0].numpy()).statistic
    assert rho_ours > 0.95 and abs(rho_base) < 0.3


def test_independent_coupling_is_a_permutation_uncorrelated_with_x0():
    g = _gen(9)
    x0 = torch.sort(torch.randn(2000, 1, generator=g), dim=0).values
    x1 = torch.sort(torch.randn(2000, 1, generator=g), dim=0).values  # fully comonotone as given
    a, b = independent_coupling(x0, x1, generator=_gen(1))
    torch.testing.assert_close(torch.sort(b, dim=0).values, x1)
    assert abs(float(np.corrcoef(a[:, 0].numpy(), b[:, 0].numpy())[0, 1])) < 0.06


def test_sample_plan_frequencies_match_the_plan():
    plan = torch.tensor([[0.1, 0.2, 0.0], [0.3, 0.0, 0.4]], dtype=torch.float64)
    i, j = sample_plan(plan, 20000, generator=_gen(0))
    freq = torch.zeros_like(plan)
    freq.index_put_((i, j), torch.ones(20000, dtype=torch.float64), accumulate=True)
    torch.testing.assert_close(freq / 20000, plan, atol=0.015, rtol=0)


def test_bad_inputs_raise_clear_errors():
    x = torch.randn(4, 2)
    with pytest.raises(ValueError, match="feature dimension"):
        ot_indices(x, torch.randn(4, 3))
    with pytest.raises(ValueError, match="NaN"):
        ot_indices(x, torch.full((4, 2), float("nan")))
    with pytest.raises(ValueError, match="empty"):
        exact_ot_plan(torch.empty(0, 2), x)
    with pytest.raises(ValueError, match="method"):
        ot_indices(x, x, method="bogus")
    with pytest.raises(ValueError, match="eps"):
        sinkhorn_plan(x, x, 0.0)
    with pytest.raises(ValueError, match=r"a must have shape \[4\]"):
        exact_ot_plan(x, x, a=torch.ones(3))
    with pytest.raises(ValueError, match="at least 2"):
        chain_coupling([x])
    with pytest.raises(TypeError, match="torch.Tensor"):
        ot_indices(np.zeros((4, 2)), x)
