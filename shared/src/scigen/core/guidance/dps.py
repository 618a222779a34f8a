"""Diffusion posterior sampling (Chung et al. 2023, DPS, Alg. 1 and Eq. 16) as a denoiser transform.

For a measurement ``y ≈ A(x0)`` DPS approximates ``∇_{x_t} log p(y | x_t)`` by
``−ζ·∇_{x_t} L(y, A(x̂0(x_t)))`` — the gradient flows through the model (autograd through
``x̂0 = D(x_t, t)``). Added to the score, and written at the x0 level through Tweedie's formula
``x̂0 = (x_t + sigma²·∇log p_t)/alpha``, the guided denoiser is

``x̂0_guided = x̂0 − ζ·(sigma_t² / alpha_t)·∇_{x_t} L``,

so every sampler uses the posterior score ``∇log p_t(x_t) + ∇log p(y | x_t)``. ``loss="norm"``
is ``L = ||y − A(x̂0)||₂`` (the paper's step-size practice, ``ζ_i = ζ'/||y − A(x̂0)||`` on the
squared norm); ``loss="squared"`` is ``||y − A(x̂0)||₂²``, for which ``ζ = 1/(2 r²)`` is the
Gaussian log-likelihood of noise level ``r`` (the paper's Eq. 16 with Gaussian noise). Norms
are per sample (over all but the batch dimension). Where ``alpha_t = 0`` the x0 estimate
carries no information about ``x_t`` and the guidance term is 0.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from scigen.core.samplers.denoiser import Denoiser
from scigen.core.validation import broadcast_time

__all__ = ["dps"]


def dps(measurement_fn: Callable[[Tensor], Tensor], y: Tensor, zeta: float, *, loss: str = "norm"):
    """Return the DPS transform (module docstring).

    Args:
        measurement_fn: the differentiable forward operator ``A(x0 [B, ...]) -> [B, ...]``.
        y: the measurement, broadcastable to ``A(x0)``.
        zeta: guidance strength ``ζ >= 0``.
        loss: ``"norm"`` (``||y − A(x̂0)||``) or ``"squared"``.
    """
    if not callable(measurement_fn):
        raise TypeError(f"measurement_fn must be callable as A(x0), got {type(measurement_fn).__name__}")
    if not isinstance(y, Tensor):
        raise TypeError(f"y must be a torch.Tensor, got {type(y).__name__}")
    if loss not in ("norm", "squared"):
        raise ValueError(f"loss must be 'norm' or 'squared', got {loss!r}")
    zeta = float(zeta)
    if not zeta >= 0:
        raise ValueError(f"zeta must be >= 0, got {zeta}")

    def transform(denoise: Denoiser) -> Denoiser:
        path = denoise.path

        def fn(x, t):
            with torch.enable_grad():
                xr = x.detach().requires_grad_(True)
                x0 = denoise(xr, t)
                ax = measurement_fn(x0)
                try:
                    r = (y.to(ax) - ax).flatten(1) if ax.ndim > 0 else (y.to(ax) - ax).reshape(1, -1)
                except RuntimeError:
                    raise ValueError(f"y {tuple(y.shape)} must broadcast to A(x0) {tuple(ax.shape)}") from None
                per = r.norm(dim=1) if loss == "norm" else r.pow(2).sum(1)
                (g,) = torch.autograd.grad(per.sum(), xr, allow_unused=True)
            if g is None:
                return x0.detach()
            tb = broadcast_time(t, x)
            a = path.alpha(tb)
            coef = torch.where(a > 0, path.sigma(tb) ** 2 / a.clamp_min(torch.finfo(a.dtype).tiny), torch.zeros_like(a))
            return x0.detach() - zeta * coef * g

        return Denoiser(fn, path, denoise.prediction)

    return transform
