"""ICM and IFM as the official code writes them (Zhang & Zhou 2025, ``inverse_flow.py`` / ``train_utils.py``),
re-derived by hand here and compared with scigen's versions built on the engine."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from scigen.singlecell.inverseflow.noise import Gaussian, Jacobi
from scigen.singlecell.inverseflow.objective import (
    consistency_function,
    icm_loss,
    ifm_loss,
    invert,
    karras_times,
)

T_MIN, T_MAX, RHO, N, SD = 0.002, 0.2, 7.0, 11, 0.7


class Net(nn.Module):
    """A small fixed network F(x, t) that depends on both inputs."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a = nn.Linear(3, 16)
        self.b = nn.Linear(16, 2)

    def forward(self, x, t):
        return self.b(torch.tanh(self.a(torch.cat([x, t[:, None].to(x.dtype) * 5], 1))))


def _karras():
    n = torch.arange(N, dtype=torch.float64)
    return (T_MIN ** (1 / RHO) + n / (N - 1) * (T_MAX ** (1 / RHO) - T_MIN ** (1 / RHO))) ** RHO


def _f_ref(net, x, t):
    c_skip = SD**2 / ((t - T_MIN) ** 2 + SD**2)
    c_out = SD * (t - T_MIN) / (SD**2 + t**2) ** 0.5
    return c_skip[:, None] * x + c_out[:, None] * net(x, t)


def _ph(a, b):
    c = 0.00054 * math.sqrt(a[0].numel())
    return torch.sqrt((a - b) ** 2 + c**2) - c


def test_grid_is_karras_and_f_is_the_identity_at_t_min():
    assert torch.allclose(karras_times(N, T_MIN, T_MAX, RHO), _karras(), rtol=1e-12)
    x = torch.randn(5, 2)
    f = consistency_function(Net(), Gaussian(0.2), SD, T_MIN)
    assert torch.allclose(f(x, torch.full((5,), T_MIN)), x, atol=1e-7)
    fj = consistency_function(Net(), Jacobi(), SD, T_MIN)
    p = torch.rand(5, 2) * 0.8 + 0.1
    assert torch.allclose(fj(p, torch.full((5,), T_MIN)), p, atol=1e-6)


def test_icm_loss_is_the_official_formula():
    net = Net().double()
    x1 = torch.randn(64, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    ts = _karras()
    got = icm_loss(net, x1, ts, noise=Gaussian(0.2), sigma_data=SD, generator=torch.Generator().manual_seed(7))
    g = torch.Generator().manual_seed(7)  # the same draws in the same order: x̂1 noise, then the pair index
    with torch.no_grad():
        x0 = _f_ref(net, x1, torch.full((64,), T_MAX, dtype=torch.float64))
        x1h = x0 + 0.2 * torch.randn(x0.shape, generator=g, dtype=torch.float64)
    n = torch.randint(0, N - 1, (64,), generator=g)
    xt = lambda k: x0 + (ts[k] / T_MAX)[:, None] * (x1h - x0)  # noqa: E731
    nxt = _f_ref(net, xt(n + 1), ts[n + 1])
    with torch.no_grad():
        cur = _f_ref(net, xt(n), ts[n])
    w = 1 / (ts[1:] - ts[:-1])
    want = (_ph(cur, nxt) * w[n][:, None]).mean()
    assert got.item() == pytest.approx(want.item(), rel=1e-10)
    got.backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in net.parameters())


def _euler_ref(net, x, ts):
    rts = ts.flip(0)
    for i in range(len(rts) - 1):
        x = x - net(x, torch.full((x.shape[0],), float(rts[i]), dtype=x.dtype)) * (rts[i] - rts[i + 1])
    return x


def test_ifm_inversion_is_the_official_euler_solver_and_its_loss_the_official_formula():
    net = Net().double()
    x1 = torch.randn(32, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    ts = _karras()
    with torch.no_grad():
        got = invert(net, x1, ts, algorithm="ifm", noise=Gaussian(0.2), sigma_data=SD)
        assert torch.allclose(got, _euler_ref(net, x1, ts), atol=1e-10)
    loss = ifm_loss(net, x1, ts, noise=Gaussian(0.2), generator=torch.Generator().manual_seed(9))
    g = torch.Generator().manual_seed(9)
    with torch.no_grad():
        x0 = _euler_ref(net, x1, ts)
        x1h = x0 + 0.2 * torch.randn(x0.shape, generator=g, dtype=torch.float64)
    n = torch.randint(0, N - 1, (32,), generator=g)
    cur = x0 + (ts[n] / T_MAX)[:, None] * (x1h - x0)
    nxt = x0 + (ts[n + 1] / T_MAX)[:, None] * (x1h - x0)
    want = _ph(net(nxt, ts[n + 1]), (nxt - cur) / (ts[n + 1] - ts[n])[:, None]).mean()
    assert loss.item() == pytest.approx(want.item(), rel=1e-8)


def test_icm_denoising_is_one_evaluation_at_t_max():
    net = Net().double()
    x1 = torch.randn(8, 2, dtype=torch.float64)
    got = invert(net, x1, _karras(), algorithm="icm", noise=Gaussian(0.2), sigma_data=SD)
    assert torch.allclose(got, _f_ref(net, x1, torch.full((8,), T_MAX, dtype=torch.float64)), atol=1e-12)
