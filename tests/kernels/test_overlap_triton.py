"""Triton overlap kernel body under TRITON_INTERPRET=1 (fp32/fp16) against the reference; CUDA on `gpu`."""

import pytest
import torch

pytest.importorskip("triton")

from scigen.kernels import overlap as ops  # noqa: E402
from scigen.kernels.reference import overlap as ref  # noqa: E402

CANVAS = (-1.0, 1.0, -0.9, 1.1)


def _boxes(v, seed):
    g = torch.Generator().manual_seed(seed)
    pos = (torch.rand(v, 2, generator=g) * 2 - 1) * 1.1
    size = torch.rand(v, 2, generator=g) * 0.5 + 0.05
    mask = torch.rand(v, generator=g) > 0.2
    return pos, size, mask


@pytest.fixture(scope="module")
def tri():
    from scigen.kernels._testing import triton_module

    return triton_module("overlap")


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float16, 2e-3)])
@pytest.mark.parametrize("v", [0, 1, 37, 70])
def test_kernel_matches_reference(tri, kdev, v, dtype, tol):
    pos, size, mask = _boxes(v, seed=v)
    pos, size = pos.to(dtype), size.to(dtype)
    p32, s32 = pos.float(), size.float()  # the reference on the same (rounded) inputs, in fp32
    k = 11.0
    b, gb = ref.boundary_energy_and_grad(p32, s32, mask, k, CANVAS)
    pk, sk, mk = pos.to(kdev), size.to(kdev), mask.to(kdev)
    e = tri.overlap_rows(pk, sk, mk, k, tri.MODE_ENERGY).cpu().sum() / 2 + b
    torch.testing.assert_close(e, ref.overlap_energy_reference(p32, s32, mask, k, CANVAS), rtol=tol, atol=tol)
    g = tri.overlap_rows(pk, sk, mk, k, tri.MODE_GRAD).cpu() + gb
    torch.testing.assert_close(g, ref.overlap_energy_grad_reference(p32, s32, mask, k, CANVAS), rtol=tol, atol=tol)
    a = tri.overlap_rows(pk, sk, mk, k, tri.MODE_AREA).cpu().sum() / 2
    torch.testing.assert_close(a, ref.total_overlap_area_reference(p32, s32, mask), rtol=tol, atol=tol)


def test_kernel_block_shapes(tri, kdev):
    pos, size, mask = _boxes(45, seed=1)
    want = ref.overlap_energy_grad_reference(pos, size, torch.ones_like(mask), 20.0, CANVAS)
    _, gb = ref.boundary_energy_and_grad(pos, size, torch.ones_like(mask), 20.0, CANVAS)
    ones = torch.ones_like(mask).to(kdev)
    got = tri.overlap_rows(pos.to(kdev), size.to(kdev), ones, 20.0, tri.MODE_GRAD, block_i=16, block_j=16).cpu() + gb
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.gpu
@pytest.mark.parametrize("v", [1, 333, 2049])
def test_cuda_op_matches_reference(v):
    pos, size, mask = _boxes(v, seed=v)
    k = 15.0
    pc = pos.cuda().requires_grad_(True)
    e = ops.box_overlap_energy(pc, size.cuda(), mask.cuda(), k, CANVAS)
    e.backward()
    torch.testing.assert_close(e.cpu(), ref.overlap_energy_reference(pos, size, mask, k, CANVAS), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(
        pc.grad.cpu(), ref.overlap_energy_grad_reference(pos, size, mask, k, CANVAS), rtol=1e-4, atol=1e-4
    )
    torch.testing.assert_close(
        ops.total_overlap_area(pos.cuda(), size.cuda(), mask.cuda()).cpu(),
        ref.total_overlap_area_reference(pos, size, mask),
        rtol=1e-4,
        atol=1e-4,
    )
