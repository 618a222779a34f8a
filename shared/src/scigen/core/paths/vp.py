"""Variance-preserving paths: ``alpha(t)² + sigma(t)² = 1`` (t = 0 data, t = 1 noise).

* :class:`VPLinear` — the continuous DDPM / VP-SDE (Song et al. 2021, Eq. 11 and App. B):
  ``beta(t) = beta_min + t·(beta_max − beta_min)``,
  ``log alpha(t) = −¼ t² (beta_max − beta_min) − ½ t beta_min``. DDPM's discrete linear betas
  ``1e-4 … 0.02`` over ``T = 1000`` steps correspond to ``beta_min = 0.1``, ``beta_max = 20``.
* :class:`VPCosine` — Nichol & Dhariwal 2021, Eq. 17, continuous in ``t``:
  ``alpha(t) = cos(θ(t)) / cos(θ(0))`` with ``θ(t) = (t + s)/(1 + s) · π/2`` (offset ``s``).
* :class:`VPPolynomial` — the "polynomial_p" schedule of EDM for molecules (Hoogeboom et al.
  2022, App. B; used by UniGEM with ``p = 2`` and precision ``s = 1e-5``):
  ``alpha(t)² = (1 − 2s)(1 − t^p)² + s``. Their code additionally clips the ratio
  ``alpha²_k / alpha²_{k−1} ≥ 0.001`` on the discrete grid; that clipping is discrete-only and is
  reproduced exactly by :meth:`DiscreteSchedule.polynomial`. The precision offset ``s`` keeps
  ``sigma(0) = sqrt(s) > 0`` and ``alpha(1) = sqrt(s) > 0``.

``sigma`` is always computed from a cancellation-free expression, never as ``sqrt(1 − alpha²)``
of a rounded ``alpha``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from scigen.core.paths.gaussian import GaussianPath
from scigen.core.validation import as_tensor, check_finite_positive

__all__ = ["VPCosine", "VPLinear", "VPPolynomial"]


class _VP(GaussianPath):
    """Shared VP algebra: ``sigma = sqrt(1 − alpha²)``, ``sigma' = −alpha·alpha'/sigma``."""

    def d_sigma(self, t: Tensor) -> Tensor:
        t = as_tensor(t, "t")
        return -self.alpha(t) * self.d_alpha(t) / self.sigma(t)


class VPLinear(_VP):
    """Continuous DDPM path with linear ``beta(t)`` (Song et al. 2021, VP-SDE)."""

    def __init__(self, beta_min: float = 0.1, beta_max: float = 20.0):
        self.beta_min = check_finite_positive(beta_min, "beta_min", allow_zero=True)
        self.beta_max = check_finite_positive(beta_max, "beta_max")
        if self.beta_max < self.beta_min:
            raise ValueError(f"beta_max must be >= beta_min, got beta_min={beta_min}, beta_max={beta_max}")

    def beta(self, t: Tensor) -> Tensor:
        """``beta(t) = beta_min + t (beta_max − beta_min)``."""
        t = as_tensor(t, "t")
        return self.beta_min + t * (self.beta_max - self.beta_min)

    def log_alpha(self, t: Tensor) -> Tensor:
        """``log alpha(t) = −½ ∫_0^t beta = −¼ t²(beta_max − beta_min) − ½ t beta_min``."""
        t = as_tensor(t, "t")
        return -0.25 * t * t * (self.beta_max - self.beta_min) - 0.5 * t * self.beta_min

    def alpha(self, t):
        return torch.exp(self.log_alpha(t))

    def sigma(self, t):
        return torch.sqrt(-torch.expm1(2.0 * self.log_alpha(t)))

    def d_alpha(self, t):
        return -0.5 * self.beta(t) * self.alpha(t)

    def log_snr(self, t):
        la2 = 2.0 * self.log_alpha(t)
        return la2 - torch.log(-torch.expm1(la2))

    def t_from_log_snr(self, log_snr):
        lam = as_tensor(log_snr, "log_snr")
        c = 0.5 * F.softplus(-lam)  # −log alpha = ½ softplus(−λ) since alpha² = sigmoid(λ)
        a = 0.25 * (self.beta_max - self.beta_min)
        b = 0.5 * self.beta_min
        # root of a t² + b t − c = 0, written without cancellation
        t = 2.0 * c / (b + torch.sqrt(b * b + 4.0 * a * c))
        return t.clamp(0.0, 1.0)


class VPCosine(_VP):
    """Nichol & Dhariwal (2021) cosine path, continuous in ``t``; ``alpha(1) = 0`` exactly."""

    def __init__(self, s: float = 0.008):
        self.s = check_finite_positive(s, "s", allow_zero=True)
        self._theta0 = self.s / (1.0 + self.s) * math.pi / 2

    def _theta(self, t: Tensor) -> Tensor:
        return (as_tensor(t, "t") + self.s) / (1.0 + self.s) * (math.pi / 2)

    def alpha(self, t):
        # cos(θ) written as sin(π/2 − θ) = sin((1 − t)/(1 + s)·π/2): exactly 0 at t = 1
        t = as_tensor(t, "t")
        return torch.sin((1.0 - t) / (1.0 + self.s) * (math.pi / 2)) / math.cos(self._theta0)

    def sigma(self, t):
        # 1 − cos²θ/cos²θ0 = (cos²θ0 − cos²θ)/cos²θ0 = sin(θ−θ0) sin(θ+θ0)/cos²θ0
        th = self._theta(t)
        val = torch.sin(th - self._theta0) * torch.sin(th + self._theta0)
        return torch.sqrt(val.clamp_min(0.0)) / math.cos(self._theta0)

    def d_alpha(self, t):
        t = as_tensor(t, "t")
        sin_theta = torch.cos((1.0 - t) / (1.0 + self.s) * (math.pi / 2))  # sin θ = cos(π/2 − θ)
        return -sin_theta * (math.pi / 2) / (1.0 + self.s) / math.cos(self._theta0)

    def t_from_log_snr(self, log_snr):
        lam = as_tensor(log_snr, "log_snr")
        alpha = torch.sqrt(torch.sigmoid(lam))
        theta = torch.arccos((alpha * math.cos(self._theta0)).clamp(-1.0, 1.0))
        return (theta * 2.0 / math.pi * (1.0 + self.s) - self.s).clamp(0.0, 1.0)


class VPPolynomial(_VP):
    """Polynomial VP path ``alpha² = (1 − 2s)(1 − t^p)² + s`` (Hoogeboom et al. 2022, "polynomial_p")."""

    def __init__(self, power: float = 2.0, precision: float = 1e-5):
        self.power = check_finite_positive(power, "power")
        self.precision = check_finite_positive(precision, "precision", allow_zero=True)
        if self.precision >= 0.5:
            raise ValueError(
                f"precision must be < 0.5 (it is the floor of alpha² and sigma²), got {precision}"
            )

    def alpha(self, t):
        t = as_tensor(t, "t")
        s = self.precision
        return torch.sqrt((1 - 2 * s) * (1 - t**self.power) ** 2 + s)

    def sigma(self, t):
        # 1 − alpha² = (1 − 2s)·t^p (2 − t^p) + s: no cancellation
        t = as_tensor(t, "t")
        s = self.precision
        tp = t**self.power
        return torch.sqrt((1 - 2 * s) * tp * (2 - tp) + s)

    def d_alpha(self, t):
        t = as_tensor(t, "t")
        s, p = self.precision, self.power
        d_alpha2 = (1 - 2 * s) * 2 * (1 - t**p) * (-p * t ** (p - 1))
        return d_alpha2 / (2 * self.alpha(t))

    def t_from_log_snr(self, log_snr):
        lam = as_tensor(log_snr, "log_snr")
        s = self.precision
        u = ((torch.sigmoid(lam) - s) / (1 - 2 * s)).clamp(0.0, 1.0)  # (1 − t^p)²
        return (1 - torch.sqrt(u)).clamp(0.0, 1.0) ** (1.0 / self.power)
