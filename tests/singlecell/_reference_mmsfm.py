"""Frozen copy of MMSFM's own bridge targets, loss and integrator before the move onto the engine
(``scigen.singlecell.mmsfm`` at commit b6cf7fa: ``objective.stratified_times`` / ``bridge_targets`` /
``mmsfm_loss`` and ``integrate.integrate``). The equivalence tests (``test_engine_equivalence.py``) compare the engine
wiring that replaced them with this code on the same batch, times, noise and generator. Not used by
the package.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import Tensor

from scigen.core.paths import BrownianBridge
from scigen.singlecell.mmsfm.spline import Spline

METHODS = ("dopri5", "euler", "rk4", "sde")


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


def _grid(t0: float, times: Tensor, step: float) -> tuple[Tensor, Tensor]:
    """A grid from ``t0`` through every requested time with spacing at most ``step``; positions of ``times``."""
    pts = [t0]
    idx = []
    for t in times.tolist():
        last = pts[-1]
        n = max(1, int(torch.ceil(torch.tensor((t - last) / step)).item())) if t > last else 0
        for j in range(1, n + 1):
            pts.append(last + (t - last) * j / n)
        idx.append(len(pts) - 1)
    return torch.tensor(pts, dtype=torch.float64), torch.tensor(idx)


@torch.no_grad()
def integrate(drift, x0: Tensor, t0: float, times: Tensor, *, method: str = "dopri5", score=None,
              diffusion: float = 0.0, step: float = 0.01, atol: float = 1e-5, rtol: float = 1e-5,
              generator: torch.Generator | None = None) -> Tensor:
    """States ``[len(times), n, d]`` at the (ascending, ``>= t0``) ``times`` starting from ``x0`` at ``t0``."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    times = torch.as_tensor(times, dtype=torch.float64)
    if method == "dopri5":
        from torchdiffeq import odeint

        grid, pos = torch.unique(torch.cat([torch.tensor([t0], dtype=torch.float64), times]), return_inverse=True)
        if len(grid) == 1:
            return x0.unsqueeze(0).expand(len(times), *x0.shape).clone()

        def f(t, x):
            return drift(x, t.to(x.dtype).expand(x.shape[0]))

        out = odeint(f, x0, grid.to(x0.dtype), method="dopri5", atol=atol, rtol=rtol)
        return out[pos[1:]]
    grid, idx = _grid(t0, times, step)
    x = x0.clone()
    states = [x]
    for i in range(len(grid) - 1):
        ta, tb = float(grid[i]), float(grid[i + 1])
        h = tb - ta
        ta_v = torch.full((x.shape[0],), ta, dtype=x.dtype, device=x.device)
        if method == "euler":
            x = x + h * drift(x, ta_v)
        elif method == "rk4":
            tm = ta_v + h / 2
            k1 = drift(x, ta_v)
            k2 = drift(x + h / 2 * k1, tm)
            k3 = drift(x + h / 2 * k2, tm)
            k4 = drift(x + h * k3, ta_v + h)
            x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        else:
            f = drift(x, ta_v) + (score(x, ta_v) if score is not None else 0.0)
            dw = torch.randn(x.shape, generator=generator, dtype=x.dtype).to(x.device) * h**0.5
            x = x + h * f + diffusion * dw
        states.append(x)
    return torch.stack(states)[idx]
