"""segment_sum/max/min: reference vs a Python loop over segments, gradients, ties, Triton body, bad input."""

import pytest
import torch

from scigen.kernels import segment_max, segment_min, segment_sum
from scigen.kernels._testing import kernel_device, triton_module
from scigen.kernels.reference import segment as ref

OPS = {"sum": segment_sum, "max": segment_max, "min": segment_min}


def loop_oracle(src, ptr, kind):
    """Per-segment torch.sum/amax/amin on slices; 0 for an empty segment (documented)."""
    rows = []
    for s in range(len(ptr) - 1):
        chunk = src[int(ptr[s]) : int(ptr[s + 1])]
        if chunk.shape[0] == 0:
            rows.append(torch.zeros(src.shape[1:], dtype=src.dtype))
        else:
            rows.append({"sum": chunk.sum(0), "max": chunk.amax(0), "min": chunk.amin(0)}[kind])
    return torch.stack(rows) if rows else src.new_zeros((0, *src.shape[1:]))


def random_csr(num_elements, num_segments, seed):
    g = torch.Generator().manual_seed(seed)
    cuts = torch.sort(torch.randint(0, num_elements + 1, (num_segments - 1,), generator=g)).values
    return torch.cat([torch.tensor([0]), cuts, torch.tensor([num_elements])])


CASES = [(0, 1), (0, 3), (1, 1), (7, 4), (33, 9), (130, 2), (130, 40)]


@pytest.mark.parametrize("e,s", CASES)
@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize("feat", [(), (3,), (2, 3)])
def test_reference_matches_loop(e, s, kind, feat):
    g = torch.Generator().manual_seed(e + s)
    src = torch.randn(e, *feat, generator=g, dtype=torch.float64)
    ptr = random_csr(e, s, seed=e * 7 + s)
    torch.testing.assert_close(OPS[kind](src, ptr), loop_oracle(src, ptr, kind))


def test_no_segments():
    out = segment_max(torch.zeros(0, 4), torch.tensor([0]))
    assert out.shape == (0, 4)


def test_empty_segments_are_zero_even_for_negative_data():
    src = -torch.ones(3, 2) * 5
    ptr = torch.tensor([0, 0, 3, 3])
    for f in OPS.values():
        out = f(src, ptr)
        assert out[0].eq(0).all() and out[2].eq(0).all()


@pytest.mark.parametrize("kind", ["sum", "max", "min"])
def test_gradcheck_float64(kind):
    g = torch.Generator().manual_seed(3)
    src = torch.randn(11, 3, generator=g, dtype=torch.float64, requires_grad=True)  # continuous: no ties
    ptr = torch.tensor([0, 4, 4, 5, 11])
    assert torch.autograd.gradcheck(lambda a: OPS[kind](a, ptr), (src,))


def test_max_min_gradient_goes_to_first_tie():
    src = torch.tensor([[1.0], [3.0], [3.0], [0.0], [0.0], [2.0]], requires_grad=True)
    ptr = torch.tensor([0, 3, 6])
    segment_max(src, ptr).sum().backward()
    assert src.grad.flatten().tolist() == [0, 1, 0, 0, 0, 1]
    src.grad = None
    segment_min(src, ptr).sum().backward()
    assert src.grad.flatten().tolist() == [1, 0, 0, 1, 0, 0]


def test_sum_gradient_is_broadcast_of_output_gradient():
    src = torch.randn(5, 2, requires_grad=True)
    ptr = torch.tensor([0, 2, 2, 5])
    w = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    (segment_sum(src, ptr) * w).sum().backward()
    torch.testing.assert_close(src.grad, w[[0, 0, 2, 2, 2]])


def test_float16_sum_accumulates_in_float32():
    src = torch.full((4096, 1), 0.1, dtype=torch.float16)  # fp16 running sum would stall at 256
    out = segment_sum(src, torch.tensor([0, 4096]))
    assert out.dtype == torch.float16
    torch.testing.assert_close(out.float(), torch.tensor([[4096 * 0.0999755859375]]), rtol=1e-3, atol=0)


