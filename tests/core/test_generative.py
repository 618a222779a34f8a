"""The network + path + prediction binding: its loss and sampler are the engine's, call for call."""

from __future__ import annotations

import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.core.generative import Diffusion, FlowMatching
from scigen.core.losses import denoising_loss, flow_matching_loss
from scigen.core.paths import LinearPath, VPLinear
from scigen.core.samplers import sample, time_grid


def _net(scale=0.3):
    lin = torch.nn.Linear(3, 3)
    torch.nn.init.constant_(lin.weight, scale)
    return lambda x, t, shift=0.0: lin(x) * t[:, None] + shift


def test_loss_equals_the_engine_loss_on_the_same_draws():
    net, path = _net(), VPLinear()
    x0 = torch.randn(16, 3, generator=torch.Generator().manual_seed(0))
    t = torch.rand(16, generator=torch.Generator().manual_seed(1))
    noise = torch.randn(16, 3, generator=torch.Generator().manual_seed(2))
    proc = Diffusion(net, path, "v")
    ref = denoising_loss(net, x0, path, target="v", t=t, noise=noise)
    assert torch.allclose(proc.loss(x0, t=t, noise=noise), ref)
    cond = denoising_loss(lambda x, tt: net(x, tt, shift=2.0), x0, path, target="v", t=t, noise=noise)
    assert torch.allclose(proc.loss(x0, t=t, noise=noise, shift=2.0), cond)  # conditioning passed through
    fm = FlowMatching(net)
    assert torch.allclose(fm.loss(x0, t=t, x1=noise), flow_matching_loss(net, x0, noise, path=LinearPath(), t=t))


def test_clean_entries_are_held_at_x0_and_left_out_of_the_loss():
    """With clean = first row, the network sees x0 there, and the loss is the mean over the other rows."""
    seen = {}

    def net(x, t):
        seen["x"] = x.clone()
        return torch.zeros_like(x)

    x0 = torch.randn(4, 5, 2)
    noise = torch.randn(4, 5, 2)
    t = torch.full((4,), 0.5)
    clean = torch.zeros(4, 5, 1, dtype=torch.bool)
    clean[:, 0] = True
    path = VPLinear()
    loss = Diffusion(net, path, "eps").loss(x0, clean=clean, t=t, noise=noise)
    assert torch.equal(seen["x"][:, 0], x0[:, 0])
    a, s = path.alpha(t)[:, None, None], path.sigma(t)[:, None, None]
    assert torch.allclose(seen["x"][:, 1:], a * x0[:, 1:] + s * noise[:, 1:])
    assert torch.allclose(loss, (noise[:, 1:] ** 2).mean())  # zero prediction: MSE = mean eps² off the clean rows


def test_sample_equals_the_engine_sampler_from_the_same_noise():
    net, path = _net(), VPLinear()
    proc = Diffusion(net, path, "eps", method="ddpm", steps=7, grid="logsnr", grid_t_min=1e-3)
    x1 = torch.randn(8, 3, generator=torch.Generator().manual_seed(3))
    got = proc.sample(x1, generator=torch.Generator().manual_seed(4), progress=False)
    times = time_grid(7, "logsnr", path=path, t_min=1e-3, dtype=torch.float64)
    ref = sample(net, x1, times, path=path, prediction="eps", method="ddpm",
                 generator=torch.Generator().manual_seed(4), progress=False)
    assert torch.equal(got, ref)
    other = proc.sample(x1, method="ddim", times=times, progress=False)
    assert torch.equal(other, sample(net, x1, times, path=path, prediction="eps", method="ddim", progress=False))


def test_flow_matching_recovers_a_gaussian_with_its_exact_velocity():
    """Data N(m, s²): the exact velocity of the linear path makes Heun land on N(m, s²)."""
    m, s = 1.5, 0.5

    def velocity(x, t):
        t = t[:, None]
        var = (1 - t) ** 2 * s**2 + t**2
        mean = (1 - t) * m
        # E[x1 - x0 | x_t] for jointly Gaussian (x0, x1)
        ex1 = t * (x - mean) / var
        ex0 = m + (1 - t) * s**2 * (x - mean) / var
        return ex1 - ex0

    x1 = torch.randn(20000, 1, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    out = FlowMatching(velocity, steps=40).sample(x1, progress=False)
    assert abs(float(out.mean()) - m) < 0.02 and abs(float(out.std()) - s) < 0.02


def test_bad_arguments_are_named():
    with pytest.raises(InvalidInputError, match="prediction must be one of"):
        Diffusion(_net(), VPLinear(), "noise")
    with pytest.raises(InvalidInputError, match="path must be a scigen.core.paths.GaussianPath"):
        Diffusion(_net(), "vp")
    with pytest.raises(InvalidInputError, match="steps must be a positive int"):
        Diffusion(_net(), VPLinear()).sample(torch.randn(2, 3), steps=0)
    with pytest.raises(InvalidInputError, match="either steps= .* or times="):
        Diffusion(_net(), VPLinear()).sample(torch.randn(2, 3), steps=3, times=torch.linspace(1, 0, 4))
    with pytest.raises(ValueError, match="clean must be a boolean tensor"):
        Diffusion(_net(), VPLinear()).loss(torch.randn(2, 3), clean=torch.ones(2, 3))
