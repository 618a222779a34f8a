"""``sample(..., grad=True)``: the chain stays differentiable (closed form), and the default stays grad-free."""

from __future__ import annotations

import torch

from scigen.core.generative import Diffusion
from scigen.core.paths import VPCosine
from scigen.core.samplers import sample


def test_one_ddim_step_has_the_closed_form_gradient():
    # eps_hat = w·x; one deterministic DDIM step from t=1 to t=0 returns alpha(0)·x0_hat with
    # x0_hat = (x − sigma(1)·w·x)/alpha(1), so d out / d w = −alpha(0)·sigma(1)·x / alpha(1).
    path = VPCosine()
    w = torch.tensor(0.3, requires_grad=True)
    x = torch.randn(4, 3, dtype=torch.float64)
    times = torch.tensor([0.9, 0.0], dtype=torch.float64)
    out = sample(lambda x, t: w * x, x, times, path=path, method="ddim", grad=True)
    out.sum().backward()
    t1, t0 = times[:1], times[1:]
    expected = float((-path.alpha(t0) * path.sigma(t1) / path.alpha(t1) * x).sum())
    assert abs(float(w.grad) - expected) < 1e-6 * max(1.0, abs(expected))


def test_default_sampling_keeps_autograd_off_and_binding_passes_grad():
    net = torch.nn.Linear(3, 3)
    proc = Diffusion(lambda x, t: net(x), VPCosine(), method="ddim", steps=3, grid_t_max=0.9)
    x = torch.randn(5, 3)
    assert not proc.sample(x).requires_grad
    out = proc.sample(x, grad=True)
    out.pow(2).sum().backward()
    assert net.weight.grad is not None and float(net.weight.grad.abs().sum()) > 0