# ---------------------------------------------------------------- Triton body vs reference
@pytest.mark.parametrize("e,s,f", [(0, 2, 3), (1, 1, 1), (7, 3, 3), (33, 5, 40), (130, 3, 3)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_triton_matches_reference(e, s, f, dtype):
    pytest.importorskip("triton")
    tri = triton_module("segment")
    dev = kernel_device()
    g = torch.Generator().manual_seed(e + f)
    src = torch.randn(e, f, generator=g).to(device=dev, dtype=dtype)
    if e >= 7:
        src[2] = src[1]  # ties inside a segment
        src[-1, 0] = float("-inf")
    ptr = random_csr(e, s, seed=e + s).to(dev)
    torch.testing.assert_close(
        tri.segment_sum(src, ptr),
        ref.segment_sum(src, ptr),
        atol=1e-3 if dtype == torch.float16 else 1e-5,
        rtol=1e-3,
    )
    for is_min in (False, True):
        out, arg = tri.segment_minmax(src, ptr, is_min)
        rout, rarg = ref.segment_minmax(src, ptr, is_min)
        torch.testing.assert_close(out, rout)
        torch.testing.assert_close(arg, rarg)
        grad = torch.randn(out.shape, generator=g).to(device=dev, dtype=dtype)
        torch.testing.assert_close(
            ref.segment_minmax_backward(grad, arg, e), ref.segment_minmax_backward(grad, rarg, e)
        )


def test_triton_all_neg_inf_segment():
    pytest.importorskip("triton")
    tri = triton_module("segment")
    dev = kernel_device()
    src = torch.full((3, 2), float("-inf"), device=dev)
    ptr = torch.tensor([0, 3], device=dev)
    out, arg = tri.segment_minmax(src, ptr, False)
    assert torch.isneginf(out).all() and arg.eq(0).all()


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "src,ptr,exc,match",
    [
        (torch.randn(4, 2), torch.tensor([0, 2, 3]), ValueError, "end at src.shape"),
        (torch.randn(4, 2), torch.tensor([1, 2, 4]), ValueError, "start at 0"),
        (torch.randn(4, 2), torch.tensor([0, 3, 2, 4]), ValueError, "non-decreasing"),
        (torch.randn(4, 2), torch.tensor([0.0, 4.0]), TypeError, "ptr must be an int64"),
        (torch.randn(4, 2), torch.tensor([], dtype=torch.int64), ValueError, "S \\+ 1 >= 1"),
        (torch.randn(4, 2), torch.tensor([[0, 4]]), ValueError, "ptr must have 1 dimensions"),
        (torch.tensor(1.0), torch.tensor([0]), ValueError, "at least 1 dimension"),
        (torch.arange(4), torch.tensor([0, 4]), TypeError, "src must be a floating-point"),
    ],
)
@pytest.mark.parametrize("kind", ["sum", "max"])
def test_bad_input_raises_clear_error(src, ptr, exc, match, kind):
    with pytest.raises(exc, match=match):
        OPS[kind](src, ptr)


# ---------------------------------------------------------------- compiled kernels / torch.compile
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("kind", ["sum", "max", "min"])
def test_cuda_op_matches_loop(dtype, kind):
    src = torch.randn(1000, 5, 7, dtype=torch.float64)
    ptr = random_csr(1000, 50, seed=1)
    srcc = src.to("cuda", dtype).requires_grad_(True)
    out = OPS[kind](srcc, ptr.cuda())
    expect = loop_oracle(srcc.detach().double().cpu(), ptr, kind)
    torch.testing.assert_close(
        out.double().cpu(), expect, atol=0.05 if dtype != torch.float32 else 1e-4, rtol=1e-2
    )
    out.sum().backward()
    if kind == "sum":
        assert srcc.grad.eq(1).all()
    else:  # exactly one routed gradient per non-empty (segment, feature)
        nonempty = int((ptr[1:] > ptr[:-1]).sum())
        assert int(srcc.grad.sum()) == nonempty * 35


@pytest.mark.slow
def test_torch_compile_smoke_cpu():
    src = torch.randn(9, 2, requires_grad=True)
    ptr = torch.tensor([0, 4, 4, 9])
    f = torch.compile(lambda a, p: segment_sum(a, p) + segment_max(a, p), fullgraph=True)
    out = f(src, ptr)
    out.sum().backward()
    torch.testing.assert_close(
        out, loop_oracle(src.detach(), ptr, "sum") + loop_oracle(src.detach(), ptr, "max")
    )


def test_triton_ties_across_row_chunks_pick_first():
    pytest.importorskip("triton")
    tri = triton_module("segment")
    dev = kernel_device()
    src = torch.zeros(40, 1, device=dev)
    src[[3, 20, 35]] = 5.0  # rows 3, 20, 35 fall in different BLOCK_E = 16 chunks
    src[[5, 17, 39]] = -5.0
    ptr = torch.tensor([0, 40], device=dev)
    assert tri.segment_minmax(src, ptr, False)[1].item() == 3
    assert tri.segment_minmax(src, ptr, True)[1].item() == 5
