"""Variance-exploding / EDM paths: ``alpha(t) = 1``, ``sigma(t)`` from ``sigma_min`` to ``sigma_max``.

Time convention: ``t = 0`` is (nearly clean) data at ``sigma_min``, ``t = 1`` is the prior
``N(0, sigma_max² I)`` (up to the data's own scale).

``schedule="geometric"`` (Song et al. 2021, VE-SDE, Eq. 9):
``sigma(t) = sigma_min · (sigma_max / sigma_min)^t``.

``schedule="karras"`` (Karras et al. 2022, Eq. 5 with ``rho``):
``sigma(t) = (sigma_min^{1/rho} + t·(sigma_max^{1/rho} − sigma_min^{1/rho}))^rho``, so a uniform
grid in ``t`` is exactly EDM's time discretisation; ``sigma_min = 0`` is allowed here.

EDM itself uses the noise level ``sigma`` as its time variable; :meth:`VEPath.t_from_sigma` and
:meth:`VEPath.sigma` go between the two. For any path, ``path.edm_sigma(t) = sigma/alpha`` is the
equivalent EDM noise level.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from scigen.core.paths.gaussian import GaussianPath
from scigen.core.validation import as_tensor, check_finite_positive

__all__ = ["VEPath"]


class VEPath(GaussianPath):
    """``x_t = x0 + sigma(t)·eps`` with a geometric or Karras-``rho`` noise schedule."""

    def __init__(
        self,
        sigma_min: float = 0.002,
        sigma_max: float = 80.0,
        schedule: str = "karras",
        rho: float = 7.0,
    ):
        if schedule not in ("geometric", "karras"):
            raise ValueError(f"schedule must be 'geometric' or 'karras', got {schedule!r}")
        self.schedule = schedule
        self.sigma_min = check_finite_positive(sigma_min, "sigma_min", allow_zero=schedule == "karras")
        self.sigma_max = check_finite_positive(sigma_max, "sigma_max")
        if self.sigma_max <= self.sigma_min:
            raise ValueError(
                f"sigma_max must be > sigma_min, got sigma_min={sigma_min}, sigma_max={sigma_max}"
            )
        self.rho = check_finite_positive(rho, "rho")
        self._lo = self.sigma_min ** (1 / self.rho)
        self._hi = self.sigma_max ** (1 / self.rho)
        self._log_ratio = math.log(self.sigma_max / self.sigma_min) if schedule == "geometric" else None

    def alpha(self, t):
        return torch.ones_like(as_tensor(t, "t"))

    def d_alpha(self, t):
        return torch.zeros_like(as_tensor(t, "t"))

    def sigma(self, t):
        t = as_tensor(t, "t")
        if self.schedule == "geometric":
            return self.sigma_min * torch.exp(t * self._log_ratio)
        return (self._lo + t * (self._hi - self._lo)) ** self.rho

    def d_sigma(self, t):
        t = as_tensor(t, "t")
        if self.schedule == "geometric":
            return self.sigma(t) * self._log_ratio
        return self.rho * (self._lo + t * (self._hi - self._lo)) ** (self.rho - 1) * (self._hi - self._lo)

    def log_snr(self, t):
        return -2.0 * torch.log(self.sigma(t))

    def t_from_sigma(self, sigma: Tensor) -> Tensor:
        """Inverse of :meth:`sigma`: the ``t`` whose noise level is ``sigma`` (clamped to [0, 1])."""
        s = as_tensor(sigma, "sigma")
        if self.schedule == "geometric":
            t = torch.log(s / self.sigma_min) / self._log_ratio
        else:
            t = (s ** (1 / self.rho) - self._lo) / (self._hi - self._lo)
        return t.clamp(0.0, 1.0)

    def t_from_log_snr(self, log_snr):
        return self.t_from_sigma(torch.exp(-0.5 * as_tensor(log_snr, "log_snr")))

    def t_from_edm_sigma(self, edm_sigma):
        return self.t_from_sigma(edm_sigma)
