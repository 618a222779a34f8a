"""Per-time loss weights for denoising losses, expressed for any prediction target.

A weighting is defined on the ``x0`` (denoiser) error and carried to the target's space: at fixed
``x_t`` each kind is affine in ``x0``, ``Δkind = c_kind·Δx0`` with (``a = alpha``, ``s = sigma``)

    c_x0 = 1,  c_eps = −a/s,  c_v = −(a² + s²)/s,  c_velocity = a' − s'·a/s,  c_score = a/s²,

so weighting ``w_x0`` on the ``x0`` error equals ``w_x0 / c_kind²`` on the ``kind`` error.

* ``"uniform"``: weight 1 on the chosen target's error.
* ``"min_snr"``: ``w_x0 = min(SNR, gamma)`` (Hang et al. 2023, Eq. 6; ``gamma = 5``); for a VP path
  this gives ``min(SNR, γ)/SNR`` for ``eps`` and ``min(SNR, γ)/(SNR + 1)`` for ``v``.
* ``"edm"``: ``w_x0 = (σ² + σ_data²)/(σ·σ_data)²`` with ``σ = sigma/alpha`` the EDM noise level
  (Karras et al. 2022, Eq. 8 and Table 1, "λ(σ)").
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from scigen.core.paths import GaussianPath, check_kind

__all__ = ["WEIGHTINGS", "loss_weight"]

WEIGHTINGS = ("uniform", "min_snr", "edm")


def loss_weight(
    path: GaussianPath,
    t: Tensor,
    target: str = "eps",
    weighting: str | Callable[[Tensor], Tensor] = "uniform",
    *,
    gamma: float = 5.0,
    sigma_data: float = 0.5,
) -> Tensor:
    """Weights ``[B]`` for the squared error of ``target`` at times ``t`` (``[B]``, 0 = data).

    ``weighting`` may also be a callable ``t -> [B]`` weights, used as is.
    """
    check_kind(target, "target")
    if callable(weighting):
        w = weighting(t)
        if not isinstance(w, Tensor) or w.shape != t.shape:
            raise ValueError(f"a weighting callable must return a tensor of shape {tuple(t.shape)}")
        return w
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {WEIGHTINGS} or a callable, got {weighting!r}")
    if weighting == "uniform":
        return torch.ones_like(t)
    lam = path.log_snr(t)
    if weighting == "min_snr":
        if not gamma > 0:
            raise ValueError(f"gamma must be > 0, got {gamma}")
        if target == "eps":  # min(snr, γ)/snr, finite at snr = 0 and snr = inf
            return torch.clamp(gamma * torch.exp(-lam), max=1.0)
        w_x0 = torch.clamp(torch.exp(lam), max=gamma)
    else:
        if not sigma_data > 0:
            raise ValueError(f"sigma_data must be > 0, got {sigma_data}")
        sig2 = torch.exp(-lam)  # EDM σ² = sigma²/alpha²
        if target == "eps":  # λ(σ)·σ²
            return (sig2 + sigma_data**2) / sigma_data**2
        w_x0 = (sig2 + sigma_data**2) / (sig2 * sigma_data**2)
    if target == "x0":
        return w_x0
    a, s = path.alpha(t), path.sigma(t)
    if target == "v":
        c = (a * a + s * s) / s
    elif target == "velocity":
        c = path.d_alpha(t) - path.d_sigma(t) * a / s
    else:  # score
        c = a / (s * s)
    return w_x0 / (c * c)
