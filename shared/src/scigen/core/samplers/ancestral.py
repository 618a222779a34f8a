"""DDPM ancestral sampling and DDIM for a general Gaussian path (``t = 0`` data, ``t = 1`` noise).

For ``s < t`` write ``alpha_{t|s} = alpha_t / alpha_s`` and
``sigma²_{t|s} = sigma_t² − alpha_{t|s}²·sigma_s²`` (the transition ``q(x_t | x_s)``, Kingma et al.
2021, Eq. 2-4). The posterior ``q(x_s | x_t, x0)`` is Gaussian with

* mean ``(alpha_{t|s}·sigma_s²/sigma_t²)·x_t + (alpha_s·sigma²_{t|s}/sigma_t²)·x0``,
* variance ``sigma²_{t|s}·sigma_s²/sigma_t²`` (Kingma et al. 2021, Eq. 26-28; Ho et al. 2020, Eq. 7
  for the discrete VP case).

DDPM ancestral sampling draws from it with ``x0 = D(x_t, t)``. DDIM (Song et al. 2021a, Eq. 12)
generalised to any path is ``x_s = alpha_s·x̂0 + sqrt(sigma_s² − c²)·ε̂ + c·z`` with
``ε̂ = (x_t − alpha_t·x̂0)/sigma_t`` and ``c = eta·sigma_s·sigma_{t|s}/sigma_t``; ``eta = 0`` is the
deterministic DDIM (first-order solver of the probability-flow ODE), ``eta = 1`` reproduces the
DDPM posterior exactly. A step into ``sigma_s = 0`` returns ``alpha_s·x̂0`` in both (no noise).

**Reverse variance with the denoiser's error** (``ddpm(eps_error=Γ)``; Analytic-DPM, Bao et al. ICLR
2022, Thm. 1). The posterior variance alone is right only if ``x0`` were known. The exact reverse kernel
``p(x_s | x_t) = ∫ q(x_s | x_t, x0) p(x0 | x_t) dx0`` has, by the law of total variance, variance
``posterior variance + c0²·Var(x0 | x_t)`` with ``c0 = alpha_s·sigma²_{t|s}/sigma_t²`` the ``x0``
coefficient of the mean, and ``Var(x0 | x_t) = (sigma_t/alpha_t)²·Var(eps | x_t)``. For the MSE-optimal
``eps``-prediction ``E[(eps − ε̂)²] = E Var(eps | x_t)``, so ``Γ(t)``, the measured per-entry mean squared
``eps`` error at ``t``, gives ``c0² (sigma_t/alpha_t)² Γ(t)``. With the exact denoiser on Gaussian data
the chain then samples the data law exactly; without the term it under-disperses (tested).
"""

from __future__ import annotations

import torch

from scigen.core.samplers._common import bc, mt, noise_like, sched

__all__ = ["ddim", "ddpm"]


def _transition(path, t, s):
    a_t, s_t = sched(path, t)
    a_s, s_s = sched(path, s)
    a_ts = a_t / a_s
    var_ts = (s_t**2 - a_ts**2 * s_s**2).clamp_min(0.0)
    return a_t, s_t, a_s, s_s, a_ts, var_ts


def ddpm(denoise, x, times, *, hook, generator=None, eps_error=None):
    """Ancestral sampling from the posterior ``q(x_s | x_t, x0 = D(x_t, t))`` (module docstring).

    ``eps_error``: ``None`` (the posterior variance), or a callable ``t [Bt] (float64) -> [Bt]`` giving
    ``Γ(t) = E[(eps − ε̂(x_t, t))²]``, which adds the Analytic-DPM term (module docstring) where ``sigma_s > 0``."""
    if eps_error is not None and not callable(eps_error):
        raise TypeError(f"eps_error must be a callable t -> E[(eps - eps_hat)^2] or None, got {type(eps_error).__name__}")
    path = denoise.path
    for i in range(times.shape[0] - 1):
        t, s = times[i], times[i + 1]
        x0 = denoise(x, mt(t, x))
        hook(i, t, x, x0)
        a_t, s_t, a_s, s_s, a_ts, var_ts = _transition(path, t, s)
        mean = bc(a_ts * s_s**2 / s_t**2, x) * x + bc(a_s * var_ts / s_t**2, x) * x0
        var = var_ts * s_s**2 / s_t**2
        if eps_error is not None:
            gamma = torch.as_tensor(eps_error(t), dtype=torch.float64, device=var.device)
            var = var + torch.where(s_s > 0, (a_s * var_ts / s_t**2) ** 2 * (s_t / a_t) ** 2 * gamma, 0.0)
        std = torch.sqrt(var)
        x = mean
        if bool((std > 0).any()):
            x = x + bc(std, x) * noise_like(x, generator)
    return x


def ddim(denoise, x, times, *, hook, generator=None, eta: float = 0.0):
    """DDIM with stochasticity ``eta ∈ [0, 1]`` (Song et al. 2021a, Eq. 12 and 16)."""
    eta = float(eta)
    if not 0.0 <= eta <= 1.0:
        raise ValueError(f"eta must lie in [0, 1] (0: deterministic DDIM, 1: DDPM posterior), got {eta}")
    path = denoise.path
    for i in range(times.shape[0] - 1):
        t, s = times[i], times[i + 1]
        x0 = denoise(x, mt(t, x))
        hook(i, t, x, x0)
        a_t, s_t, a_s, s_s, _, var_ts = _transition(path, t, s)
        eps = (x - bc(a_t, x) * x0) / bc(s_t, x)
        c = eta * s_s * torch.sqrt(var_ts) / s_t
        x = bc(a_s, x) * x0 + bc(torch.sqrt((s_s**2 - c**2).clamp_min(0.0)), x) * eps
        if eta > 0 and bool((c > 0).any()):
            x = x + bc(c, x) * noise_like(x, generator)
    return x
