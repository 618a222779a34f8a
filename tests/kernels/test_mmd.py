"""mmd_rbf: reference vs the dense O(n·m) formula, gradients, Triton body vs reference, bad input."""

import pytest
import torch

from scigen.kernels import mmd_rbf
from scigen.kernels._testing import kernel_device, triton_module
from scigen.kernels.reference import mmd as ref

BW = [0.5, 1.0, 2.0]


def dense_mmd2(x, y, bandwidths, unbiased):
    """Oracle: direct cdist formula in float64 (Gretton et al. 2012, eqs. 3 and 5)."""
    x, y = x.double(), y.double()
    h = torch.as_tensor(bandwidths, dtype=torch.float64)

    def k(a, b):
        d2 = torch.cdist(a, b).pow(2)
        return torch.exp(-d2[..., None] / (2 * h**2)).sum(-1)

    n, m = len(x), len(y)
    kxx, kyy, kxy = k(x, x), k(y, y), k(x, y)
    if unbiased:
        kxx = kxx - torch.diag(torch.diag(kxx))
        kyy = kyy - torch.diag(torch.diag(kyy))
        return kxx.sum() / (n * (n - 1)) + kyy.sum() / (m * (m - 1)) - 2 * kxy.mean()
    return kxx.mean() + kyy.mean() - 2 * kxy.mean()


def _sample(n, m, d=3, seed=0, dtype=torch.float64, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g, dtype=torch.float64)
    y = 0.7 * torch.randn(m, d, generator=g, dtype=torch.float64) + 0.5
    return x.to(device=device, dtype=dtype), y.to(device=device, dtype=dtype)


@pytest.mark.parametrize("n,m", [(1, 1), (7, 5), (33, 130), (2, 3)])
@pytest.mark.parametrize("unbiased", [False, True])
def test_reference_matches_dense_formula(n, m, unbiased):
    if unbiased and min(n, m) < 2:
        pytest.skip("unbiased needs n, m >= 2")
    x, y = _sample(n, m)
    expect = dense_mmd2(x, y, BW, unbiased)
    torch.testing.assert_close(mmd_rbf(x, y, BW, unbiased=unbiased), expect)
    # tiny tiles: many row chunks, same result
    got = ref.mmd_rbf(x, y, torch.tensor(BW, dtype=torch.float64), unbiased, tile_elements=5)
    torch.testing.assert_close(got, expect)


def test_identical_samples_biased_is_zero_and_unbiased_negative():
    x, _ = _sample(9, 1)
    assert abs(mmd_rbf(x, x, BW).item()) < 1e-12
    # U-statistic with y = x: sum_{i!=i'} K/(n(n-1)) * 2 - 2 mean K < 0 exactly by the diagonal term
    u = mmd_rbf(x, x, BW, unbiased=True).item()
    assert u < 0
    torch.testing.assert_close(torch.tensor(u, dtype=torch.float64), dense_mmd2(x, x, BW, True))


def test_single_bandwidth_two_points_closed_form():
    # n = m = 1, biased: 1 + 1 - 2 exp(-r^2 / (2 h^2))
    x = torch.tensor([[0.0, 0.0]], dtype=torch.float64)
    y = torch.tensor([[3.0, 4.0]], dtype=torch.float64)
    expect = 2 - 2 * torch.exp(torch.tensor(-25.0 / (2 * 4.0), dtype=torch.float64))
    torch.testing.assert_close(mmd_rbf(x, y, 2.0), expect)


@pytest.mark.parametrize("unbiased", [False, True])
def test_gradcheck_float64(unbiased):
    x, y = _sample(5, 4, seed=1)
    x.requires_grad_(True)
    y.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda a, b: mmd_rbf(a, b, BW, unbiased=unbiased), (x, y))


@pytest.mark.parametrize("unbiased", [False, True])
def test_gradient_matches_dense_autograd(unbiased):
    x, y = _sample(33, 7, seed=2)
    x1, y1 = x.clone().requires_grad_(True), y.clone().requires_grad_(True)
    x2, y2 = x.clone().requires_grad_(True), y.clone().requires_grad_(True)
    (3.0 * mmd_rbf(x1, y1, BW, unbiased=unbiased)).backward()
    (3.0 * dense_mmd2(x2, y2, BW, unbiased)).backward()
    torch.testing.assert_close(x1.grad, x2.grad)
    torch.testing.assert_close(y1.grad, y2.grad)


def test_bandwidths_get_no_gradient():
    x, y = _sample(4, 4)
    h = torch.tensor([1.0], dtype=torch.float64, requires_grad=True)
    x.requires_grad_(True)
    mmd_rbf(x, y, h).backward()
    assert h.grad is None and x.grad is not None


def test_float16_input_is_accumulated_in_float32():
    x, y = _sample(40, 30, seed=3)
    got = mmd_rbf(x.half(), y.half(), BW)
    assert got.dtype == torch.float16
    expect = dense_mmd2(x.half().double(), y.half().double(), BW, False)
    torch.testing.assert_close(got.double(), expect, atol=2e-3, rtol=2e-3)


