"""Location-scale path with a data-dependent endpoint ``N(mu(x), Sigma(x))`` (NsDiff, simplest form).

Continuous form used here (Ye et al. 2025, Eq. 7 with the variance schedule collapsed onto one
base path), ``t = 0`` data, ``t = 1`` the prior ``N(mu, Sigma)``:

    x_t = alpha(t)·x0 + (1 − alpha(t))·mu + sigma(t)·sqrt(Sigma)·eps,

with ``(alpha, sigma)`` taken from a base :class:`GaussianPath` and ``Sigma`` diagonal (``var``, a
tensor broadcastable to ``x0``). In standardised coordinates ``z = (x − mu)/sqrt(Sigma)`` it is the
base path ``z_t = alpha·z0 + sigma·eps``, which gives every conversion exactly: ``eps`` and ``v``
live in ``z``-space (``v = alpha·eps − sigma·z0``), ``x0`` and ``velocity`` (``dx_t/dt``) in
``x``-space, and ``score = ∇_x log p_t = −eps / (sigma·sqrt(Sigma))``.

NsDiff's discrete variance ``Σ2_t = G_t g(X) + β̃_t σ_{Y0}`` (two variance sources) lives in
``scigen.timeseries``; its sums use :func:`scigen.core.paths.sum_of_products`.
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core.paths.gaussian import GaussianPath, check_kind
from scigen.core.paths.vp import VPLinear
from scigen.core.validation import check_same_shape

__all__ = ["LocationScalePath"]


class LocationScalePath:
    """``x_t = mu + alpha(t)(x0 − mu) + sigma(t)·sqrt(var)·eps`` around a base Gaussian path."""

    def __init__(self, base: GaussianPath | None = None):
        base = VPLinear() if base is None else base
        if not isinstance(base, GaussianPath):
            raise TypeError(f"base must be a GaussianPath, got {type(base).__name__}")
        self.base = base

    @staticmethod
    def _loc_scale(x: Tensor, mu: Tensor, var: Tensor) -> tuple[Tensor, Tensor]:
        for v, n in ((mu, "mu"), (var, "var")):
            if not isinstance(v, Tensor):
                raise TypeError(f"{n} must be a torch.Tensor, got {type(v).__name__}")
            try:
                torch.broadcast_shapes(v.shape, x.shape)
            except RuntimeError:
                raise ValueError(
                    f"{n} of shape {tuple(v.shape)} does not broadcast to x of shape {tuple(x.shape)}"
                ) from None
        if bool((var <= 0).any()) or not bool(torch.isfinite(var).all()):
            raise ValueError("var must be finite and strictly positive")
        return mu, torch.sqrt(var)

    def marginal(
        self, x0: Tensor, t: Tensor, mu: Tensor, var: Tensor, noise: Tensor | None = None, *, generator=None
    ) -> Tensor:
        """Sample ``x_t`` (``t`` scalar or ``[B]``; ``noise`` defaults to a standard normal draw)."""
        mu, sd = self._loc_scale(x0, mu, var)
        if noise is None:
            noise = torch.randn(x0.shape, generator=generator, device=x0.device, dtype=x0.dtype)
        check_same_shape(x0, noise, "x0", "noise")
        return mu + sd * self.base.marginal((x0 - mu) / sd, t, noise)

    def target(self, x0: Tensor, noise: Tensor, t: Tensor, kind: str, mu: Tensor, var: Tensor) -> Tensor:
        """Regression target of ``kind`` (see module docstring for which space each kind lives in)."""
        check_kind(kind)
        mu, sd = self._loc_scale(x0, mu, var)
        z = self.base.target((x0 - mu) / sd, noise, t, kind)
        return self._from_z(z, kind, mu, sd)

    def convert(
        self, pred: Tensor, x_t: Tensor, t: Tensor, src: str, dst: str, mu: Tensor, var: Tensor
    ) -> Tensor:
        """Exact conversion between prediction kinds, via standardised coordinates."""
        check_kind(src, "src")
        check_kind(dst, "dst")
        check_same_shape(x_t, pred, "x_t", "pred")
        mu, sd = self._loc_scale(x_t, mu, var)
        z_pred = self._to_z(pred, src, mu, sd)
        z = self.base.convert(z_pred, (x_t - mu) / sd, t, src, dst)
        return self._from_z(z, dst, mu, sd)

    @staticmethod
    def _to_z(pred: Tensor, kind: str, mu: Tensor, sd: Tensor) -> Tensor:
        if kind == "x0":
            return (pred - mu) / sd
        if kind == "velocity":
            return pred / sd
        if kind == "score":
            return pred * sd
        return pred  # eps, v

    @staticmethod
    def _from_z(z: Tensor, kind: str, mu: Tensor, sd: Tensor) -> Tensor:
        if kind == "x0":
            return mu + sd * z
        if kind == "velocity":
            return sd * z
        if kind == "score":
            return z / sd
        return z

    def prior_sample(self, mu: Tensor, var: Tensor, *, generator=None) -> Tensor:
        """A draw from the ``t = 1`` endpoint ``N(mu, var)`` used by the base path's ``alpha(1) ≈ 0``."""
        mu, sd = self._loc_scale(mu, mu, var)
        eps = torch.randn(
            torch.broadcast_shapes(mu.shape, sd.shape), generator=generator, device=mu.device, dtype=mu.dtype
        )
        one = torch.ones((), device=mu.device, dtype=mu.dtype)
        return mu + sd * self.base.sigma(one) * eps

    def __repr__(self) -> str:
        return f"LocationScalePath(base={self.base!r})"
