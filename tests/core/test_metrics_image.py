"""PSNR by hand and SSIM against scikit-image."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from skimage.data import astronaut, camera
from skimage.metrics import structural_similarity

from scigen.core.metrics import psnr, ssim


def test_psnr_hand_case_and_batch():
    target = torch.zeros(2, 1, 4, 4)
    pred = target.clone()
    pred[0] += 0.1  # MSE 0.01 -> 20 dB at data_range 1
    pred[1, :, :2] += 0.2  # MSE 0.02 -> 10 log10(50) dB
    got = psnr(pred, target, data_range=1.0)
    torch.testing.assert_close(got, torch.tensor([20.0, 10 * np.log10(50.0)], dtype=torch.float32))
    assert float(psnr(pred[0, 0] * 255, target[0, 0], data_range=255.0)) == pytest.approx(20.0, rel=1e-5)
    assert psnr(target[0], target[0], data_range=1.0) == float("inf")


def _skimage_ssim(a: np.ndarray, b: np.ndarray, data_range: float, channel_axis=None) -> float:
    return structural_similarity(
        a,
        b,
        data_range=data_range,
        gaussian_weights=True,
        sigma=1.5,
        use_sample_covariance=False,
        channel_axis=channel_axis,
    )


def test_ssim_matches_skimage_grey():
    r = np.random.default_rng(0)
    img = camera()[100:164, 200:270].astype(np.float64)
    noisy = np.clip(img + r.normal(0, 20, img.shape), 0, 255)
    ref = _skimage_ssim(img, noisy, 255.0)
    got = ssim(torch.from_numpy(noisy), torch.from_numpy(img), data_range=255.0)
    assert float(got) == pytest.approx(ref, rel=1e-10)
    assert float(ssim(torch.from_numpy(img), torch.from_numpy(img), data_range=255.0)) == pytest.approx(1.0)


def test_ssim_matches_skimage_colour_batch():
    r = np.random.default_rng(1)
    imgs = [astronaut()[y : y + 40, x : x + 48].astype(np.float64) / 255 for y, x in ((0, 0), (200, 150))]
    blurred = [np.clip(im * 0.8 + 0.1 + r.normal(0, 0.05, im.shape), 0, 1) for im in imgs]
    refs = [_skimage_ssim(a, b, 1.0, channel_axis=-1) for a, b in zip(blurred, imgs, strict=True)]
    pred = torch.from_numpy(np.stack(blurred)).permute(0, 3, 1, 2)
    target = torch.from_numpy(np.stack(imgs)).permute(0, 3, 1, 2)
    got = ssim(pred, target, data_range=1.0)
    np.testing.assert_allclose(got.numpy(), refs, rtol=1e-10)


def test_uniform_window_with_sample_covariance_is_skimage_default():
    """``window="uniform", win_size=7, sample_covariance=True`` = ``structural_similarity(a, b, data_range=)``
    with every other argument at scikit-image's default (the number imaging papers report)."""
    r = np.random.default_rng(2)
    img = camera()[50:110, 60:133].astype(np.float64) / 255
    noisy = img + r.normal(0, 0.1, img.shape)
    ref = structural_similarity(img, noisy, data_range=1.0)
    got = ssim(torch.from_numpy(noisy), torch.from_numpy(img), data_range=1.0, win_size=7, window="uniform",
               sample_covariance=True)
    assert float(got) == pytest.approx(ref, rel=1e-10)
    with pytest.raises(ValueError, match="window must be"):
        ssim(torch.from_numpy(noisy), torch.from_numpy(img), data_range=1.0, window="box")


def test_bad_inputs_raise_clear_errors():
    a = torch.rand(1, 1, 16, 16)
    with pytest.raises(ValueError, match="same shape"):
        ssim(a, torch.rand(1, 1, 16, 15), data_range=1.0)
    with pytest.raises(ValueError, match="at least 11"):
        ssim(torch.rand(8, 8), torch.rand(8, 8), data_range=1.0)
    with pytest.raises(ValueError, match="data_range"):
        psnr(a, a, data_range=0.0)
    with pytest.raises(ValueError, match=r"\[H, W\]"):
        psnr(torch.rand(16), torch.rand(16), data_range=1.0)
    with pytest.raises(ValueError, match="NaN"):
        psnr(a, torch.full_like(a, float("nan")), data_range=1.0)
    with pytest.raises(ValueError, match="odd"):
        ssim(a, a, data_range=1.0, win_size=10)
