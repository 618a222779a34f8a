"""Inpainting by replacement (Song et al. 2021, App. I.2; Lugmayr et al. 2022, RePaint Eq. 8-9).

Two places to impose the known part, both as a transform of the x0-denoiser:

* the x0 estimate (always): ``x̂0 ← mask·known + (1 − mask)·x̂0``. Every sampler's final step into
  ``sigma = 0`` returns ``alpha(0)·x̂0``, so with ``alpha(0) = 1`` the output equals ``known``
  exactly on the mask; before that the solver steps toward a state consistent with ``known``.
* the model input (``renoise=True``): the denoiser sees
  ``x_t ← mask·(alpha_t·known + sigma_t·z) + (1 − mask)·x_t`` — the known part drawn from the
  forward marginal ``q(x_t | x0 = known)`` with fresh noise ``z`` (RePaint's known-region sample),
  so the unknown part is predicted next to a correctly noised known part. The sampler's own state
  is not modified (a transform sees only the denoiser's input).
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core import streams
from scigen.core.samplers.denoiser import Denoiser
from scigen.core.validation import broadcast_time

__all__ = ["inpainting"]


def inpainting(mask: Tensor, known: Tensor, *, renoise: bool = False, generator: torch.Generator | None = None):
    """Return the transform keeping ``known`` where ``mask`` is True (module docstring).

    Args:
        mask: boolean tensor broadcastable to ``x`` (True = known entry).
        known: values broadcastable to ``x`` (only the masked entries are used).
        renoise: also replace the known part of the model input by a draw of the forward marginal.
        generator: noise source for ``renoise``.
    """
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
        raise TypeError(f"mask must be a boolean torch.Tensor (True = known), got "
                        f"{mask.dtype if isinstance(mask, Tensor) else type(mask).__name__}")
    if not isinstance(known, Tensor) or not known.is_floating_point():
        raise TypeError(f"known must be a floating torch.Tensor, got {type(known).__name__}")
    try:
        torch.broadcast_shapes(mask.shape, known.shape)
    except RuntimeError:
        raise ValueError(f"mask {tuple(mask.shape)} and known {tuple(known.shape)} must broadcast together") from None

    def transform(denoise: Denoiser) -> Denoiser:
        path = denoise.path

        def fn(x, t):
            try:
                shape = torch.broadcast_shapes(mask.shape, known.shape, x.shape)
            except RuntimeError:
                raise ValueError(f"mask {tuple(mask.shape)} / known {tuple(known.shape)} do not broadcast "
                                 f"to x {tuple(x.shape)}") from None
            if shape != x.shape:
                raise ValueError(f"mask/known broadcast to {tuple(shape)}, not to x {tuple(x.shape)}")
            kn = known.to(device=x.device, dtype=x.dtype)
            m = mask.to(x.device)
            x_in = x
            if renoise:
                tb = broadcast_time(t, x)
                z = streams.randn(x.shape, generator=generator, device=x.device, dtype=x.dtype)
                x_in = torch.where(m, path.alpha(tb) * kn + path.sigma(tb) * z, x)
            return torch.where(m, kn, denoise(x_in, t))

        return Denoiser(fn, path, denoise.prediction)

    return transform
