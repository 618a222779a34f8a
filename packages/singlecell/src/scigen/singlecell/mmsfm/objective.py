"""The MMSFM training objective (Lee, Moradijamei & Shakeri, ICML 2025, §3).

Trajectory time ``t`` here is normalised observation time in ``[0, 1]`` running forward from the
first snapshot (not the engine's data/noise time of a denoising path).

For observed marginals at times ``t_0 < ... < t_{M-1}`` and window size ``k``:

1. windows are the ``M − k`` runs of ``k + 1`` consecutive marginals (``k = 1`` pairwise / SF2M,
   ``k = 2`` triplet);
2. each window's minibatches are coupled by exact OT **chained row-aligned**
   (:func:`scigen.core.couplings.chain_coupling`; the reference sampler decouples the later segments);
3. a spline (PCHIP by default, :class:`~scigen.singlecell.mmsfm.spline.Spline`) through every
   trajectory gives the mean ``mu_t`` and ``mu_t'``;
4. times are stratified: each window's ``b`` samples are split evenly over its ``k`` intervals,
   uniform inside each;
5. the Brownian bridge over the window (:class:`scigen.core.paths.BrownianBridge` with one window
   ``[t_a, t_b]`` per trajectory, ``tau = (t − t_a)/(t_b − t_a)``): ``x_t = mu_t + sigma_t·eps`` with
   ``sigma_t = sigma·sqrt(tau(1 − tau))``, drift target ``u_t = (sigma_t'/sigma_t)(x_t − mu_t) + mu_t'``
   (SF2M Eq. 9) and score target ``−eps`` for ``lambda_t·s(x_t, t)`` with ``lambda_t = 2 sigma_t/sigma²``;
6. loss ``mean‖v(x_t, t) − u_t‖² + mean‖lambda_t·s(x_t, t) + eps‖²`` (one network pair shared by all
   windows).

``bridge="constant"`` keeps ``sigma_t = sigma`` (OT-CFM with noise; no score), and ``sigma = 0`` gives
the deterministic OT-CFM path ``x_t = mu_t``, ``u_t = mu_t'``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import torch
from torch import Tensor

from scigen.core.couplings import chain_coupling
from scigen.core.paths import BrownianBridge
from scigen.singlecell.mmsfm.spline import Spline

__all__ = ["BridgeSample", "bridge_targets", "couple_windows", "mmsfm_loss", "stratified_times", "windows"]


def windows(n_marginals: int, k: int) -> list[tuple[int, ...]]:
    """Index tuples of the ``n_marginals − k`` windows of ``k + 1`` consecutive marginals."""
    if k < 1:
        raise ValueError(f"window size k must be >= 1, got {k}")
    if n_marginals < k + 1:
        raise ValueError(f"window size k={k} needs at least {k + 1} training time points, got {n_marginals}")
    return [tuple(range(j, j + k + 1)) for j in range(n_marginals - k)]


def couple_windows(batches: Sequence[Tensor], times: Tensor, k: int, *, coupling: str = "exact",
                   generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
    """Couple every window's minibatches; return trajectories ``[W·b, k+1, d]`` and their knots ``[W·b, k+1]``.

    ``batches[m]`` is the ``[b, d]`` minibatch of marginal ``m`` observed at ``times[m]``.
    ``coupling`` is ``"exact"`` (row-aligned chained OT), ``"sinkhorn"`` or ``"independent"``.
    """
    trajs, knots = [], []
    for w in windows(len(batches), k):
        seg = chain_coupling([batches[m] for m in w], method=coupling, generator=generator)
        trajs.append(torch.stack(seg, dim=1))
        knots.append(times[list(w)].expand(seg[0].shape[0], -1))
    return torch.cat(trajs), torch.cat(knots)


def stratified_times(knots: Tensor, *, stratified: bool = True, generator: torch.Generator | None = None) -> Tensor:
    """One time per trajectory inside its window ``[knots[:, 0], knots[:, -1]]``.

    Stratified (the reference's default): trajectory ``i`` of a window draws uniformly inside interval
    ``i mod k`` (so each interval gets ``b/k`` samples, short ones included); otherwise uniform on the window.
    """
    n, K = knots.shape
    u = torch.rand(n, generator=generator, dtype=knots.dtype).to(knots.device)
    if not stratified or K == 2:
        return knots[:, 0] + u * (knots[:, -1] - knots[:, 0])
    interval = torch.arange(n, device=knots.device) % (K - 1)
    lo = knots.gather(1, interval[:, None]).squeeze(1)
    hi = knots.gather(1, interval[:, None] + 1).squeeze(1)
    return lo + u * (hi - lo)


@dataclasses.dataclass
class BridgeSample:
    """``x_t``, the drift target ``u_t``, the noise ``eps``, the SF2M weight ``lambda_t`` (None without score)."""

    t: Tensor
    x: Tensor
    drift: Tensor
    noise: Tensor
    score_weight: Tensor | None
    mean: Tensor
    std: Tensor


def bridge_targets(traj: Tensor, knots: Tensor, t: Tensor, *, sigma: float, spline: str = "pchip",
                   bridge: str = "brownian", edge: float = 1e-3, noise: Tensor | None = None,
                   generator: torch.Generator | None = None) -> BridgeSample:
    """Sample ``x_t`` on each trajectory's bridge and compute the regression targets (module docstring, step 5).

    ``t`` is clamped so that ``tau ∈ [edge, 1 − edge]`` (the drift ``sigma_t'/sigma_t`` is singular at
    the window's pinned ends).
    """
    if bridge not in ("brownian", "constant"):
        raise ValueError(f"bridge must be 'brownian' or 'constant', got {bridge!r}")
    a, c = knots[:, 0], knots[:, -1]
    length = c - a
    tau = ((t - a) / length).clamp(edge, 1 - edge)
    t = a + tau * length
    mu, dmu = Spline(knots, traj, spline).evaluate(t)
    if noise is None:
        noise = torch.randn(mu.shape, generator=generator, dtype=mu.dtype).to(mu.device)
    if sigma == 0:
        zero = torch.zeros_like(tau)
        return BridgeSample(t, mu, dmu, noise, None, mu, zero)
    # one bridge window per trajectory: [knots[:, 0], knots[:, -1]] (the engine's per-sample windows)
    br = BrownianBridge(sigma, a, c, fixed_sigma=bridge == "constant")
    std = br.std(t)
    x = mu + std[:, None] * noise
    drift = br.log_std_derivative(t)[:, None] * (x - mu) + dmu
    weight = None if bridge == "constant" else br.score_weight(t)
    return BridgeSample(t, x, drift, noise, weight, mu, std)


def mmsfm_loss(drift_fn, score_fn, sample: BridgeSample) -> dict[str, Tensor]:
    """``{"flow", "score", "loss"}``: ``mean‖v − u‖²``, ``mean‖lambda·s + eps‖²`` (0 without score) and their sum."""
    flow = ((drift_fn(sample.x, sample.t) - sample.drift) ** 2).mean()
    score = torch.zeros((), dtype=flow.dtype, device=flow.device)
    if score_fn is not None and sample.score_weight is not None:
        score = ((sample.score_weight[:, None] * score_fn(sample.x, sample.t) + sample.noise) ** 2).mean()
    return {"flow": flow, "score": score, "loss": flow + score}
