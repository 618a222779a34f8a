"""Thresholding of the x0 estimate: keep the denoiser's clean-data prediction inside the data's range.

Near ``t = 1`` an eps-predicting model's x0 estimate ``(x − sigma·eps)/alpha`` divides by a tiny
``alpha`` and amplifies the model's error; when the data live in a known box, clipping the estimate
keeps the sampler's chain there (Ho et al. 2020, DDPM's sampler clips x̂0 to [−1, 1]; Saharia et al.
2022, Imagen §2.3, "static" and "dynamic" thresholding).

* :func:`static_threshold` — ``x̂0 ← clamp(x̂0, lo, hi)``.
* :func:`dynamic_threshold` — per sample, ``s = max(quantile(|x̂0|, p), 1)`` and
  ``x̂0 ← clamp(x̂0, −s, s)/s`` (Imagen: pushes saturated values inward instead of only clipping).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from scigen.core.samplers.denoiser import Denoiser

__all__ = ["dynamic_threshold", "static_threshold"]


def static_threshold(bound: float | None = 1.0, *, low: float | None = None, high: float | None = None):
    """Return the transform clipping ``x̂0`` to ``[low, high]`` (default ``[−bound, bound]``)."""
    lo = -float(bound) if low is None and bound is not None else low
    hi = float(bound) if high is None and bound is not None else high
    if lo is None or hi is None:
        raise ValueError("static_threshold needs a bound or both low and high")
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"static_threshold needs finite low < high, got low={lo}, high={hi}")

    def transform(denoise: Denoiser) -> Denoiser:
        return Denoiser(lambda x, t: denoise(x, t).clamp(lo, hi), denoise.path, denoise.prediction)

    return transform


def dynamic_threshold(percentile: float = 0.995, *, floor: float = 1.0):
    """Return Imagen's dynamic thresholding: ``s = max(quantile_p(|x̂0|) per sample, floor)``,
    ``x̂0 ← clamp(x̂0, −s, s)/s``."""
    p = float(percentile)
    if not 0.0 < p <= 1.0:
        raise ValueError(f"percentile must lie in (0, 1], got {percentile}")
    if not (math.isfinite(floor) and floor > 0):
        raise ValueError(f"floor must be finite and > 0, got {floor}")

    def transform(denoise: Denoiser) -> Denoiser:
        def fn(x: Tensor, t: Tensor) -> Tensor:
            x0 = denoise(x, t)
            flat = x0.reshape(x0.shape[0], -1).abs()
            s = torch.quantile(flat.float(), p, dim=1).to(x0.dtype).clamp_min(floor)
            s = s.reshape((-1,) + (1,) * (x0.ndim - 1))
            return torch.maximum(torch.minimum(x0, s), -s) / s

        return Denoiser(fn, denoise.path, denoise.prediction)

    return transform
