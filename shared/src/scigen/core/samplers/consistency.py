"""Consistency-model sampling, one- and multi-step (Song et al. 2023, Alg. 1).

The model is the consistency function ``f(x_t, t) ≈ x0`` (``prediction="x0"``). With a decreasing
grid ``times = [T, t_1, ..., t_N]``: ``x = f(x_T, T)``; then for each ``t_n`` with ``sigma(t_n) > 0``
re-noise with the path's forward marginal ``x_{t_n} = alpha(t_n)·x + sigma(t_n)·z`` (Alg. 1 writes
``x + sqrt(t_n² − eps²)·z`` for its VE path whose ``f`` is the identity at ``eps``) and set
``x = f(x_{t_n}, t_n)``. ``times = [T]`` or ``[T, 0]`` is one-step sampling; a time with ``sigma = 0``
adds nothing. Returns the last ``f`` output. Time convention: ``t = 0`` data, ``t = 1`` noise.
"""

from __future__ import annotations

from scigen.core.samplers._common import bc, mt, noise_like, sched

__all__ = ["consistency"]


def consistency(denoise, x, times, *, hook, generator=None):
    """Multistep consistency sampling (Song et al. 2023, Alg. 1); ``len(times)`` evaluations at most."""
    path = denoise.path
    t = times[0]
    x0 = denoise(x, mt(t, x))
    hook(0, t, x, x0)
    for i in range(1, times.shape[0]):
        t = times[i]
        a, s = sched(path, t)
        if bool((s == 0).all()):
            continue
        x = bc(a, x0) * x0 + bc(s, x0) * noise_like(x0, generator)
        x0 = denoise(x, mt(t, x))
        hook(i, t, x, x0)
    return x0