# ---------------------------------------------------------------- Triton body vs reference
TRITON_SIZES = [(1, 1), (7, 33), (130, 7)]


@pytest.mark.parametrize("n,m", TRITON_SIZES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("unbiased", [False, True])
def test_triton_forward_and_backward_match_reference(n, m, dtype, unbiased):
    pytest.importorskip("triton")
    if unbiased and min(n, m) < 2:
        pytest.skip("unbiased needs n, m >= 2")
    tri = triton_module("mmd")
    dev = kernel_device()
    x, y = _sample(n, m, d=3, seed=n + m, dtype=dtype, device=dev)
    bw = torch.tensor(BW, dtype=torch.float32, device=dev)
    tol = {"atol": 1e-5, "rtol": 1e-5} if dtype == torch.float32 else {"atol": 2e-3, "rtol": 2e-3}
    torch.testing.assert_close(tri.mmd_rbf(x, y, bw, unbiased), ref.mmd_rbf(x, y, bw, unbiased), **tol)
    grad = torch.tensor(1.5, dtype=dtype, device=dev)
    gx, gy = tri.mmd_rbf_backward(grad, x, y, bw, unbiased)
    rx, ry = ref.mmd_rbf_backward(grad, x, y, bw, unbiased)
    torch.testing.assert_close(gx, rx, **tol)
    torch.testing.assert_close(gy, ry, **tol)


def test_triton_wide_features_cross_feature_blocks():
    pytest.importorskip("triton")
    tri = triton_module("mmd")
    dev = kernel_device()
    x, y = _sample(9, 11, d=19, seed=5, dtype=torch.float32, device=dev)  # 19 > BLOCK_D: 3 feature chunks
    bw = torch.tensor([3.0, 6.0], device=dev)
    torch.testing.assert_close(tri.mmd_rbf(x, y, bw, False), ref.mmd_rbf(x, y, bw, False))
    g = torch.tensor(1.0, device=dev)
    for a, b in zip(
        tri.mmd_rbf_backward(g, x, y, bw, False), ref.mmd_rbf_backward(g, x, y, bw, False), strict=True
    ):
        torch.testing.assert_close(a, b)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "x,y,bw,unbiased,exc,match",
    [
        (torch.randn(0, 3), torch.randn(4, 3), BW, False, ValueError, "x must have at least 1 row"),
        (torch.randn(1, 3), torch.randn(4, 3), BW, True, ValueError, "at least 2 rows"),
        (torch.randn(4, 3), torch.randn(4, 2), BW, False, ValueError, "same feature dimension"),
        (torch.randn(4), torch.randn(4, 1), BW, False, ValueError, "x must have 2 dimensions"),
        (torch.randn(4, 3), torch.randn(4, 3).double(), BW, False, TypeError, "one dtype"),
        (torch.randint(0, 3, (4, 3)), torch.randn(4, 3), BW, False, TypeError, "floating-point"),
        ([[0.0]], torch.randn(4, 1), BW, False, TypeError, "x must be a torch.Tensor"),
        (torch.randn(4, 3), torch.randn(4, 3), [1.0, -1.0], False, ValueError, "bandwidths must be positive"),
        (torch.randn(4, 3), torch.randn(4, 3), [], False, ValueError, "at least one value"),
        (
            torch.randn(4, 3),
            torch.randn(4, 3),
            [float("nan")],
            False,
            ValueError,
            "bandwidths must be finite",
        ),
    ],
)
def test_bad_input_raises_clear_error(x, y, bw, unbiased, exc, match):
    with pytest.raises(exc, match=match):
        mmd_rbf(x, y, bw, unbiased=unbiased)


# ---------------------------------------------------------------- compiled kernels / torch.compile
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_cuda_op_matches_cpu_reference(dtype):
    x, y = _sample(257, 130, d=5, seed=7)
    xc = x.to("cuda", dtype).requires_grad_(True)
    yc = y.to("cuda", dtype).requires_grad_(True)
    out = mmd_rbf(xc, yc, BW, unbiased=True)
    out.backward()
    x64, y64 = x.clone().requires_grad_(True), y.clone().requires_grad_(True)
    expect = dense_mmd2(x64, y64, BW, True)
    expect.backward()
    tol = {"atol": 1e-5, "rtol": 1e-4} if dtype == torch.float32 else {"atol": 3e-2, "rtol": 3e-2}
    torch.testing.assert_close(out.double().cpu(), expect, **tol)
    torch.testing.assert_close(xc.grad.double().cpu(), x64.grad, **tol)
    torch.testing.assert_close(yc.grad.double().cpu(), y64.grad, **tol)


@pytest.mark.slow
def test_torch_compile_smoke_cpu():
    x, y = _sample(6, 5, dtype=torch.float32)
    x.requires_grad_(True)
    f = torch.compile(lambda a, b: mmd_rbf(a, b, BW, unbiased=True), fullgraph=True)
    out = f(x, y)
    out.backward()
    torch.testing.assert_close(out.double(), dense_mmd2(x.detach(), y, BW, True), atol=1e-5, rtol=1e-5)
    assert torch.isfinite(x.grad).all()
