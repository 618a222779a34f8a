"""Euler-Maruyama for the reverse-time SDE (Song et al. 2021, Eq. 6 and App. D).

The forward SDE with the path's marginals is ``dx = f(t)·x dt + g(t) dW`` with
``f = alpha'/alpha`` and ``g² = d(sigma²)/dt − 2 f sigma²`` (``path.sde_coefficients``; Kingma
et al. 2021, App. A). Its reverse (Anderson 1982) is
``dx = [f·x − g²·∇log p_t(x)] dt + g dW̄``, integrated from ``times[0]`` down to ``times[-1]``
with the score ``∇log p_t(x) = −(x − alpha·D(x, t))/sigma²``. One step from ``t`` to ``s < t``:
``x ← x − (f·x − g²·score)·(t − s) + g·sqrt(t − s)·z``.

A final step into ``sigma = 0`` is the noise-free denoising step ``alpha·D(x, t)`` (Song et al.
2021, "denoise" at the last step). ``f`` is singular where ``alpha = 0`` (``t = 1`` of the linear /
rectified-flow and cosine paths): start those at ``t_max < 1``. Time convention: ``t = 0`` data.
"""

from __future__ import annotations

import torch

from scigen.core.samplers._common import bc, final_is_clean, mt, noise_like, sched

__all__ = ["euler_maruyama"]


def _sde_coefficients(path, t):
    if hasattr(path, "sde_coefficients"):
        return path.sde_coefficients(t)
    a, s, da, ds = sched(path, t, derivatives=True)
    f = da / a
    return f, 2.0 * s * ds - 2.0 * f * s * s


def euler_maruyama(denoise, x, times, *, hook, generator=None):
    """Euler-Maruyama discretisation of the reverse SDE (module docstring); 1 evaluation per step."""
    path = denoise.path
    n = times.shape[0] - 1
    clean = final_is_clean(path, times)
    f0, _ = _sde_coefficients(path, times[0])
    if not bool(torch.isfinite(f0).all()):
        raise ValueError(
            f"euler_maruyama: the SDE drift f = alpha'/alpha is infinite at times[0] = {float(times[0].max())} "
            "(alpha = 0 there); start at t_max < 1, e.g. time_grid(n, t_max=0.999, path=path)"
        )
    for i in range(n):
        t, s = times[i], times[i + 1]
        x0 = denoise(x, mt(t, x))
        hook(i, t, x, x0)
        a_t, s_t = sched(path, t)
        if clean and i == n - 1:
            x = bc(path.alpha(s), x) * x0
            continue
        f, g2 = _sde_coefficients(path, t)
        g2 = g2.clamp_min(0.0)
        dt = t - s  # > 0, we move backwards
        score = -(x - bc(a_t, x) * x0) / bc(s_t**2, x)
        drift = bc(f, x) * x - bc(g2, x) * score
        x = x - bc(dt, x) * drift + bc(torch.sqrt(g2 * dt), x) * noise_like(x, generator)
    return x
