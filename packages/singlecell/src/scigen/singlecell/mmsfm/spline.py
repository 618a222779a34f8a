"""Vectorised per-sample interpolating splines in torch: PCHIP, natural cubic, linear.

MMSFM (Lee, Moradijamei & Shakeri, ICML 2025, §3.3, "measure-valued spline") draws, for every
coupled trajectory ``(z_0, ..., z_k)`` at the window's knot times ``(t_0, ..., t_k)``, a spline mean
``mu_t`` and its time derivative ``mu_t'``. The reference code fits one ``scipy`` spline per sample
per step; here all ``B`` samples (each with its own knot times) are handled at once.

* ``"pchip"``: the monotone piecewise cubic Hermite interpolant of Fritsch & Carlson (1980) with the
  knot slopes of ``scipy.interpolate.PchipInterpolator`` (weighted harmonic mean of the adjacent
  secants, 0 at local extrema; the three-point one-sided end rule, clipped to keep shape);
* ``"cubic"``: the natural cubic spline (zero second derivative at both ends), as
  ``scipy.interpolate.CubicSpline(bc_type="natural")``;
* ``"linear"``: piecewise linear (derivative = the interval's secant).

With two knots all three reduce to the straight line. Outside ``[t_0, t_k]`` the end piece is
extended (scipy's ``extrapolate=True``).
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["SPLINE_KINDS", "Spline"]

SPLINE_KINDS = ("pchip", "cubic", "linear")


def _pchip_slopes(h: Tensor, delta: Tensor) -> Tensor:
    """Knot slopes ``[B, K, d]`` from interval widths ``h [B, K-1, 1]`` and secants ``delta [B, K-1, d]``."""
    K = delta.shape[1] + 1
    if K == 2:
        return torch.cat([delta, delta], dim=1)
    h0, h1 = h[:, :-1], h[:, 1:]  # h_{k-1}, h_k for interior knots k = 1..K-2
    d0, d1 = delta[:, :-1], delta[:, 1:]
    w1, w2 = 2 * h1 + h0, h1 + 2 * h0
    same_sign = (torch.sign(d0) * torch.sign(d1)) > 0
    safe0 = torch.where(same_sign, d0, torch.ones_like(d0))
    safe1 = torch.where(same_sign, d1, torch.ones_like(d1))
    interior = torch.where(same_sign, (w1 + w2) / (w1 / safe0 + w2 / safe1), torch.zeros_like(d0))

    def edge(ha: Tensor, hb: Tensor, da: Tensor, db: Tensor) -> Tensor:
        d = ((2 * ha + hb) * da - ha * db) / (ha + hb)
        d = torch.where(torch.sign(d) != torch.sign(da), torch.zeros_like(d), d)
        clip = (torch.sign(da) != torch.sign(db)) & (d.abs() > 3 * da.abs())
        return torch.where(clip, 3 * da, d)

    first = edge(h[:, :1], h[:, 1:2], delta[:, :1], delta[:, 1:2])
    last = edge(h[:, -1:], h[:, -2:-1], delta[:, -1:], delta[:, -2:-1])
    return torch.cat([first, interior, last], dim=1)


def _natural_slopes(h: Tensor, delta: Tensor) -> Tensor:
    """Knot slopes of the natural cubic spline (second derivatives ``M`` from the tridiagonal system)."""
    B, Km1, d = delta.shape
    K = Km1 + 1
    if K == 2:
        return torch.cat([delta, delta], dim=1)
    hh = h[..., 0]  # [B, K-1]
    A = torch.zeros(B, K, K, dtype=delta.dtype, device=delta.device)
    rhs = torch.zeros(B, K, d, dtype=delta.dtype, device=delta.device)
    A[:, 0, 0] = 1.0
    A[:, -1, -1] = 1.0
    k = torch.arange(1, K - 1, device=delta.device)
    A[:, k, k - 1] = hh[:, :-1]
    A[:, k, k] = 2 * (hh[:, :-1] + hh[:, 1:])
    A[:, k, k + 1] = hh[:, 1:]
    rhs[:, 1:-1] = 6 * (delta[:, 1:] - delta[:, :-1])
    M = torch.linalg.solve(A, rhs)  # [B, K, d]
    m_left = delta - h * (2 * M[:, :-1] + M[:, 1:]) / 6  # slope at the left end of each interval
    m_end = delta[:, -1:] + h[:, -1:] * (M[:, -2:-1] + 2 * M[:, -1:]) / 6
    return torch.cat([m_left, m_end], dim=1)


class Spline:
    """Interpolating spline through ``y [B, K, d]`` at knot times ``knots [B, K]`` (or ``[K]``, shared).

    ``Spline(knots, y, kind)(t)`` and ``.derivative(t)`` take one time per sample, ``t [B]``, and
    return ``[B, d]``; :meth:`evaluate` returns both. Knots must be strictly increasing along ``K``.
    """

    def __init__(self, knots: Tensor, y: Tensor, kind: str = "pchip") -> None:
        if kind not in SPLINE_KINDS:
            raise ValueError(f"kind must be one of {SPLINE_KINDS}, got {kind!r}")
        if not isinstance(y, Tensor) or y.ndim != 3 or y.shape[1] < 2:
            raise ValueError(f"y must be a tensor [B, K>=2, d], got {getattr(y, 'shape', type(y).__name__)}")
        if not isinstance(knots, Tensor):
            knots = torch.as_tensor(knots, dtype=y.dtype)
        knots = knots.to(device=y.device, dtype=y.dtype)
        if knots.ndim == 1:
            knots = knots.expand(y.shape[0], -1)
        if knots.shape != y.shape[:2]:
            raise ValueError(f"knots must have shape [K] or [B, K] = {tuple(y.shape[:2])}, got {tuple(knots.shape)}")
        h = knots[:, 1:] - knots[:, :-1]
        if not bool((h > 0).all()):
            raise ValueError("knots must be strictly increasing along the knot axis")
        self.kind, self.knots, self.y = kind, knots.contiguous(), y
        self.h = h.unsqueeze(-1)  # [B, K-1, 1]
        self.delta = (y[:, 1:] - y[:, :-1]) / self.h
        if kind == "pchip":
            self.slopes = _pchip_slopes(self.h, self.delta)
        elif kind == "cubic":
            self.slopes = _natural_slopes(self.h, self.delta)
        else:
            self.slopes = None

    def _locate(self, t: Tensor) -> tuple[Tensor, Tensor]:
        if not isinstance(t, Tensor):
            t = torch.as_tensor(t, dtype=self.y.dtype)
        t = t.to(device=self.y.device, dtype=self.y.dtype)
        if t.ndim == 0:
            t = t.expand(self.y.shape[0])
        if t.shape != (self.y.shape[0],):
            raise ValueError(f"t must have shape [B] = [{self.y.shape[0]}], got {tuple(t.shape)}")
        K = self.knots.shape[1]
        i = torch.searchsorted(self.knots, t.unsqueeze(1).contiguous(), right=True).squeeze(1) - 1
        return t, i.clamp(0, K - 2)

    def evaluate(self, t: Tensor) -> tuple[Tensor, Tensor]:
        """``(mu(t), mu'(t))``, each ``[B, d]``."""
        t, i = self._locate(t)
        b = torch.arange(self.y.shape[0], device=self.y.device)
        y0, y1, h = self.y[b, i], self.y[b, i + 1], self.h[b, i]
        s = (t - self.knots[b, i]).unsqueeze(-1) / h
        if self.kind == "linear":
            slope = self.delta[b, i]
            return y0 + s * h * slope, slope
        m0, m1 = self.slopes[b, i], self.slopes[b, i + 1]
        s2, s3 = s * s, s * s * s
        val = (2 * s3 - 3 * s2 + 1) * y0 + (s3 - 2 * s2 + s) * h * m0 + (-2 * s3 + 3 * s2) * y1 + (s3 - s2) * h * m1
        der = ((6 * s2 - 6 * s) * y0 + (-6 * s2 + 6 * s) * y1) / h + (3 * s2 - 4 * s + 1) * m0 + (3 * s2 - 2 * s) * m1
        return val, der

    def __call__(self, t: Tensor) -> Tensor:
        return self.evaluate(t)[0]

    def derivative(self, t: Tensor) -> Tensor:
        return self.evaluate(t)[1]
