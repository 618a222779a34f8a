"""Explicit Runge-Kutta solvers of the probability-flow ODE (Song et al. 2021, Eq. 13).

For ``x_t = alpha(t)·x0 + sigma(t)·eps`` the probability-flow ODE is
``dx/dt = alpha'(t)·D(x, t) + sigma'(t)·(x − alpha(t)·D(x, t)) / sigma(t)``
with the denoiser ``D = E[x0 | x_t]`` (``t = 0`` data, ``t = 1`` noise), integrated from
``times[0]`` down to ``times[-1]``.

``parameterization`` chooses the integration variable (Runge-Kutta methods are not invariant to it):

* ``"t"`` (default): the ODE above in ``t``; for the linear (rectified-flow) path this is the usual
  flow-matching Euler/Heun.
* ``"edm"``: Karras et al. (2022, Eq. 4 and §3) variables ``y = x/alpha``, ``ς = sigma/alpha``,
  where the ODE is ``dy/dς = (y − D(alpha·y, t(ς)))/ς``. Heun in these variables is EDM's
  Algorithm 1 (deterministic), Euler is DDIM. Much better on steep schedules (VE paths). Stage
  times between grid points come from ``path.t_from_edm_sigma``.

A step that ends where ``sigma = 0`` cannot evaluate the velocity there (``eps`` is ``0/0``).
Such a final step is the first-order exponential-integrator (DDIM) step
``x = alpha(t_end)·D(x_prev, t_prev)``: Euler's step in the ``"edm"`` variables, equal to Euler
in ``t`` for paths linear in ``t``, and what Karras et al. (2022, Alg. 1) do for the last step.
"""

from __future__ import annotations

import torch

from scigen.core.samplers._common import bc, final_is_clean, mt, sched, velocity

__all__ = ["dopri5", "euler", "heun", "rk4", "rk4_38", "rk_step"]

_TABLEAUX = {  # (stage nodes c, coefficients a (lower triangular), weights b)
    "euler": ((0.0,), ((),), (1.0,)),
    "heun": ((0.0, 1.0), ((), (1.0,)), (0.5, 0.5)),
    "rk4": ((0.0, 0.5, 0.5, 1.0), ((), (0.5,), (0.0, 0.5), (0.0, 0.0, 1.0)), (1 / 6, 1 / 3, 1 / 3, 1 / 6)),
    # Kutta's (1901) 3/8 rule: fourth order like classical RK4, with nodes at thirds (torchdiffeq's "rk4")
    "rk4_38": ((0.0, 1 / 3, 2 / 3, 1.0), ((), (1 / 3,), (-1 / 3, 1.0), (1.0, -1.0, 1.0)),
               (1 / 8, 3 / 8, 3 / 8, 1 / 8)),
}


def rk_step(name: str, f, x, t: float, h: float):
    """One explicit Runge-Kutta step of ``dx/dt = f(x, t)`` (scalar ``t``, step ``h``, either sign) with the
    tableau ``name`` (``euler``, ``heun``, ``rk4``, ``rk4_38``): the same tableaux as the samplers, for
    ODEs that are not a denoising path (e.g. MMSFM's forward trajectories)."""
    if name not in _TABLEAUX:
        raise ValueError(f"unknown Runge-Kutta tableau {name!r}; valid: {', '.join(_TABLEAUX)}")
    c, a, b = _TABLEAUX[name]
    ks = [f(x, t)]
    for j in range(1, len(c)):
        ks.append(f(x + h * sum(a[j][m] * ks[m] for m in range(j) if a[j][m] != 0.0), t + c[j] * h))
    return x + h * sum(w * k for w, k in zip(b, ks, strict=True))


