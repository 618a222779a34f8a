"""A :class:`DiscreteSchedule` as a continuous-time Gaussian path, so every engine solver can sample it.

``DiscreteSchedulePath(schedule)`` (or ``schedule.as_path()``) is the VP path whose
``alpha(k/T) = sqrt(ᾱ_k)`` and ``sigma(k/T) = sqrt(1 − ᾱ_k)`` at every step ``k = 0 … T``
(``t = k/T``, t = 0 data, t = 1 noise), including ``ᾱ_0 < 1`` of the polynomial schedule (then
``sigma(0) > 0``). Between grid points ``ℓ(t) = log ᾱ(t)`` is the monotone cubic Hermite
interpolant of the ``log ᾱ_k`` (Fritsch & Carlson 1980; slopes: harmonic mean of the neighbouring
secants, one-sided secant at the ends, as in PCHIP), so ``ℓ`` is C¹ and strictly decreasing:

* ``alpha = exp(ℓ/2)``, ``sigma = sqrt(−expm1(ℓ))`` (no cancellation), so ``alpha² + sigma² = 1``;
* ``alpha' = ½ ℓ' alpha``, ``sigma' = −½ ℓ' ᾱ / sigma`` with the analytic ``ℓ'`` of the cubic;
* ``log_snr = ℓ − log(−expm1(ℓ))``; its inverse finds the segment by search and the point in it by
  bisection of the cubic.

Why cubic and not DPM-Solver's piecewise-linear ``log alpha`` (Lu et al. 2022a, App. D.2): the
probability-flow ODE of a piecewise-linear ``ℓ`` has a velocity that jumps at every grid point, so
Heun and RK4, which evaluate it at step ends, lose their order on the integer grid. Solvers that
only use ``alpha, sigma`` at the grid times (``ddpm``, ``ddim``, ``dpmpp_2m``, ``unipc``) give the
same result for any interpolation through the grid points. Tables are float64; results take
``t``'s floating dtype. Integer sampling grids: :meth:`DiscreteSchedule.time_grid`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from scigen.core.paths.gaussian import GaussianPath
from scigen.core.validation import as_tensor

__all__ = ["DiscreteSchedulePath"]


def _pchip_slopes(y: Tensor) -> Tensor:
    """Fritsch–Carlson slopes (per unit step) of a strictly monotone sequence ``y`` on a unit grid."""
    delta = y[1:] - y[:-1]
    d = torch.empty_like(y)
    d[0], d[-1] = delta[0], delta[-1]
    d[1:-1] = 2.0 / (1.0 / delta[:-1] + 1.0 / delta[1:])  # same sign everywhere: |d| <= 2 min|delta|
    return d


class DiscreteSchedulePath(GaussianPath):
    """VP path through the points ``(k/T, sqrt(ᾱ_k))`` of ``schedule`` (module docstring)."""

    def __init__(self, schedule):
        # a DiscreteSchedule (scigen.core.paths.discrete), checked by what is used, so this module does not
        # import the one that builds it (DiscreteSchedule.as_path)
        if not all(hasattr(schedule, a) for a in ("T", "alpha_bar_0", "log_alphas_cumprod")):
            raise TypeError(f"schedule must be a DiscreteSchedule, got {type(schedule).__name__}")
        self.schedule = schedule
        self.T = schedule.T
        ell = torch.cat([torch.tensor([schedule.alpha_bar_0], dtype=torch.float64).log(),
                         schedule.log_alphas_cumprod])  # ℓ_0 … ℓ_T, strictly decreasing
        self._tables = (ell, _pchip_slopes(ell))

    def _on(self, device) -> tuple[Tensor, Tensor]:
        if self._tables[0].device != torch.device(device):
            self._tables = tuple(v.to(device) for v in self._tables)
        return self._tables

    def _cubic(self, j: Tensor, u: Tensor, device):
        """``ℓ`` and ``dℓ/du`` on segment ``j`` at ``u ∈ [0, 1]`` (Hermite basis, unit step)."""
        ell, d = self._on(device)
        d0, d1 = d[j], d[j + 1]
        y0, dy = ell[j], ell[j + 1] - ell[j]
        w = 1.0 - u
        val = y0 + dy * u * u * (3.0 - 2.0 * u) + d0 * u * w * w - d1 * u * u * w
        der = 6.0 * u * w * dy + d0 * w * (1.0 - 3.0 * u) + d1 * u * (3.0 * u - 2.0)
        return val, der

    def _segment(self, t: Tensor):
        """``(ℓ(t), ℓ'(t), dtype)`` in float64 for ``t`` of any shape (clamped to ``[0, 1]``)."""
        t = as_tensor(t, "t")
        dtype = t.dtype if t.is_floating_point() else torch.get_default_dtype()
        s = t.double().clamp(0.0, 1.0) * self.T
        j = s.floor().clamp(0, self.T - 1).long()
        val, der = self._cubic(j, s - j, t.device)
        return val, der * self.T, dtype

    def log_alpha_bar(self, t: Tensor) -> Tensor:
        """``ℓ(t) = log ᾱ(t)``, through ``log ᾱ_k`` at ``t = k/T``."""
        ell, _, dtype = self._segment(t)
        return ell.to(dtype)

    def alpha(self, t):
        ell, _, dtype = self._segment(t)
        return torch.exp(0.5 * ell).to(dtype)

    def sigma(self, t):
        ell, _, dtype = self._segment(t)
        return torch.sqrt(-torch.expm1(ell)).to(dtype)

    def d_alpha(self, t):
        ell, d_ell, dtype = self._segment(t)
        return (0.5 * d_ell * torch.exp(0.5 * ell)).to(dtype)

    def d_sigma(self, t):
        ell, d_ell, dtype = self._segment(t)
        return (-0.5 * d_ell * torch.exp(ell) / torch.sqrt(-torch.expm1(ell))).to(dtype)

    def log_snr(self, t):
        ell, _, dtype = self._segment(t)
        return (ell - torch.log(-torch.expm1(ell))).to(dtype)

    def t_from_log_snr(self, log_snr):
        lam = as_tensor(log_snr, "log_snr")
        dtype = lam.dtype if lam.is_floating_point() else torch.get_default_dtype()
        ell, _ = self._on(lam.device)
        target = -F.softplus(-lam.double())  # log ᾱ = log sigmoid(λ)
        # segment j with ℓ_{j+1} <= target <= ℓ_j (ℓ decreasing: search the increasing −ℓ)
        j = (torch.searchsorted(-ell, (-target).contiguous()) - 1).clamp(0, self.T - 1)
        lo, hi = torch.zeros_like(target), torch.ones_like(target)
        for _ in range(60):  # bisection of the decreasing cubic on [0, 1]
            mid = 0.5 * (lo + hi)
            above = self._cubic(j, mid, lam.device)[0] > target
            lo, hi = torch.where(above, mid, lo), torch.where(above, hi, mid)
        return ((j + 0.5 * (lo + hi)) / self.T).clamp(0.0, 1.0).to(dtype)

    def __repr__(self) -> str:
        return f"DiscreteSchedulePath({self.schedule!r})"
