"""Tests of scigen.core.nn.UNet: shapes (1-D and 2-D), bad input, and that it can learn."""

from __future__ import annotations

import pytest
import torch

from scigen.core.nn import UNet


@pytest.mark.parametrize(
    ("dims", "shape", "mults"), [(2, (2, 3, 8, 12), (1, 2, 2)), (1, (3, 2, 16), (1, 2)), (2, (1, 1, 8, 8), (1,))]
)
def test_unet_output_shape(dims, shape, mults):
    torch.manual_seed(0)
    net = UNet(shape[1], out_channels=5, dims=dims, base_channels=8, channel_mults=mults)
    out = net(torch.randn(shape), torch.rand(shape[0]))
    assert out.shape == (shape[0], 5, *shape[2:])
    # the zero-initialised output conv makes the untrained network return zeros
    assert torch.count_nonzero(out) == 0


def test_unet_rejects_bad_input():
    net = UNet(2, base_channels=8, channel_mults=(1, 2, 2))
    with pytest.raises(ValueError, match="divisible by 4"):
        net(torch.randn(1, 2, 10, 16), torch.rand(1))
    with pytest.raises(ValueError, match="2 channels"):
        net(torch.randn(1, 3, 16, 16), torch.rand(1))
    with pytest.raises(ValueError, match="4 dims"):
        net(torch.randn(2, 16, 16), torch.rand(2))
    with pytest.raises(ValueError, match="cond"):
        net(torch.randn(1, 2, 16, 16), torch.rand(1), torch.randn(1, 3))


def test_unet_learns_a_time_dependent_target():
    # a fixed target y(x, t) = t * roll(x) + (1 - t) * x**2 needs both the spatial path and the time input
    torch.manual_seed(0)
    net = UNet(1, dims=2, base_channels=8, channel_mults=(1, 2), cond_dim=2)
    x = torch.randn(4, 1, 8, 8)
    t = torch.linspace(0, 1, 4)
    c = torch.randn(4, 2)
    y = t[:, None, None, None] * torch.roll(x, 1, dims=-1) + (1 - t[:, None, None, None]) * x**2
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    with torch.no_grad():
        mse0 = torch.mean((net(x, t, c) - y) ** 2).item()
    for _ in range(20):
        opt.zero_grad()
        loss = torch.mean((net(x, t, c) - y) ** 2)
        loss.backward()
        opt.step()
    with torch.no_grad():
        mse1 = torch.mean((net(x, t, c) - y) ** 2).item()
    assert mse1 < 0.5 * mse0
