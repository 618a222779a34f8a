"""Consistency training (Song et al. 2023; improved, "iCT", Song & Dhariwal 2023) in EDM noise levels.

Noise levels ``sigma`` are EDM/VE levels: ``x_sigma = x0 + sigma·z``. To use scigen's time
``t ∈ [0, 1]`` (0 = data), pair these with ``VEPath(sigma_min, sigma_max, "karras", rho)``:
``path.sigma(t)`` / ``path.t_from_sigma(sigma)`` map between them, and a uniform ``t`` grid is the
Karras discretisation below.

* :func:`consistency_scalings` — ``c_skip = σ_d²/((σ − σ_min)² + σ_d²)``,
  ``c_out = σ_d (σ − σ_min)/sqrt(σ_d² + σ²)``, ``c_in = 1/sqrt(σ² + σ_d²)`` (Song et al. 2023,
  App. C), so ``f(x, σ_min) = x`` holds exactly.
* :func:`karras_sigmas` — Karras et al. 2022 Eq. 5, ascending.
* :func:`ict_num_scales` — iCT's curriculum ``N(k) = min(s0·2^{⌊k/K'⌋}, s1) + 1``,
  ``K' = ⌊K / (log2⌊s1/s0⌋ + 1)⌋`` (iCT §3.4, Eq. 11).
* :func:`ict_step_probabilities` — lognormal step sampling ``p(σ_i) ∝ erf((ln σ_{i+1} − P_mean)/(√2 P_std))
  − erf((ln σ_i − P_mean)/(√2 P_std))`` with ``P_mean = −1.1``, ``P_std = 2`` (iCT §3.5).
* :func:`ict_step_weights` — ``λ(σ_i) = 1/(σ_{i+1} − σ_i)`` (iCT §3.1).
* :func:`pseudo_huber` — ``sqrt(‖x − y‖² + c²) − c`` with ``c = 0.00054·sqrt(d)`` (iCT §3.3);
  ``elementwise=True`` gives ``mean_j (sqrt((x_j − y_j)² + c²) − c)`` per sample instead (the same ``c``;
  Inverse Flow's code applies it per entry, Zhang & Zhou 2025).
* :func:`consistency_training_loss` — ``E[λ(σ_i) d(f_θ(x0 + σ_{i+1} z, σ_{i+1}), f_θ⁻(x0 + σ_i z, σ_i))]``
  with the teacher ``θ⁻ = stopgrad(θ)`` (iCT drops the EMA teacher).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from scigen.core import streams
from scigen.core.losses.reductions import masked_mean
from scigen.core.validation import as_tensor, check_finite_positive, check_num_steps, check_same_shape

__all__ = [
    "consistency_scalings",
    "consistency_training_loss",
    "ict_num_scales",
    "ict_step_probabilities",
    "ict_step_weights",
    "karras_sigmas",
    "pseudo_huber",
]


def consistency_scalings(
    sigma: Tensor, sigma_data: float = 0.5, sigma_min: float = 0.002
) -> tuple[Tensor, Tensor, Tensor]:
    """``(c_skip, c_out, c_in)`` at noise level ``sigma``; ``f = c_skip·x + c_out·F(c_in·x, σ)``."""
    sigma = as_tensor(sigma, "sigma")
    sd = check_finite_positive(sigma_data, "sigma_data")
    smin = check_finite_positive(sigma_min, "sigma_min", allow_zero=True)
    c_skip = sd**2 / ((sigma - smin) ** 2 + sd**2)
    c_out = sd * (sigma - smin) / torch.sqrt(sd**2 + sigma**2)
    c_in = 1.0 / torch.sqrt(sigma**2 + sd**2)
    return c_skip, c_out, c_in


def karras_sigmas(n: int, sigma_min: float = 0.002, sigma_max: float = 80.0, rho: float = 7.0) -> Tensor:
    """``σ_i = (σ_min^{1/ρ} + (i−1)/(n−1)·(σ_max^{1/ρ} − σ_min^{1/ρ}))^ρ``, ``i = 1…n`` (ascending, float64)."""
    n = check_num_steps(n, "n")
    if n < 2:
        raise ValueError(f"n must be >= 2 (both ends), got {n}")
    lo = check_finite_positive(sigma_min, "sigma_min", allow_zero=True) ** (1 / rho)
    hi = check_finite_positive(sigma_max, "sigma_max") ** (1 / check_finite_positive(rho, "rho"))
    if not hi > lo:
        raise ValueError(f"sigma_max must exceed sigma_min, got {sigma_min}, {sigma_max}")
    i = torch.arange(n, dtype=torch.float64)
    return (lo + i / (n - 1) * (hi - lo)) ** rho


def ict_num_scales(step: int, total_steps: int, s0: int = 10, s1: int = 1280) -> int:
    """iCT discretisation curriculum ``N(k)`` (number of noise levels at training step ``k``)."""
    if not (isinstance(step, int) and step >= 0):
        raise ValueError(f"step must be an int >= 0, got {step!r}")
    total_steps = check_num_steps(total_steps, "total_steps")
    if not 1 <= s0 <= s1:
        raise ValueError(f"need 1 <= s0 <= s1, got s0={s0}, s1={s1}")
    k_prime = max(1, math.floor(total_steps / (math.log2(math.floor(s1 / s0)) + 1)))
    return min(s0 * 2 ** (step // k_prime), s1) + 1


def ict_step_probabilities(sigmas: Tensor, p_mean: float = -1.1, p_std: float = 2.0) -> Tensor:
    """Lognormal probabilities of the ``N − 1`` adjacent pairs ``(σ_i, σ_{i+1})`` of ascending ``sigmas``."""
    s = _check_sigmas(sigmas)
    cdf = torch.erf((torch.log(s) - p_mean) / (math.sqrt(2) * check_finite_positive(p_std, "p_std")))
    p = cdf[1:] - cdf[:-1]
    return p / p.sum()


def ict_step_weights(sigmas: Tensor) -> Tensor:
    """``λ(σ_i) = 1/(σ_{i+1} − σ_i)`` for the ``N − 1`` adjacent pairs."""
    s = _check_sigmas(sigmas)
    return 1.0 / (s[1:] - s[:-1])


def _check_sigmas(sigmas) -> Tensor:
    s = as_tensor(sigmas, "sigmas")
    if s.ndim != 1 or s.numel() < 2 or bool((s[1:] <= s[:-1]).any()) or bool((s <= 0).any()):
        raise ValueError("sigmas must be a 1-D, strictly increasing, positive tensor with >= 2 levels")
    return s


def pseudo_huber(x: Tensor, y: Tensor, c: float | None = None, mask: Tensor | None = None, *,
                 elementwise: bool = False) -> Tensor:
    """Per-sample ``sqrt(‖x − y‖² + c²) − c`` (shape ``[B]``); ``c = 0.00054·sqrt(d)`` by default,
    ``d`` = number of (valid) entries per sample. ``elementwise=True``: per-sample mean over the (valid)
    entries of ``sqrt((x_j − y_j)² + c²) − c``, with the same ``c``."""
    check_same_shape(x, y, "x", "y")
    sq = (x - y) ** 2
    if mask is not None and (not isinstance(mask, Tensor) or mask.dtype != torch.bool):
        raise TypeError(
            f"mask must be a boolean tensor (True = counts), got {getattr(mask, 'dtype', type(mask))}"
        )
    if mask is not None:
        sq = torch.where(mask.expand(sq.shape), sq, torch.zeros((), dtype=sq.dtype, device=sq.device))
        d = mask.expand(sq.shape).reshape(sq.shape[0], -1).sum(1).to(sq.dtype)
    else:
        d = torch.full((sq.shape[0],), sq[0].numel(), dtype=sq.dtype, device=sq.device)
    cc = 0.00054 * torch.sqrt(d) if c is None else torch.full_like(d, check_finite_positive(c, "c"))
    if elementwise:
        per = torch.sqrt(sq.reshape(sq.shape[0], -1) + cc[:, None] ** 2) - cc[:, None]
        if mask is not None:
            per = per * mask.expand(x.shape).reshape(x.shape[0], -1).to(per.dtype)
        return per.sum(1) / d.clamp(min=1)
    sq = sq.reshape(sq.shape[0], -1).sum(1)
    return torch.sqrt(sq + cc**2) - cc


def consistency_training_loss(
    consistency_fn: Callable[[Tensor, Tensor], Tensor],
    x0: Tensor,
    sigmas: Tensor,
    *,
    indices: Tensor | None = None,
    noise: Tensor | None = None,
    mask: Tensor | None = None,
    c: float | None = None,
    p_mean: float = -1.1,
    p_std: float = 2.0,
    generator: torch.Generator | None = None,
    elementwise: bool = False,
) -> Tensor:
    """iCT loss, a scalar: the batch mean of ``λ(σ_i)·pseudo_huber(student, teacher)``.

    Args:
        consistency_fn: ``f(x [B, ...], sigma [B]) -> x0 estimate`` (build it with
            :func:`consistency_scalings`); it is called twice, the teacher under ``torch.no_grad``.
        sigmas: ascending noise levels (e.g. ``karras_sigmas(ict_num_scales(k, K))``).
        indices: pair indices ``i ∈ [0, N − 2]`` per sample; drawn lognormally when None.
        noise: shared ``z`` for both levels; drawn when None.
        elementwise: the distance is :func:`pseudo_huber` per entry, averaged (``elementwise=True``).
    """
    if not isinstance(x0, Tensor) or x0.ndim < 1 or not x0.is_floating_point():
        raise ValueError(f"x0 must be a floating tensor of shape [B, ...], got {getattr(x0, 'shape', x0)}")
    s = _check_sigmas(sigmas).to(device=x0.device, dtype=x0.dtype)
    B = x0.shape[0]
    if indices is None:
        p = ict_step_probabilities(s.double(), p_mean, p_std).to(x0.device)
        indices = torch.multinomial(p, B, replacement=True, generator=generator)
    elif not isinstance(indices, Tensor) or indices.shape != (B,) or indices.is_floating_point():
        raise ValueError(f"indices must be an integer tensor of shape [{B}]")
    elif int(indices.min()) < 0 or int(indices.max()) > s.numel() - 2:
        raise ValueError(f"indices must lie in [0, {s.numel() - 2}]")
    if noise is None:
        noise = streams.randn(x0.shape, generator=generator, device=x0.device, dtype=x0.dtype)
    check_same_shape(x0, noise, "x0", "noise")
    view = (-1,) + (1,) * (x0.ndim - 1)
    s_lo, s_hi = s[indices], s[indices + 1]
    student = consistency_fn(x0 + s_hi.reshape(view) * noise, s_hi)
    with torch.no_grad():
        teacher = consistency_fn(x0 + s_lo.reshape(view) * noise, s_lo)
    check_same_shape(x0, student, "x0", "consistency_fn output")
    dist = pseudo_huber(student, teacher.detach(), c=c, mask=mask, elementwise=elementwise)
    return masked_mean(dist / (s_hi - s_lo))
