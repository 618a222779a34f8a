"""Inverse Flow's denoising scores, shared by ``evaluate`` and the benchmark, against closed forms."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from scigen.singlecell.inverseflow.metrics import image_scores, vector_scores


def test_vector_scores_of_a_known_error():
    clean = np.random.default_rng(0).random((50, 4))
    est = clean.copy()
    est[:25] += 0.1  # half the rows off by 0.1 everywhere: per-row MSE 0.01 (PSNR 20 dB), the rest exact
    s = vector_scores(est, clean)
    assert s["MSE"] == pytest.approx(0.005)
    assert s["PSNR"] == pytest.approx((20 + 120) / 2)  # exact rows are floored at 1e-12 -> 120 dB
    assert s["corr"] == pytest.approx(np.corrcoef(est.ravel(), clean.ravel())[0, 1])


def test_image_scores_of_a_known_error():
    clean = torch.rand(3, 1, 16, 16, generator=torch.Generator().manual_seed(0)) * 0.5 + 0.25
    s = image_scores(clean + 0.1, clean)  # in [0.35, 0.85]: clipping to [0, 1] changes nothing
    assert s["PSNR"] == pytest.approx(20.0) and s["PSNR_unclipped"] == pytest.approx(20.0)  # peak 1, MSE 0.01
    over = image_scores(clean + 0.5, clean)  # values above 1 are clipped to 1 first, as a saved image is
    assert over["PSNR"] == pytest.approx(float(np.mean([-10 * np.log10(((np.clip(c + 0.5, 0, 1) - c) ** 2).mean())
                                                        for c in clean.double().numpy()])))
    assert over["PSNR_unclipped"] == pytest.approx(10 * np.log10(1 / 0.25))
    assert image_scores(clean, clean)["SSIM"] == pytest.approx(1.0)
