"""Denoising scores against a known clean truth, as Inverse Flow (Zhang & Zhou, ICML 2025) reports them.

One implementation for :meth:`InverseFlow.evaluate <scigen.singlecell.inverseflow.system.InverseFlow.evaluate>`
and the benchmark's baselines (Noise2Self, k-NN smoothing, the noisy input), so every row of a table is
scored alike:

* vectors (cells × features, points): ``MSE`` (mean squared error), ``PSNR`` as the official code computes it
  (per observation ``−10·log10(mean squared error)``, peak 1, then averaged; errors floored at 1e-12) and
  ``corr`` (Pearson over all entries);
* images ``[N, C, H, W]``: ``PSNR`` and ``SSIM`` (the engine's, data range 1) per image, averaged.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

__all__ = ["image_scores", "vector_scores"]


def _double(x) -> Tensor:
    return torch.as_tensor(np.asarray(x) if not isinstance(x, Tensor) else x).double()


def vector_scores(estimate, clean) -> dict[str, float]:
    """``MSE``, ``PSNR`` and ``corr`` of ``estimate`` ``[n, d]`` against ``clean`` (module docstring)."""
    x, z = _double(estimate), _double(clean)
    err = ((x - z) ** 2).mean(1)
    return {"MSE": float(err.mean()), "PSNR": float((-10 * torch.log10(err.clamp(min=1e-12))).mean()),
            "corr": float(np.corrcoef(x.flatten().numpy(), z.flatten().numpy())[0, 1])}


def image_scores(estimate, clean) -> dict[str, float]:
    """``PSNR`` and ``SSIM`` of images ``[N, C, H, W]`` against ``clean`` (module docstring)."""
    from scigen.core.metrics import psnr, ssim

    x, z = _double(estimate), _double(clean)
    return {"PSNR": float(psnr(x, z, data_range=1.0).mean()), "SSIM": float(ssim(x, z, data_range=1.0).mean())}
