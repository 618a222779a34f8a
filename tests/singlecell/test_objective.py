"""MMSFM's loss wiring against closed forms, and the row-aligned coupling against the reference's chaining."""

import numpy as np
import ot
import pytest
import torch

from scigen.singlecell.mmsfm.objective import couple_windows, mmsfm_loss, stratified_times, windows


def _line_window(B, d=2):
    g = torch.Generator().manual_seed(0)
    traj = torch.randn(B, 3, d, generator=g, dtype=torch.float64)
    knots = torch.tensor([0.1, 0.3, 0.7], dtype=torch.float64).expand(B, 3)
    return traj, knots


class Probe:
    """A drift/score 'network' that records its inputs and returns zeros (so the loss is the mean
    square of the target)."""

    def __call__(self, x, t):
        self.x, self.t = x, t
        return torch.zeros_like(x)


def test_bridge_marginal_variance_matches_closed_form():
    B, sigma = 200_000, 0.3
    traj, knots = _line_window(B, d=1)
    traj = traj[:1].expand(B, 3, 1)
    for t in (0.2, 0.3, 0.55):
        tt = torch.full((B,), t, dtype=torch.float64)
        probe = Probe()
        out = mmsfm_loss(probe, None, traj, knots, tt, sigma=sigma, spline="linear",
                         generator=torch.Generator().manual_seed(1))
        tau = (t - 0.1) / 0.6
        mu = np.interp(t, [0.1, 0.3, 0.7], traj[0, :, 0].numpy())
        assert (probe.x[:, 0] - mu).var().item() == pytest.approx(sigma**2 * tau * (1 - tau), rel=0.02)
        assert (probe.x[:, 0] - mu).mean().item() == pytest.approx(0.0, abs=3e-3)
        assert out["score"].item() == 0.0  # no score network given


@pytest.mark.parametrize("bridge", ["brownian", "constant"])
def test_loss_is_the_closed_form_target_for_a_zero_network(bridge):
    """Zero drift and score: flow = mean‖(sigma_t'/sigma_t)(x − mu) + mu'‖², score = mean‖eps‖² (brownian)."""
    B, sigma = 64, 0.5
    traj, knots = _line_window(B)
    t = torch.linspace(0.12, 0.68, B, dtype=torch.float64)
    eps = torch.randn(B, 2, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    out = mmsfm_loss(Probe(), Probe(), traj, knots, t, sigma=sigma, spline="linear", bridge=bridge, noise=eps)
    tau = (t - 0.1) / 0.6
    i = (t >= 0.3).long()
    b = torch.arange(B)
    mu_dot = (traj[b, i + 1] - traj[b, i]) / (knots[0, i + 1] - knots[0, i])[:, None]
    if bridge == "brownian":
        std = sigma * torch.sqrt(tau * (1 - tau))
        ratio = (1 - 2 * tau) / (2 * tau * (1 - tau) * 0.6)
        u = ratio[:, None] * std[:, None] * eps + mu_dot
        torch.testing.assert_close(out["score"], (eps**2).mean())
    else:
        u = mu_dot  # constant std: no drift correction, no score
        assert out["score"].item() == 0.0
    torch.testing.assert_close(out["flow"], (u**2).mean())
    torch.testing.assert_close(out["loss"], out["flow"] + out["score"])


def test_sigma_zero_is_the_deterministic_spline_path():
    traj, knots = _line_window(8)
    t = torch.full((8,), 0.3, dtype=torch.float64)
    probe = Probe()
    out = mmsfm_loss(probe, Probe(), traj, knots, t, sigma=0.0, spline="linear")
    torch.testing.assert_close(probe.x, traj[:, 1])
    assert out["score"].item() == 0.0


def test_windows_and_stratified_times():
    assert windows(5, 2) == [(0, 1, 2), (1, 2, 3), (2, 3, 4)]
    assert windows(3, 1) == [(0, 1), (1, 2)]
    with pytest.raises(ValueError, match="needs at least 4"):
        windows(3, 3)
    knots = torch.tensor([0.0, 0.1, 1.0]).expand(300, 3)
    t = stratified_times(knots, generator=torch.Generator().manual_seed(0))
    assert int(((t >= 0) & (t <= 0.1)).sum()) == 150  # the short interval gets half the samples
    assert bool(((t >= 1e-3) & (t <= 1 - 1e-3)).all())  # clamped away from the pinned ends
    edge = stratified_times(knots, edge=0.2, generator=torch.Generator().manual_seed(0))
    assert float(edge.min()) >= 0.2 - 1e-7 and float(edge.max()) <= 0.8 + 1e-7


def _reference_chaining(z0, z1, z2, rng):
    """The reference sampler (MultiMarginalPairwiseOTPlanSampler.sample_plan) as described in
    shared/research/singlecell.md §2.2: segment 2 conditions on the original batch-0 index ``i``."""
    b = len(z0)
    pi = ot.emd(np.full(b, 1 / b), np.full(b, 1 / b), ot.dist(z0, z1))
    flat = rng.choice(b * b, size=b, p=pi.ravel() / pi.sum())
    i, j = np.divmod(flat, b)
    z0s, z1s = z0[i], z1[j]
    pi2 = ot.emd(np.full(b, 1 / b), np.full(b, 1 / b), ot.dist(z1s, z2))
    nxt = np.array([rng.choice(b, p=pi2[r] / pi2[r].sum()) for r in i])  # bug: rows i, not arange(b)
    return z0s, z1s, z2[nxt]


def test_row_aligned_chaining_keeps_the_second_segment_coupled():
    rng = np.random.default_rng(0)
    b = 256
    z = [rng.normal(m, 1.0, (b, 1)) for m in (0.0, 3.0, 6.0)]
    traj, _ = couple_windows([torch.tensor(x) for x in z], torch.tensor([0.0, 0.5, 1.0], dtype=torch.float64), 2)
    ours = np.corrcoef(traj[:, 1, 0].numpy(), traj[:, 2, 0].numpy())[0, 1]
    first = np.corrcoef(traj[:, 0, 0].numpy(), traj[:, 1, 0].numpy())[0, 1]
    _, r1, r2 = _reference_chaining(*z, rng)
    theirs = np.corrcoef(r1[:, 0], r2[:, 0])[0, 1]
    assert first > 0.95 and ours > 0.95
    order = np.argsort(traj[:, 1, 0].numpy())  # exact OT in 1-D is the monotone (sorted) matching
    assert np.all(np.diff(traj[order, 2, 0].numpy()) >= 0)
    assert theirs < 0.5  # the reference's chaining decouples segment 2
