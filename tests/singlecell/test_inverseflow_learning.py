"""Inverse Flow learns to denoise from noisy data alone (truth known, used only to score): the 2-D toy
(ICM and IFM), a bundled image with i.i.d. and with correlated Gaussian noise (against Noise2Self), and
pbmc68k_reduced with known Gaussian noise; plus the demo end to end. Errors are computed here from the
arrays (numpy / the engine's PSNR-SSIM, which equals scikit-image's), not by the model's evaluate."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scigen.singlecell.inverseflow import CorrelatedGaussian, Gaussian, InverseFlow
from scigen.singlecell.inverseflow.baselines import noise2self
from scigen.singlecell.inverseflow.data import circle_toy, noisy_images, noisy_pbmc68k

pytestmark = pytest.mark.slow

TOY = {"t_max": 0.2, "sigma_data": 0.7, "train": {"batch_size": 256, "lr": 3e-3, "progress": False, "logger": None}}


def _psnr_rows(est, clean):
    err = ((np.asarray(est, np.float64) - clean) ** 2).mean(1)
    return float((-10 * np.log10(err)).mean())


@pytest.mark.parametrize("algo, steps, gain", [("icm", 1000, 3.0), ("ifm", 400, 1.5)])
def test_toy_psnr_rises_above_the_noisy_input(algo, steps, gain):
    ad = circle_toy(125, sigma=0.2, seed=0)
    clean = np.asarray(ad.layers["clean"], np.float64)
    m = InverseFlow(InverseFlow.Config.preset("tiny", algorithm=algo, **TOY), noise=Gaussian(0.2))
    m.fit(ad, max_steps=steps)
    den = m.denoise(ad, copy=True).layers["inverse_flow"]
    noisy_psnr, den_psnr = _psnr_rows(ad.X, clean), _psnr_rows(den, clean)
    assert den_psnr > noisy_psnr + gain, (den_psnr, noisy_psnr)  # measured: ICM ~20.4-21.9 dB vs 16.65 dB
    assert not m.metadata["collapse"]["collapsed"]


def _img_metrics(est, clean):
    import torch

    from scigen.core.metrics import psnr, ssim

    e, c = torch.as_tensor(np.asarray(est, np.float64))[:, None], torch.as_tensor(clean)[:, None]
    return float(psnr(e, c, data_range=1.0).mean()), float(ssim(e, c, data_range=1.0).mean())


@pytest.mark.parametrize("noise", [Gaussian(25 / 255), CorrelatedGaussian(0.1, 2.0)], ids=["iid", "correlated"])
def test_image_denoising_beats_the_noisy_input_and_noise2self(noise):
    noisy, clean = noisy_images(["camera"], noise, size=64, seed=0)
    over = {"patch": 32, "n_patches": 1024, "base_channels": 16,
            "train": {"batch_size": 16, "lr": 1e-3, "progress": False, "logger": None}}
    m = InverseFlow(InverseFlow.Config.preset("tiny", **over), noise=noise).fit(noisy, max_steps=200)
    p_icm, s_icm = _img_metrics(m.denoise(noisy), clean)
    p_noisy, s_noisy = _img_metrics(noisy, clean)
    p_n2s, s_n2s = _img_metrics(noise2self(noisy, max_steps=200, batch_size=16, patch=32, n_patches=1024), clean)
    assert p_icm > p_noisy + 1.0 and s_icm > s_noisy, (p_icm, p_noisy, s_icm, s_noisy)
    assert p_icm > p_n2s and s_icm > s_n2s, (p_icm, p_n2s, s_icm, s_n2s)


def test_pbmc68k_error_to_the_clean_matrix_falls_below_the_noisy_one():
    ad = noisy_pbmc68k(Gaussian(0.5), seed=0)
    clean = np.asarray(ad.layers["clean"], np.float64)
    cfg = InverseFlow.Config.preset("tiny", t_max=0.2, width=256,
                                    train={"batch_size": 128, "progress": False, "logger": None})
    m = InverseFlow(cfg, noise=Gaussian(0.5)).fit(ad, max_steps=300)
    den = np.asarray(m.denoise(ad, copy=True).layers["inverse_flow"], np.float64)
    mse_noisy, mse = ((ad.X - clean) ** 2).mean(), ((den - clean) ** 2).mean()
    assert mse < 0.9 * mse_noisy, (mse, mse_noisy)


def test_demo_quick_writes_the_figure_and_improves_psnr(tmp_path):
    res = InverseFlow.demo(tmp_path, quick=True, threads=1)
    rep = json.loads((tmp_path / "report.json").read_text())
    assert (tmp_path / "denoising.png").stat().st_size > 5000 and (tmp_path / "model" / "scigen.json").is_file()
    m = rep["metrics"]
    assert m["icm_PSNR"] > m["icm_PSNR_noisy"] + 2 and m["ifm_PSNR"] > m["ifm_PSNR_noisy"]
    assert m["icm_collapsed"] == 0 and res.seconds > 0
