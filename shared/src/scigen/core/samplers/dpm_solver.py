"""DPM-Solver++(2M): the multistep second-order solver with data prediction (Lu et al. 2022b, Alg. 2).

With ``lambda = log(alpha/sigma)`` and ``h_i = lambda_{i+1} − lambda_i`` the step is
``x_{i+1} = (sigma_{i+1}/sigma_i)·x_i − alpha_{i+1}·(e^{−h_i} − 1)·D_i`` where
``D_i = (1 + 1/(2 r_i))·x̂0_i − (1/(2 r_i))·x̂0_{i−1}``, ``r_i = h_{i−1}/h_i`` (first step: ``D_0 = x̂0_0``).
It is exact for a denoiser constant in ``lambda`` up to second order. With fewer than 15 steps the final step is first order
("lower-order final", as in diffusers); into ``sigma = 0`` it is always ``alpha·x̂0``.
Time convention: ``t = 0`` data, ``t = 1`` noise; one model evaluation per step.
"""

from __future__ import annotations

import torch

from scigen.core.samplers._common import bc, half_log_snr, mt, sched

__all__ = ["dpmpp_2m"]


def dpmpp_2m(denoise, x, times, *, hook, generator=None, lower_order_final: bool | None = None):
    """DPM-Solver++(2M). ``lower_order_final``: first order in the last step; ``None`` (default) = only
    when there are fewer than 15 steps (diffusers' rule). A step into ``sigma = 0`` (``h = ∞``) is
    always ``alpha·x̂0``."""
    path = denoise.path
    n = times.shape[0] - 1
    if lower_order_final is None:
        lower_order_final = n < 15
    x0_prev = h_prev = None
    for i in range(n):
        t, s = times[i], times[i + 1]
        x0 = denoise(x, mt(t, x))
        hook(i, t, x, x0)
        _, s_t = sched(path, t)
        a_s, s_s = sched(path, s)
        h = half_log_snr(path, s) - half_log_snr(path, t)
        first_order = x0_prev is None or (lower_order_final and i == n - 1)
        if first_order:
            d = x0
        else:
            r = h_prev / h
            ok = torch.isfinite(r) & (r > 0)  # h_prev = ∞ (start at alpha = 0) -> first order
            r = torch.where(ok, r, torch.ones_like(r))
            c = torch.where(ok, 0.5 / r, torch.zeros_like(r))
            d = bc(1.0 + c, x) * x0 - bc(c, x) * x0_prev
        ratio = torch.where(s_s == 0, torch.zeros_like(s_s), s_s / s_t)
        x = bc(ratio, x) * x - bc(a_s * torch.expm1(-h), x) * d
        x0_prev, h_prev = x0, h
    return x
