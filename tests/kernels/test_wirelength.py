"""net_hpwl / wa_wirelength: hand computation, numpy brute force, limits, gradients, validation."""

import numpy as np
import pytest
import torch

from scigen.kernels.wirelength import net_hpwl, wa_wirelength


def _netlist(v, degrees, seed, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    pos = torch.rand(v, 2, generator=g, dtype=dtype) * 2 - 1
    p = int(sum(degrees))
    pin_offset = (torch.rand(p, 2, generator=g, dtype=dtype) - 0.5) * 0.2
    pin_obj = torch.randint(0, v, (p,), generator=g)
    net_ptr = torch.tensor([0, *np.cumsum(degrees).tolist()], dtype=torch.long)
    return pos, pin_offset, pin_obj, net_ptr


def _pins_np(pos, off, obj):
    return pos.numpy()[obj.numpy()] + off.numpy()


def _wa_numpy(x, gamma):
    if len(x) == 0:
        return 0.0
    ep, em = np.exp(x / gamma), np.exp(-x / gamma)
    return float((x * ep).sum() / ep.sum() - (x * em).sum() / em.sum())


def test_hpwl_hand_computed():
    pos = torch.tensor([[0.0, 0.0], [1.0, 2.0], [-1.0, 0.5]])
    pin_offset = torch.tensor([[0.1, 0.0], [0.0, -0.5], [0.0, 0.0], [0.2, 0.2], [0.0, 0.0]])
    pin_obj = torch.tensor([0, 1, 2, 0, 0])
    net_ptr = torch.tensor([0, 3, 3, 4, 5])  # nets: {p0, p1, p2}, {}, {p3}, {p4}
    # net 0 pins: (0.1, 0), (1, 1.5), (-1, 0.5) -> x span 2.0, y span 1.5
    out = net_hpwl(pos, pin_offset, pin_obj, net_ptr)
    torch.testing.assert_close(out, torch.tensor([3.5, 0.0, 0.0, 0.0]))


@pytest.mark.parametrize("seed", [0, 1])
def test_hpwl_and_wa_match_numpy(seed):
    degrees = [2, 5, 0, 1, 3, 17, 4]
    pos, off, obj, ptr = _netlist(9, degrees, seed)
    pins = _pins_np(pos, off, obj)
    gamma = 0.07
    want_h, want_w = [], []
    for n in range(len(degrees)):
        q = pins[ptr[n] : ptr[n + 1]]
        want_h.append(float(np.ptp(q[:, 0]) + np.ptp(q[:, 1])) if len(q) else 0.0)
        want_w.append(_wa_numpy(q[:, 0], gamma) + _wa_numpy(q[:, 1], gamma) if len(q) else 0.0)
    np.testing.assert_allclose(net_hpwl(pos, off, obj, ptr).numpy(), want_h, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(wa_wirelength(pos, off, obj, ptr, gamma).numpy(), want_w, rtol=1e-10, atol=1e-15)


def test_wa_tends_to_hpwl_and_is_below():
    pos, off, obj, ptr = _netlist(12, [3, 6, 2, 9], seed=4)
    h = net_hpwl(pos, off, obj, ptr)
    gaps = []
    for gamma in (0.5, 0.05, 5e-3, 5e-4):
        w = wa_wirelength(pos, off, obj, ptr, gamma)
        assert torch.all(w <= h + 1e-12) and torch.all(w >= 0)
        gaps.append((h - w).abs().max().item())
    assert gaps == sorted(gaps, reverse=True)
    assert gaps[-1] < 1e-6


def test_hpwl_gradient_is_argmax_minus_argmin():
    pos, off, obj, ptr = _netlist(6, [4, 3], seed=2)
    pos.requires_grad_(True)
    off.requires_grad_(True)
    weights = torch.tensor([1.0, -2.0], dtype=torch.float64)
    (net_hpwl(pos, off, obj, ptr) * weights).sum().backward()
    pins = _pins_np(pos.detach(), off.detach(), obj)
    want = np.zeros((7, 2))
    for n in range(2):
        s, e = int(ptr[n]), int(ptr[n + 1])
        for a in range(2):
            want[s + pins[s:e, a].argmax(), a] += weights[n].item()
            want[s + pins[s:e, a].argmin(), a] -= weights[n].item()
    np.testing.assert_allclose(off.grad.numpy(), want)
    want_pos = np.zeros((6, 2))
    np.add.at(want_pos, obj.numpy(), want)
    np.testing.assert_allclose(pos.grad.numpy(), want_pos)


def test_gradcheck_float64():
    pos, off, obj, ptr = _netlist(7, [3, 0, 5, 1, 2], seed=3)
    pos.requires_grad_(True)
    off.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda p, o: wa_wirelength(p, o, obj, ptr, 0.3), (pos, off))
    assert torch.autograd.gradcheck(lambda p, o: net_hpwl(p, o, obj, ptr), (pos, off))


def test_empty():
    pos = torch.zeros(3, 2)
    off = torch.zeros(0, 2)
    obj = torch.zeros(0, dtype=torch.long)
    assert net_hpwl(pos, off, obj, torch.zeros(1, dtype=torch.long)).shape == (0,)
    torch.testing.assert_close(wa_wirelength(pos, off, obj, torch.zeros(3, dtype=torch.long), 0.1), torch.zeros(2))


def test_validation():
    pos, off, obj, ptr = _netlist(4, [2, 2], seed=0)
    with pytest.raises(ValueError, match="pos"):
        net_hpwl(pos[:, :1], off, obj, ptr)
    with pytest.raises(ValueError, match="pin_obj"):
        net_hpwl(pos, off, obj[:3], ptr)
    with pytest.raises(TypeError, match="pin_obj"):
        net_hpwl(pos, off, obj.float(), ptr)
    with pytest.raises(ValueError, match="net_ptr"):
        net_hpwl(pos, off, obj, torch.tensor([0, 3, 2]))
    with pytest.raises(ValueError, match="net_ptr"):
        net_hpwl(pos, off, obj, torch.tensor([0, 2, 5]))
    with pytest.raises(ValueError, match="pin_obj"):
        net_hpwl(pos, off, torch.tensor([0, 1, 2, 4]), ptr)
    with pytest.raises(ValueError, match="gamma"):
        wa_wirelength(pos, off, obj, ptr, 0.0)
