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
   uniform inside each
   (clamped to ``tau ∈ [edge, 1 − edge]``: the bridge drift is singular at the window's pinned ends);
5. the Brownian bridge over the window (:class:`scigen.core.paths.BrownianBridge` with one window
   ``[t_a, t_b]`` per trajectory, ``tau = (t − t_a)/(t_b − t_a)``): ``x_t = mu_t + sigma_t·eps`` with
   ``sigma_t = sigma·sqrt(tau(1 − tau))``, drift target ``u_t = (sigma_t'/sigma_t)(x_t − mu_t) + mu_t'``
   (SF2M Eq. 9) and score target ``−eps`` for ``lambda_t·s(x_t, t)`` with ``lambda_t = 2 sigma_t/sigma²``;
6. loss ``mean‖v(x_t, t) − u_t‖² + mean‖lambda_t·s(x_t, t) + eps‖²`` (one network pair shared by all
   windows).

Steps 5–6 are the engine's :func:`scigen.core.losses.sf2m_loss` with the spline's ``mu_t`` and
``mu_t'`` plugged in (``mu=`` / ``dmu=``); this module only prepares its inputs (steps 1–4).

``bridge="constant"`` keeps ``sigma_t = sigma`` (OT-CFM with noise; no score), and ``sigma = 0`` gives
the deterministic OT-CFM path ``x_t = mu_t``, ``u_t = mu_t'``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from scigen.core import streams
from scigen.core.couplings import chain_coupling
from scigen.core.errors import InvalidInputError
from scigen.core.losses import sf2m_loss
from scigen.core.paths import BrownianBridge
from scigen.singlecell.mmsfm.spline import Spline

__all__ = ["couple_windows", "mmsfm_loss", "stratified_times", "windows"]


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
    ``coupling`` is ``"exact"`` (row-aligned chained OT), ``"sinkhorn"``, ``"independent"`` (a uniformly random
    permutation of each next minibatch) or ``"rows"``: row ``i`` of every minibatch is one trajectory as given. When
    the minibatches' rows are themselves independent draws of each marginal (``fit``'s index table pairs
    independently permuted columns, :func:`~scigen.singlecell.mmsfm.state.index_table`), ``"rows"`` is the
    independent coupling without a joint draw over the batch: ``fit(rng="per_sample")`` uses it for
    ``"independent"``, so a trajectory depends on its own row only.
    """
    if coupling not in ("exact", "sinkhorn", "independent", "rows"):
        raise InvalidInputError(f"coupling must be 'exact', 'sinkhorn', 'independent' or 'rows', got {coupling!r}")
    trajs, knots = [], []
    for w in windows(len(batches), k):
        if coupling == "rows":
            if len({batches[m].shape[0] for m in w}) != 1:
                raise InvalidInputError("coupling='rows' needs minibatches of one size, got sizes "
                                        f"{[batches[m].shape[0] for m in w]}")
            seg = [batches[m] for m in w]
        else:
            seg = chain_coupling([batches[m] for m in w], method=coupling, generator=generator)
        trajs.append(torch.stack(seg, dim=1))
        knots.append(times[list(w)].expand(seg[0].shape[0], -1))
    return torch.cat(trajs), torch.cat(knots)


def stratified_times(knots: Tensor, *, stratified: bool = True, edge: float = 1e-3,
                     generator: torch.Generator | None = None) -> Tensor:
    """One time per trajectory inside its window ``[a, c] = [knots[:, 0], knots[:, -1]]``.

    Stratified (the reference's default): trajectory ``i`` of a window draws uniformly inside interval
    ``i mod k`` (so each interval gets ``b/k`` samples, short ones included); otherwise uniform on the
    window. Times are then clamped to ``a + [edge, 1 − edge]·(c − a)``, away from the pinned ends.
    """
    n, K = knots.shape
    u = streams.rand((n,), generator=generator, dtype=knots.dtype, device=knots.device)
    a, c = knots[:, 0], knots[:, -1]
    if not stratified or K == 2:
        t = a + u * (c - a)
    else:
        interval = torch.arange(n, device=knots.device) % (K - 1)
        lo = knots.gather(1, interval[:, None]).squeeze(1)
        hi = knots.gather(1, interval[:, None] + 1).squeeze(1)
        t = lo + u * (hi - lo)
    return a + ((t - a) / (c - a)).clamp(edge, 1 - edge) * (c - a)


def mmsfm_loss(drift_fn, score_fn, traj: Tensor, knots: Tensor, t: Tensor, *, sigma: float,
               spline: str = "pchip", bridge: str = "brownian", noise: Tensor | None = None,
               generator: torch.Generator | None = None) -> dict[str, Tensor]:
    """``{"flow", "score", "loss"}`` of :func:`scigen.core.losses.sf2m_loss` on the window bridges.

    ``traj [B, k+1, d]`` are coupled trajectories at ``knots [B, k+1]``, ``t [B]`` one time per row
    inside its window (:func:`stratified_times`). The spline through each trajectory is the bridge
    mean; ``bridge="constant"`` keeps the std at ``sigma`` (OT-CFM with noise) and ``sigma = 0`` is the
    deterministic path ``x_t = mu_t`` — both without a score term.
    """
    if bridge not in ("brownian", "constant"):
        raise ValueError(f"bridge must be 'brownian' or 'constant', got {bridge!r}")
    mu, dmu = Spline(knots, traj, spline).evaluate(t)
    fixed = bridge == "constant" or sigma == 0
    br = BrownianBridge(sigma, knots[:, 0], knots[:, -1], fixed_sigma=fixed)
    return sf2m_loss(drift_fn, None if fixed else score_fn, traj[:, 0], traj[:, -1], br, mu=mu, dmu=dmu,
                     t=t, noise=noise, generator=generator)
