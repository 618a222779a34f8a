"""Straight-line paths: rectified flow and OT-CFM (t = 0 data, t = 1 noise).

* :class:`LinearPath` — rectified flow (Liu et al. 2023) / "CondOT" with ``sigma_min = 0``:
  ``x_t = (1 − t)·x0 + t·eps``, velocity ``eps − x0``.
* :class:`OTCFMPath` — Lipman et al. 2023, Eq. 20–23, OT conditional path with ``sigma_min``:
  ``x_t = (1 − t)·x0 + (sigma_min + (1 − sigma_min)·t)·eps``.

Conversion from Lipman's convention (noise at ``s = 0``, data at ``s = 1``,
``x_s = s·x1 + (1 − (1 − sigma_min)·s)·x0`` with ``x1`` data and ``x0`` noise): substitute
``s = 1 − t``. Then the data coefficient is ``1 − t`` and the noise coefficient is
``1 − (1 − sigma_min)(1 − t) = sigma_min + (1 − sigma_min)·t`` — this class. Lipman's velocity
``u_s`` equals ``−velocity(t)`` at ``t = 1 − s`` (see :func:`scigen.core.paths.reverse_velocity`).
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core.paths.gaussian import GaussianPath
from scigen.core.validation import as_tensor, check_finite_positive

__all__ = ["LinearPath", "OTCFMPath"]


class OTCFMPath(GaussianPath):
    """``alpha = 1 − t``, ``sigma = sigma_min + (1 − sigma_min)·t`` (Lipman et al. 2023, reversed)."""

    def __init__(self, sigma_min: float = 0.0):
        self.sigma_min = check_finite_positive(sigma_min, "sigma_min", allow_zero=True)
        if self.sigma_min >= 1.0:
            raise ValueError(f"sigma_min must be < 1, got {sigma_min}")

    def alpha(self, t):
        return 1.0 - as_tensor(t, "t")

    def sigma(self, t):
        return self.sigma_min + (1.0 - self.sigma_min) * as_tensor(t, "t")

    def d_alpha(self, t):
        return torch.full_like(as_tensor(t, "t"), -1.0)

    def d_sigma(self, t):
        return torch.full_like(as_tensor(t, "t"), 1.0 - self.sigma_min)

    def t_from_log_snr(self, log_snr: Tensor) -> Tensor:
        # alpha/sigma = r = exp(λ/2):  1 − t = r (sigma_min + (1 − sigma_min) t)
        lam = as_tensor(log_snr, "log_snr")
        if self.sigma_min == 0.0:
            return torch.sigmoid(-0.5 * lam)
        r = torch.exp(0.5 * lam)
        return ((1.0 - r * self.sigma_min) / (1.0 + r * (1.0 - self.sigma_min))).clamp(0.0, 1.0)


class LinearPath(OTCFMPath):
    """Rectified flow: ``x_t = (1 − t)·x0 + t·eps`` (Liu et al. 2023); ``log_snr = 2 log((1 − t)/t)``."""

    def __init__(self):
        super().__init__(sigma_min=0.0)

    def log_snr(self, t):
        t = as_tensor(t, "t")
        return 2.0 * (torch.log1p(-t) - torch.log(t))

    def __repr__(self) -> str:
        return "LinearPath()"
