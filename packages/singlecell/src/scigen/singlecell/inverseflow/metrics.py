"""Denoising scores against a known clean truth.

One implementation for :meth:`InverseFlow.evaluate <scigen.singlecell.inverseflow.system.InverseFlow.evaluate>`
and the benchmark's baselines (Noise2Self, k-NN smoothing, the noisy input), so every row of a table is
scored alike:

* vectors (cells × features, points): ``MSE`` (mean squared error), ``PSNR`` as the official Inverse Flow
  code computes it (Zhang & Zhou, ICML 2025; per observation ``−10·log10(mean squared error)``, peak 1,
  then averaged; errors floored at 1e-12) and ``corr`` (Pearson over all entries);
* images ``[N, C, H, W]`` with values in ``[0, data_range]``: the field's standard definitions, those of
  scikit-image with ``data_range`` given and every other argument at its default, per image, averaged.
  ``PSNR`` = ``skimage.metrics.peak_signal_noise_ratio(clean, clip(estimate, 0, data_range), data_range)``
  = ``10·log10(data_range² / MSE)`` of the estimate clipped to the image range (as an image written to a
  file is); ``SSIM`` = ``skimage.metrics.structural_similarity(clean, clip(estimate), data_range)``
  (Wang et al. 2004 on a 7 × 7 uniform window with sample covariances, per channel, averaged;
  :func:`scigen.core.metrics.ssim` with ``window="uniform"``). ``PSNR_unclipped`` is the official
  Inverse Flow code's validation PSNR (the same formula on the raw estimate), for comparison with it.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from scigen.core.errors import InvalidInputError

__all__ = ["image_scores", "vector_scores"]


def _double(x) -> Tensor:
    return torch.as_tensor(np.asarray(x) if not isinstance(x, Tensor) else x).double()


def vector_scores(estimate, clean) -> dict[str, float]:
    """``MSE``, ``PSNR`` and ``corr`` of ``estimate`` ``[n, d]`` against ``clean`` (module docstring)."""
    x, z = _double(estimate), _double(clean)
    err = ((x - z) ** 2).mean(1)
    return {"MSE": float(err.mean()), "PSNR": float((-10 * torch.log10(err.clamp(min=1e-12))).mean()),
            "corr": float(np.corrcoef(x.flatten().numpy(), z.flatten().numpy())[0, 1])}


def image_scores(estimate, clean, data_range: float = 1.0) -> dict[str, float]:
    """``PSNR``, ``SSIM`` and ``PSNR_unclipped`` of images ``[N, C, H, W]`` against ``clean`` (module docstring).

    ``clean`` must lie in ``[0, data_range]`` (1 for images in [0, 1], 255 for 8-bit values)."""
    from scigen.core.metrics import psnr, ssim

    x, z = _double(estimate), _double(clean)
    lo, hi = float(z.min()), float(z.max())
    if not (data_range > 0) or lo < 0 or hi > data_range:
        raise InvalidInputError(f"the clean images lie in [{lo:.4g}, {hi:.4g}], outside [0, data_range={data_range:g}]: "
                                "pass data_range= (e.g. 255 for 8-bit values) so PSNR/SSIM use the images' range")
    xc = x.clamp(0.0, data_range)
    win = min(7, *(d - 1 + d % 2 for d in z.shape[-2:]))  # scikit-image's 7, or the largest odd size that fits
    return {"PSNR": float(psnr(xc, z, data_range=data_range).mean()),
            "SSIM": float(ssim(xc, z, data_range=data_range, win_size=win, window="uniform",
                               sample_covariance=True).mean()),
            "PSNR_unclipped": float(psnr(x, z, data_range=data_range).mean())}