def _rk(name, denoise, x, times, hook, parameterization):
    if parameterization not in ("t", "edm"):
        raise ValueError(f"parameterization must be 't' or 'edm', got {parameterization!r}")
    path = denoise.path
    c, a, b = _TABLEAUX[name]
    n = times.shape[0] - 1
    clean = final_is_clean(path, times)
    edm = parameterization == "edm"

    def rhs(state, t):
        """Derivative of the state w.r.t. the integration variable, and the denoiser output."""
        if edm:  # state y = x / alpha; derivative w.r.t. sigma/alpha
            al, sg = sched(path, t)
            x0 = denoise(bc(al, state) * state, mt(t, state))
            return (state - x0) / bc(sg / al, state), x0
        x0 = denoise(state, mt(t, state))
        return velocity(state, x0, *sched(path, t, derivatives=True)), x0

    def var(t):  # the integration variable at time t
        if edm:
            al, sg = sched(path, t)
            return sg / al
        return t

    def time_of(v, t_lo, t_hi):
        if not edm:
            return v
        if hasattr(path, "t_from_edm_sigma"):
            return path.t_from_edm_sigma(v).clamp(min=t_lo, max=t_hi)
        raise ValueError("parameterization='edm' with a multi-stage method needs path.t_from_edm_sigma")

    for i in range(n):
        t, s = times[i], times[i + 1]
        state = x / bc(path.alpha(t), x) if edm else x
        k1, x0 = rhs(state, t)
        hook(i, t, x, x0)
        if clean and i == n - 1:
            x = bc(path.alpha(s), x) * x0
            continue
        v0, v1 = var(t), var(s)
        h = bc(v1 - v0, x)
        ks = [k1]
        for j in range(1, len(c)):
            st = state + h * sum(a[j][m] * ks[m] for m in range(j) if a[j][m] != 0.0)
            tj = s if c[j] == 1.0 else time_of(v0 + c[j] * (v1 - v0), s, t)
            ks.append(rhs(st, tj)[0])
        state = state + h * sum(w * k for w, k in zip(b, ks, strict=True))
        x = bc(path.alpha(s), state) * state if edm else state
    return x


def euler(denoise, x, times, *, hook, generator=None, parameterization: str = "t"):
    """Euler's method (first order); 1 evaluation per step."""
    return _rk("euler", denoise, x, times, hook, parameterization)


def heun(denoise, x, times, *, hook, generator=None, parameterization: str = "t"):
    """Heun's second-order method (Karras et al. 2022, Alg. 1, deterministic): Euler predictor, then
    the trapezoidal corrector; 2 evaluations per step, 1 for a final step into ``sigma = 0``."""
    return _rk("heun", denoise, x, times, hook, parameterization)


def rk4(denoise, x, times, *, hook, generator=None, parameterization: str = "t"):
    """The classical fourth-order Runge-Kutta method; 4 evaluations per step (1 into ``sigma = 0``)."""
    return _rk("rk4", denoise, x, times, hook, parameterization)


def rk4_38(denoise, x, times, *, hook, generator=None, parameterization: str = "t"):
    """Kutta's 3/8-rule fourth-order Runge-Kutta method (Kutta 1901; torchdiffeq's fixed-grid ``"rk4"``);
    4 evaluations per step (1 into ``sigma = 0``). ``rk4`` is the classical method."""
    return _rk("rk4_38", denoise, x, times, hook, parameterization)


def dopri5(denoise, x, times, *, hook, generator=None, rtol: float = 1e-5, atol: float = 1e-5):
    """Adaptive Dormand-Prince 5(4) (Dormand & Prince 1980) on the probability-flow ODE in ``t``, through
    torchdiffeq's ``odeint`` (as :func:`~scigen.core.samplers.likelihood` and the MMSFM paper's sampler).

    ``times`` are read-out points, not steps: the solver picks its own steps to ``rtol``/``atol`` between
    them (NFE as the error control needs). The hook sees every read-out point (its ``x0_hat`` is one extra
    denoiser call there). A grid ending at ``sigma = 0`` ends with the first-order (DDIM) step
    ``x = alpha(t_end)·D(x, t_prev)`` from the point before, as the fixed-step solvers do. A shared grid only.
    """
    from torchdiffeq import odeint

    if times.shape[1] != 1:
        raise ValueError("method='dopri5' needs one shared time grid [n+1], not per-sample times")
    path = denoise.path
    n = times.shape[0] - 1
    clean = final_is_clean(path, times)

    def field(t, state):
        tt = t.reshape(1).to(torch.float64)
        return velocity(state, denoise(state, mt(tt, state)), *sched(path, tt, derivatives=True))

    free = n - 1 if clean else n  # the read-out points the ODE reaches (sigma > 0 at all of them)
    states = [x]
    if free >= 1:
        grid = times[: free + 1, 0].to(device=x.device)
        states = list(odeint(field, x, grid, method="dopri5", rtol=rtol, atol=atol))
    for i in range(n):
        t = times[i]
        x0 = denoise(states[i], mt(t, states[i]))
        hook(i, t, states[i], x0)
        if clean and i == n - 1:
            states.append(bc(path.alpha(times[i + 1]), x0) * x0)
    return states[-1]
