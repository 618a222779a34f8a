"""Triton EGNN kernel body (TRITON_INTERPRET=1 without a GPU) vs the reference, fp32 and fp16."""

import pytest
import torch

pytest.importorskip("triton")

from scigen.kernels import egnn as ops  # noqa: E402
from scigen.kernels.reference import egnn as ref  # noqa: E402


@pytest.fixture(scope="module")
def tri():
    from scigen.kernels._testing import triton_module

    return triton_module("egnn")


def _args(sizes, f, hid, seed, rows=2, gate=True, coord=True):
    g = torch.Generator().manual_seed(seed)

    def r(*s, scale=1.0):
        return torch.randn(*s, generator=g) * scale

    n = sum(sizes)
    ptr = torch.tensor([0, *torch.tensor(sizes, dtype=torch.long).cumsum(0).tolist()], dtype=torch.long)
    return [
        r(n, f), r(n, 3), r(n, 3), ptr, r(f, hid, scale=0.4), r(f, hid, scale=0.4), r(hid, scale=0.1),
        r(hid, hid, scale=0.3), r(hid, scale=0.1), r(rows, hid, scale=0.2), r(hid, scale=0.3), r(1),
        r(hid, scale=0.3), gate, coord, 15.0, 1.0, 2.0,
    ]


CASES = [
    # sizes, F, H, rows, gate, coord, block_h
    ([2, 1, 0, 17], 5, 20, 2, True, True, 16),  # molecule wider than BLOCK_J, H over two chunks, odd H
    ([2, 5], 4, 16, 1, False, True, None),
    ([4], 3, 8, 2, True, False, None),  # H below the minimum tile (padded)
    ([1, 1], 3, 8, 1, True, True, None),  # no edges at all
    ([], 3, 8, 1, True, True, None),  # no molecules
]


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-4), (torch.float16, 2e-2)])
@pytest.mark.parametrize("sizes,f,hid,rows,gate,coord,block_h", CASES)
def test_kernel_matches_reference(tri, kdev, sizes, f, hid, rows, gate, coord, block_h, dtype, tol):
    if dtype == torch.float16 and sum(sizes) > 10 and kdev.type == "cpu":
        sizes = [2, 1, 0, 5]  # the interpreter is slow: the wide case runs in fp32 only
    args = _args(sizes, f, hid, seed=len(sizes) + hid, rows=rows, gate=gate, coord=coord)
    tensors = [a.to(dtype) if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
    want_m, want_dx = ref.egnn_aggregate(*[a.float() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
                                           for a in tensors])
    on_dev = [a.to(kdev) if isinstance(a, torch.Tensor) else a for a in tensors]
    m, dx = tri.egnn_aggregate(*on_dev, block_h=block_h)
    scale = max(1.0, want_m.abs().max().item() if want_m.numel() else 1.0)
    torch.testing.assert_close(m.float().cpu(), want_m, rtol=tol, atol=tol * scale)
    torch.testing.assert_close(dx.float().cpu(), want_dx, rtol=tol, atol=tol * 15)


@pytest.mark.gpu
def test_cuda_op_forward_and_backward():
    args = _args([29] * 8 + [7, 1], 16, 64, seed=0)
    cpu = [a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
    names = ["h", "x", "x_ref", "ptr", "W_a", "W_b", "b1", "W2", "b2", "w_d", "w_att", "b_att", "w_x"]

    def run(vals):
        d = dict(zip(names, vals, strict=False))
        return ops.egnn_aggregate(
            d["h"], d["x"], d["ptr"], d["W_a"], d["W_b"], d["b1"], d["W2"], d["b2"], d["w_d"],
            x_ref=d["x_ref"], w_att=d["w_att"], b_att=d["b_att"], w_x=d["w_x"], normalization_factor=2.0,
        )

    leaves_c = [a.clone().requires_grad_(True) if isinstance(a, torch.Tensor) and a.is_floating_point() else a
                for a in cpu[:13]]
    leaves_g = [a.float().cuda().requires_grad_(True) if isinstance(a, torch.Tensor) and a.is_floating_point()
                else a.cuda() for a in cpu[:13]]
    m, dx = run(leaves_c)
    mg, dxg = run(leaves_g)
    torch.testing.assert_close(mg.double().cpu(), m, rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(dxg.double().cpu(), dx, rtol=1e-3, atol=1e-3)
    (m.sum() + dx.square().sum()).backward()
    (mg.sum() + dxg.square().sum()).backward()
    for a, b in zip(leaves_c, leaves_g, strict=True):
        if a.is_floating_point():
            torch.testing.assert_close(b.grad.double().cpu(), a.grad, rtol=1e-3, atol=1e-3)
