"""UniPC with the B(h) = e^h − 1 ("bh2") variant, data prediction (Zhao et al. 2023, Alg. 1-3).

Notation: ``lambda = log(alpha/sigma)``; a step goes from ``s0`` (state ``x``, denoiser output
``m0``) to ``t`` with ``h = lambda_t − lambda_s0 > 0``. Earlier outputs ``m_k`` at ``lambda_k`` give
``r_k = (lambda_k − lambda_s0)/h`` and ``D_k = (m_k − m0)/r_k``.

* UniP-p (predictor, Alg. 1 / Eq. 8 in data form):
  ``x_t = (sigma_t/sigma_s0)·x − alpha_t·(e^{−h} − 1)·m0 − alpha_t·B(h)·Σ_k rho_k·D_k``
  with ``B(h) = e^{−h} − 1`` (bh2 in data-prediction sign convention) and ``rho`` solving
  ``R rho = g`` where ``R[i, k] = r_k^i`` and ``g_i = i!·phi_{i+1}(−h)/B(h)``,
  ``phi_1(z) = (e^z − 1)/z``, ``phi_{k+1}(z) = (phi_k(z) − 1/k!)/z`` (we store ``h·phi`` as the
  paper's implementation does); for p = 2 the paper uses ``rho = 1/2``.
* UniC-p (corrector, Alg. 2): after the model is evaluated at the predicted ``x_t`` (output
  ``m_t``), the same formula is applied again from ``x`` with ``D_t = m_t − m0`` appended
  (``r = 1``); the corrected ``x_t`` is kept and ``m_t`` is reused for the next step, so the
  corrector costs no extra model evaluation. It is not applied after the final step.

The order warms up (1, 2, ...) and, with fewer than 15 steps, is lowered at the end
("lower_order_final", as in diffusers); a step into
``sigma = 0`` is ``alpha·m0``. Outputs at ``lambda = −inf`` (``alpha = 0``) are never used as history.
Time convention: ``t = 0`` data, ``t = 1`` noise.
"""

from __future__ import annotations

import math

import torch

from scigen.core.samplers._common import bc, half_log_snr, mt, sched

__all__ = ["unipc"]


def _g_vector(hh, b_h, p):
    """``g_i = (i)!·(h·phi_{i+1})/B(h)`` for ``i = 1..p`` (``hh = −h``); shape ``[B, p]``."""
    h_phi_k = torch.expm1(hh) / hh - 1.0
    out, fact = [], 1.0
    for i in range(1, p + 1):
        out.append(h_phi_k * fact / b_h)
        fact *= i + 1
        h_phi_k = h_phi_k / hh - 1.0 / fact
    return torch.stack(out, dim=-1)


def _update(x, lam0, lam_t, a_t, s_ratio, m0, hist, p, m_t=None):
    """One UniP (``m_t is None``) or UniC update of order ``p`` from ``(x, m0)`` at ``lam0`` to ``lam_t``.

    ``hist`` holds ``(lambda_k, m_k)`` older than ``s0``, most recent last (``p − 1`` are used).
    """
    h = lam_t - lam0
    hh = -h
    h_phi_1 = torch.expm1(hh)
    b_h = torch.expm1(hh)  # bh2
    x_new = bc(s_ratio, x) * x - bc(a_t * h_phi_1, x) * m0
    n_hist = p - 1
    rks = [(lam_k - lam0) / h for lam_k, _ in hist[len(hist) - n_hist :][::-1]] if n_hist > 0 else []
    d1s = [(m_k - m0) / bc(rk, x) for rk, (_, m_k) in zip(rks, hist[len(hist) - n_hist :][::-1], strict=True)]
    if m_t is None:  # predictor
        if n_hist == 0:
            return x_new
        if p == 2:
            rhos = [torch.full_like(h, 0.5)]
        else:
            g = _g_vector(hh, b_h, p)[:, :-1]
            r = torch.stack([torch.stack([rk**i for rk in rks], -1) for i in range(p - 1)], -2)
            rhos = list(torch.linalg.solve(r, g).unbind(-1))
        res = sum(bc(rho, x) * d for rho, d in zip(rhos, d1s, strict=True))
        return x_new - bc(a_t * b_h, x) * res
    # corrector
    d1s = d1s + [m_t - m0]
    if p == 1:
        rhos = [torch.full_like(h, 0.5)]
    else:
        rks = rks + [torch.ones_like(h)]
        g = _g_vector(hh, b_h, p)
        r = torch.stack([torch.stack([rk**i for rk in rks], -1) for i in range(p)], -2)
        rhos = list(torch.linalg.solve(r, g).unbind(-1))
    res = sum(bc(rho, x) * d for rho, d in zip(rhos, d1s, strict=True))
    return x_new - bc(a_t * b_h, x) * res


def unipc(
    denoise,
    x,
    times,
    *,
    hook,
    generator=None,
    order: int = 2,
    corrector: bool = True,
    lower_order_final: bool | None = None,
):
    """UniPC-p (bh2) with the UniC corrector; ``order`` 1-3 (default 2: UniP-2 + UniC).

    ``corrector=False`` gives UniP alone (for ``order=2`` that is DPM-Solver++(2M)).
    ``lower_order_final``: lower the order in the last steps; ``None`` = only with fewer than 15 steps.
    """
    if isinstance(order, bool) or not isinstance(order, int) or not 1 <= order <= 3:
        raise ValueError(f"order must be 1, 2 or 3, got {order!r}")
    path = denoise.path
    n = times.shape[0] - 1
    if lower_order_final is None:
        lower_order_final = n < 15
    hist: list[tuple[torch.Tensor, torch.Tensor]] = []  # (lambda, x0_hat), most recent last
    x_last = lam_last = p_last = None
    for i in range(n):
        t, s = times[i], times[i + 1]
        lam_t = half_log_snr(path, t)
        m = denoise(x, mt(t, x))
        hook(i, t, x, m)
        a_t, s_t = sched(path, t)
        if corrector and x_last is not None:
            _, s_last = sched(path, times[i - 1])
            x = _update(x_last, lam_last, lam_t, a_t, s_t / s_last, hist[-1][1], hist[:-1], p_last, m_t=m)
        hist.append((lam_t, m))
        hist = hist[-order:]
        n_finite = 0  # trailing entries with finite lambda usable as history
        for lam_k, _ in reversed(hist):
            if not bool(torch.isfinite(lam_k).all()):
                break
            n_finite += 1
        p = max(1, min(order, i + 1, n_finite, n - i if lower_order_final else math.inf))
        a_s, s_s = sched(path, s)
        if bool((s_s == 0).all()):
            x_next = bc(a_s, x) * m
        else:
            lam_s = half_log_snr(path, s)
            x_next = _update(x, lam_t, lam_s, a_s, s_s / s_t, m, hist[:-1], p)
        x_last, lam_last, p_last = x, lam_t, p
        x = x_next
    return x
