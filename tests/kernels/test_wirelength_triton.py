"""Triton wirelength kernels under TRITON_INTERPRET=1 (fp32/fp16) against the reference; CUDA on `gpu`."""

import numpy as np
import pytest
import torch

pytest.importorskip("triton")

from scigen.kernels import wirelength as ops  # noqa: E402
from scigen.kernels.reference import wirelength as ref  # noqa: E402


def _pins(degrees, seed):
    g = torch.Generator().manual_seed(seed)
    p = int(sum(degrees))
    pins = torch.rand(p, 2, generator=g) * 2 - 1
    ptr = torch.tensor([0, *np.cumsum(degrees).tolist()], dtype=torch.long)
    grad = torch.randn(len(degrees), generator=g)
    return pins, ptr, grad


@pytest.fixture(scope="module")
def tri():
    from scigen.kernels._testing import triton_module

    return triton_module("wirelength")


DEGREES = [
    [],
    [1],
    [0, 0],
    [2, 0, 1, 5, 63, 64, 65, 130, 3],
]


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float16, 1e-3)])
@pytest.mark.parametrize("degrees", DEGREES)
def test_kernel_matches_reference(tri, kdev, degrees, dtype, tol):
    pins, ptr, grad = _pins(degrees, seed=len(degrees))
    pins = pins.to(dtype)
    p32 = pins.float()
    gamma = 0.05
    pk, ptrk, gk = pins.to(kdev), ptr.to(kdev), grad.to(kdev)
    torch.testing.assert_close(tri.hpwl(pk, ptrk).cpu(), ref.hpwl_reference(p32, ptr), rtol=tol, atol=tol)
    torch.testing.assert_close(tri.wa(pk, ptrk, gamma).cpu(), ref.wa_reference(p32, ptr, gamma), rtol=tol, atol=tol)
    torch.testing.assert_close(
        tri.hpwl_pin_grad(gk, pk, ptrk).cpu(), ref.hpwl_pin_grad(grad, p32, ptr), rtol=tol, atol=tol
    )
    torch.testing.assert_close(
        tri.wa_pin_grad(gk, pk, ptrk, gamma).cpu(), ref.wa_pin_grad(grad, p32, ptr, gamma), rtol=tol, atol=10 * tol
    )


def test_kernel_hpwl_ties_share_gradient(tri, kdev):
    pins = torch.tensor([[0.0, 1.0], [2.0, 1.0], [2.0, 0.0], [0.0, 1.0]])
    ptr = torch.tensor([0, 4])
    grad = torch.tensor([1.0])
    want = torch.tensor([[-0.5, 1 / 3], [0.5, 1 / 3], [0.5, -1.0], [-0.5, 1 / 3]])
    torch.testing.assert_close(tri.hpwl_pin_grad(grad.to(kdev), pins.to(kdev), ptr.to(kdev)).cpu(), want)
    torch.testing.assert_close(ref.hpwl_pin_grad(grad, pins, ptr), want)


@pytest.mark.gpu
def test_cuda_op_matches_reference():
    g = torch.Generator().manual_seed(0)
    v, n = 500, 300
    degrees = torch.randint(0, 40, (n,), generator=g)
    ptr = torch.cat([torch.zeros(1, dtype=torch.long), degrees.cumsum(0)])
    p = int(ptr[-1])
    pos = torch.rand(v, 2, generator=g)
    off = torch.rand(p, 2, generator=g) * 0.01
    obj = torch.randint(0, v, (p,), generator=g)
    for fn, args in ((ops.net_hpwl, ()), (ops.wa_wirelength, (0.02,))):
        pc = pos.cuda().requires_grad_(True)
        out = fn(pc, off.cuda(), obj.cuda(), ptr.cuda(), *args)
        out.sum().backward()
        pr = pos.clone().requires_grad_(True)
        want = fn(pr, off, obj, ptr, *args)
        want.sum().backward()
        torch.testing.assert_close(out.cpu(), want, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(pc.grad.cpu(), pr.grad, rtol=1e-4, atol=1e-3)
