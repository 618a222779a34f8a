"""Classifier-free guidance (Ho & Salimans 2022, Eq. 6) as a transform of the x0-denoiser.

``x̂0 = x̂0_u + scale·(x̂0_c − x̂0_u)``, where ``x̂0_c`` is the denoiser being transformed (the
conditional model, conditioning closed over) and ``x̂0_u`` the unconditional model. ``scale`` is
``γ = 1 + w`` in Ho & Salimans' ``w``-form ``ε̃ = (1 + w)·ε_c − w·ε_u``: ``scale = 0`` gives the
unconditional model, ``1`` the conditional one, ``> 1`` guides. Because every prediction kind is
affine in ``x̂0`` at fixed ``(x_t, t)`` with the same coefficients for both models, mixing at the
x0 level is exactly mixing at the eps (or v, velocity, score) level.
"""

from __future__ import annotations

from collections.abc import Callable

from scigen.core.samplers.denoiser import Denoiser

__all__ = ["classifier_free"]


def classifier_free(uncond_model: Callable, scale: float, *, prediction: str | None = None) -> Callable:
    """Return the transform ``Denoiser -> Denoiser`` of classifier-free guidance.

    Args:
        uncond_model: ``uncond_model(x, t)`` returning the same prediction kind as the sampler's
            model (or ``prediction`` when given), e.g. the model with a null condition.
        scale: guidance scale ``γ`` (0: unconditional, 1: conditional, Ho & Salimans' ``w = γ − 1``).
        prediction: kind returned by ``uncond_model``; default the sampler's ``prediction``.
    """
    if not callable(uncond_model):
        raise TypeError(f"uncond_model must be callable as uncond_model(x, t), got {type(uncond_model).__name__}")
    try:
        scale = float(scale)
    except (TypeError, ValueError):
        raise TypeError(f"scale must be a real number, got {type(scale).__name__}") from None

    def transform(denoise: Denoiser) -> Denoiser:
        uncond = Denoiser.from_model(uncond_model, denoise.path, prediction or denoise.prediction, name="uncond_model")

        def fn(x, t):
            cond = denoise(x, t)
            if scale == 1.0:
                return cond
            unc = uncond(x, t)
            return unc + scale * (cond - unc)

        return Denoiser(fn, denoise.path, denoise.prediction)

    return transform
