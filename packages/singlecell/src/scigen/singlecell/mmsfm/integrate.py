"""Integrating the learned dynamics forward from the first marginal (normalised time ``t ∈ [0, 1]``+).

* ODE ``dx/dt = v(x, t)``: adaptive ``dopri5`` (torchdiffeq, Dormand & Prince 1980) or fixed-step
  ``euler`` / ``rk4``; the state is read out exactly at the requested times.
* SDE ``dx = [v(x, t) + s(x, t)] dt + g dW`` (Euler–Maruyama), as the reference samples SF2M/MMSFM:
  ``s`` learns ``(g²/2)∇log p_t`` with ``g = sigma``.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["METHODS", "integrate"]

METHODS = ("dopri5", "euler", "rk4", "sde")


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
