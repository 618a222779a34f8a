"""The abstract Gaussian probability path and exact conversions between prediction kinds.

Time convention (must): ``t ∈ [0, 1]``, ``t = 0`` is data and ``t = 1`` the prior (noise).
A Gaussian path is ``x_t = alpha(t)·x0 + sigma(t)·eps`` with ``eps ~ N(0, I)``.

Prediction kinds (docs/engine-api.md), each linear in ``(x0, eps)`` at fixed ``t``:

============ ================================ ==========================================
kind         definition                       reference
============ ================================ ==========================================
``eps``      ``eps``                          Ho et al. 2020
``x0``       ``x0``                           Karras et al. 2022 (the denoiser D)
``v``        ``alpha·eps − sigma·x0``         Salimans & Ho 2022, §4
``velocity`` ``alpha'·x0 + sigma'·eps``       Lipman et al. 2023 / Liu et al. 2023 (dx_t/dt)
``score``    ``−eps / sigma``                 ∇ log p_t(x_t) for the Gaussian conditional
============ ================================ ==========================================

Writing a kind as ``p·x0 + q·eps`` and using ``x_t = a·x0 + s·eps`` gives the exact conversion
``dst = [(p'q − q'p)·x_t + (a·q' − s·p')·pred] / (a·q − s·p)``; ``score`` is routed through
``eps`` so that ``eps ↔ score`` never divides by ``alpha``. A conversion that must recover ``x0``
from ``eps`` divides by ``alpha`` and one that must recover ``eps`` from ``x0`` divides by
``sigma``: they are undefined where that coefficient vanishes (e.g. ``t = 1`` of a VP cosine path
or ``t = 0`` of most paths), as in exact arithmetic.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch
from torch import Tensor

from scigen.core import streams
from scigen.core.validation import as_tensor, broadcast_time, check_same_shape

__all__ = ["PREDICTION_KINDS", "GaussianPath", "check_kind"]

PREDICTION_KINDS = ("eps", "x0", "v", "velocity", "score")


def check_kind(kind: str, name: str = "kind") -> str:
    """Return ``kind`` if it is one of :data:`PREDICTION_KINDS`, else raise ``ValueError``."""
    if not isinstance(kind, str) or kind not in PREDICTION_KINDS:
        raise ValueError(f"{name} must be one of {PREDICTION_KINDS}, got {kind!r}")
    return kind


class GaussianPath(ABC):
    """``x_t = alpha(t)·x0 + sigma(t)·eps`` on ``t ∈ [0, 1]`` (``t = 0`` data, ``t = 1`` noise).

    Subclasses implement :meth:`alpha`, :meth:`sigma` and their analytic time derivatives
    :meth:`d_alpha`, :meth:`d_sigma`, all elementwise on a tensor ``t`` of any shape. They may
    override :meth:`log_snr` and :meth:`t_from_log_snr` with closed forms.
    """

    # ---------------------------------------------------------------- schedule (abstract)
    @abstractmethod
    def alpha(self, t: Tensor) -> Tensor:
        """Signal coefficient ``alpha(t)``, elementwise."""

    @abstractmethod
    def sigma(self, t: Tensor) -> Tensor:
        """Noise coefficient ``sigma(t)``, elementwise."""

    @abstractmethod
    def d_alpha(self, t: Tensor) -> Tensor:
        """Analytic ``d alpha / dt``, elementwise."""

    @abstractmethod
    def d_sigma(self, t: Tensor) -> Tensor:
        """Analytic ``d sigma / dt``, elementwise."""

    # ---------------------------------------------------------------- derived schedule quantities
    def log_snr(self, t: Tensor) -> Tensor:
        """``log(alpha² / sigma²)``; decreasing in ``t`` for every path here."""
        t = as_tensor(t, "t")
        return 2.0 * (torch.log(self.alpha(t)) - torch.log(self.sigma(t)))

    def edm_sigma(self, t: Tensor) -> Tensor:
        """EDM noise level ``sigma(t)/alpha(t) = exp(−log_snr/2)`` (Karras et al. 2022, Eq. 4/Table 1)."""
        t = as_tensor(t, "t")
        return torch.exp(-0.5 * self.log_snr(t))

    def t_from_log_snr(self, log_snr: Tensor) -> Tensor:
        """Inverse of :meth:`log_snr`: the ``t ∈ [0, 1]`` with ``log_snr(t) = log_snr``.

        Generic fallback: 64 steps of vectorised bisection (``log_snr`` is decreasing), exact to
        float resolution; values outside ``[log_snr(1), log_snr(0)]`` clamp to the ends.
        """
        lam = as_tensor(log_snr, "log_snr")
        lo = torch.zeros_like(lam)
        hi = torch.ones_like(lam)
        for _ in range(64):
            mid = 0.5 * (lo + hi)
            above = self.log_snr(mid) > lam  # still too little noise: move right
            lo = torch.where(above, mid, lo)
            hi = torch.where(above, hi, mid)
        return 0.5 * (lo + hi)

    def t_from_edm_sigma(self, edm_sigma: Tensor) -> Tensor:
        """Inverse of :meth:`edm_sigma`."""
        s = as_tensor(edm_sigma, "edm_sigma")
        return self.t_from_log_snr(-2.0 * torch.log(s))

    def sde_coefficients(self, t: Tensor) -> tuple[Tensor, Tensor]:
        """Drift and squared diffusion ``(f(t), g²(t))`` of the forward SDE ``dx = f x dt + g dW``
        whose marginals are this path: ``f = alpha'/alpha`` and
        ``g² = d(sigma²)/dt − 2 f sigma²`` (Kingma et al. 2021, App. A; Song et al. 2021, Eq. 5).
        """
        t = as_tensor(t, "t")
        a, s = self.alpha(t), self.sigma(t)
        f = self.d_alpha(t) / a
        g2 = 2.0 * s * self.d_sigma(t) - 2.0 * f * s * s
        return f, g2

    # ---------------------------------------------------------------- sampling the path
    def marginal(self, x0: Tensor, t: Tensor, noise: Tensor | None = None, *, generator=None) -> Tensor:
        """``x_t = alpha(t)·x0 + sigma(t)·noise`` with ``t`` (scalar or ``[B]``) broadcast over ``x0``.

        ``noise`` defaults to a standard normal draw (from ``generator`` when given).
        """
        tb = broadcast_time(t, x0)
        tb = tb.to(x0.dtype) if x0.is_floating_point() else tb
        if noise is None:
            noise = streams.randn(x0.shape, generator=generator, device=x0.device, dtype=tb.dtype)
        check_same_shape(x0, noise, "x0", "noise")
        return self.alpha(tb) * x0 + self.sigma(tb) * noise

    def _coef(self, kind: str, tb: Tensor, a: Tensor, s: Tensor):
        """``(p, q)`` with ``kind = p·x0 + q·eps`` (``score`` handled by the callers)."""
        if kind == "eps":
            return 0.0, 1.0
        if kind == "x0":
            return 1.0, 0.0
        if kind == "v":
            return -s, a
        return self.d_alpha(tb), self.d_sigma(tb)  # velocity

    def target(self, x0: Tensor, noise: Tensor, t: Tensor, kind: str = "eps") -> Tensor:
        """The regression target of prediction ``kind`` for the sample ``(x0, noise)`` at time ``t``."""
        check_kind(kind)
        check_same_shape(x0, noise, "x0", "noise")
        tb = broadcast_time(t, x0).to(x0.dtype)
        if kind == "eps":
            return noise
        if kind == "x0":
            return x0
        a, s = self.alpha(tb), self.sigma(tb)
        if kind == "score":
            return -noise / s
        p, q = self._coef(kind, tb, a, s)
        return p * x0 + q * noise

    def convert(self, pred: Tensor, x_t: Tensor, t: Tensor, src: str = "eps", dst: str = "x0") -> Tensor:
        """Convert a prediction of kind ``src`` at ``(x_t, t)`` into kind ``dst``, exactly.

        See the module docstring for the formula and where it is undefined.
        """
        check_kind(src, "src")
        check_kind(dst, "dst")
        check_same_shape(x_t, pred, "x_t", "pred")
        if src == dst:
            return pred
        tb = broadcast_time(t, x_t).to(x_t.dtype)
        a, s = self.alpha(tb), self.sigma(tb)
        if src == "score":  # score = −eps/sigma
            pred, src = -s * pred, "eps"
        if dst == "score":
            eps = pred if src == "eps" else self.convert(pred, x_t, t, src, "eps")
            return -eps / s
        if src == dst:
            return pred
        p, q = self._coef(src, tb, a, s)
        p2, q2 = self._coef(dst, tb, a, s)
        det = a * q - s * p
        return ((p2 * q - q2 * p) * x_t + (a * q2 - s * p2) * pred) / det

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"
