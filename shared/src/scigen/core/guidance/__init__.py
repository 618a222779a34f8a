"""Guidance: composable transforms ``Denoiser -> Denoiser`` of the x0-denoiser a sampler builds.

Pass one or a list to ``sample(..., guidance=...)``; a list is applied in order (the first wraps
the model's denoiser, the next wraps that). Time convention: ``t = 0`` data, ``t = 1`` noise.

* :func:`classifier_free` — Ho & Salimans 2022.
* :func:`cost_gradient` (+ :class:`DualAscent`) — optimiser steps on ``w·objective + alpha·constraint``.
* :func:`dps` — diffusion posterior sampling, Chung et al. 2023.
* :func:`inpainting` — replacement of known entries (x0 estimate and optionally the model input).
* :func:`static_threshold`, :func:`dynamic_threshold` — clip x̂0 to the data range (DDPM; Imagen §2.3).
"""

from scigen.core.guidance.classifier_free import classifier_free
from scigen.core.guidance.cost_gradient import CostGradient, DualAscent, cost_gradient
from scigen.core.guidance.dps import dps
from scigen.core.guidance.inpainting import inpainting
from scigen.core.guidance.thresholding import dynamic_threshold, static_threshold

__all__ = ["CostGradient", "DualAscent", "classifier_free", "cost_gradient", "dps", "dynamic_threshold",
           "inpainting", "static_threshold"]
