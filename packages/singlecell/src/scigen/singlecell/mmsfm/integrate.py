"""Integrating the learned dynamics forward from the first marginal (normalised time ``t ∈ [0, 1]`` and beyond).

Trajectory time runs forward from the first snapshot (``t = 0``) through the last (``t = 1``) and
beyond (extrapolated times); it is not the engine's data/noise time of a denoising path.

* ODE ``dx/dt = v(x, t)``: adaptive ``dopri5`` (Dormand & Prince 1980) through torchdiffeq's ``odeint``
  (the paper's sampler; the engine's ``dopri5`` is the same solver on a denoising path), or the engine's fixed-step Runge-Kutta tableaux
  (:func:`scigen.core.samplers.ode.rk_step`): ``euler``, ``rk4`` (classical) and ``rk4_38`` (Kutta's
  1901 3/8 rule: torchdiffeq's ``"rk4"``, what this method was called before issue 32). Fixed-step
  grids put a point on every requested time and split each gap into equal steps of at most
  ``1/steps``, so ``steps`` is the number of steps from the first to the last observed time and the
  states are read out exactly at the requested times (no interpolation).
* SDE ``dx = [v(x, t) + s(x, t)] dt + g dW`` by Euler–Maruyama on the same grid, as the reference
  samples SF2M/MMSFM (Tong et al. 2024, §3.3; Lee et al. 2025, §3): ``s`` learns ``(g²/2)∇log p_t``
  with ``g = sigma``. This loop stays here, not in ``scigen.core.samplers.sample``: the engine's
  ``euler_maruyama`` integrates the *reverse-time* SDE of a Gaussian path (``f·x`` and ``g(t)`` from
  the path's schedule, the score from a denoiser, times decreasing inside ``[0, 1]``), while MMSFM's
  SDE runs forward in trajectory time with a learned drift plus a learned score term and a constant
  ``g``, between arbitrary times that may lie beyond ``1`` — none of which ``sample()`` expresses.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from scigen.core import streams

__all__ = ["METHODS", "ODE_METHODS", "fixed_grid", "integrate"]

ODE_METHODS = ("dopri5", "euler", "rk4", "rk4_38")
METHODS = (*ODE_METHODS, "euler_maruyama")


def fixed_grid(knots: Tensor, step: float) -> Tensor:
    """A float64 grid through the ascending ``knots``: each gap split into ``ceil(gap/step)`` equal steps."""
    pts = [float(knots[0])]
    for t in knots[1:].tolist():
        last = pts[-1]
        n = max(1, math.ceil((t - last) / step))
        pts.extend(last + (t - last) * j / n for j in range(1, n))
        pts.append(t)
    return torch.tensor(pts, dtype=torch.float64)


def _euler_maruyama(drift, score, x: Tensor, grid: Tensor, diffusion: float, generator) -> list[Tensor]:
    """States at every point of ``grid``: ``x ← x + h·(v + s) + g·sqrt(h)·z`` (module docstring)."""
    states = [x]
    for ta, tb in zip(grid[:-1].tolist(), grid[1:].tolist(), strict=True):
        h = tb - ta
        t = torch.full((x.shape[0],), ta, dtype=x.dtype, device=x.device)
        f = drift(x, t) + (score(x, t) if score is not None else 0.0)
        dw = streams.randn(x.shape, generator=generator, dtype=x.dtype, device=x.device) * h**0.5
        x = x + h * f + diffusion * dw
        states.append(x)
    return states


@torch.no_grad()
def integrate(drift, x0: Tensor, t0: float, times: Tensor, *, method: str = "dopri5", steps: int = 100,
              score=None, diffusion: float = 0.0, atol: float = 1e-5, rtol: float = 1e-5,
              generator: torch.Generator | None = None) -> Tensor:
    """States ``[len(times), n, d]`` at the (``>= t0``) ``times`` starting from ``x0`` at ``t0``.

    ``method`` is one of :data:`METHODS`; ``steps`` sets the fixed step ``1/steps`` of ``euler``,
    ``rk4`` and ``euler_maruyama``; ``score`` and ``diffusion`` (``g``) are used by ``euler_maruyama``
    only (``score=None``: the drift alone, plus noise).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive int, got {steps!r}")
    times = torch.as_tensor(times, dtype=torch.float64).cpu()
    knots, pos = torch.unique(torch.cat([torch.tensor([t0], dtype=torch.float64), times]), return_inverse=True)
    pos = pos[1:]
    if len(knots) == 1:
        return x0.unsqueeze(0).expand(len(times), *x0.shape).clone()
    if method == "euler_maruyama":
        grid = fixed_grid(knots, 1.0 / steps)
        states = _euler_maruyama(drift, score, x0, grid, diffusion, generator)
        at = torch.searchsorted(grid, knots)
        return torch.stack([states[int(i)] for i in at])[pos.to(x0.device)]
    if method == "dopri5":
        from torchdiffeq import odeint

        def f(t, x):
            return drift(x, t.to(x.dtype).expand(x.shape[0]))

        out = odeint(f, x0, knots.to(device=x0.device, dtype=x0.dtype), method="dopri5", atol=atol, rtol=rtol)
        return out[pos.to(x0.device)]
    from scigen.core.samplers.ode import rk_step

    def v(x, t: float):
        return drift(x, torch.full((x.shape[0],), t, dtype=x.dtype, device=x.device))

    grid = fixed_grid(knots, 1.0 / steps)
    states = [x0]
    for ta, tb in zip(grid[:-1].tolist(), grid[1:].tolist(), strict=True):
        states.append(rk_step(method, v, states[-1], ta, tb - ta))
    at = torch.searchsorted(grid, knots)
    return torch.stack([states[int(i)] for i in at])[pos.to(x0.device)]
