"""sinkhorn_log: vs POT (same iterations; eps -> 0 vs exact EMD), gradients, Triton body, bad input."""

import numpy as np
import ot
import pytest
import torch

from scigen.kernels import sinkhorn_log
from scigen.kernels._testing import kernel_device, triton_module
from scigen.kernels.reference import sinkhorn as ref

pytestmark = pytest.mark.filterwarnings("ignore:Sinkhorn did not converge")


def _problem(bsz, n, m, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(bsz, n, 2, generator=g, dtype=torch.float64)
    y = torch.randn(bsz, m, 2, generator=g, dtype=torch.float64) + 0.5
    cost = torch.cdist(x, y).pow(2)
    a = torch.rand(bsz, n, generator=g, dtype=torch.float64) + 0.2
    b = torch.rand(bsz, m, generator=g, dtype=torch.float64) + 0.2
    return cost.to(dtype), (a / a.sum(1, keepdim=True)).to(dtype), (b / b.sum(1, keepdim=True)).to(dtype)


@pytest.mark.parametrize("n,m", [(1, 1), (7, 5), (33, 13)])
def test_plan_matches_pot_sinkhorn_same_iterations(n, m):
    cost, a, b = _problem(2, n, m)
    plan = sinkhorn_log(cost, a, b, eps=0.3, n_iters=20)
    for i in range(2):
        expect = ot.sinkhorn(a[i].numpy(), b[i].numpy(), cost[i].numpy(), 0.3, numItermax=20, stopThr=0.0)
        np.testing.assert_allclose(plan[i].numpy(), expect, rtol=1e-9, atol=1e-12)
    tc = sinkhorn_log(cost, a, b, eps=0.3, n_iters=20, return_plan=False)
    torch.testing.assert_close(tc, (plan * cost).sum((1, 2)))


def test_converged_marginals_and_unbatched_uniform_default():
    cost, _, _ = _problem(1, 9, 6, seed=1)
    plan = sinkhorn_log(cost[0], eps=0.5, n_iters=300)
    assert plan.shape == (9, 6)
    torch.testing.assert_close(plan.sum(1), torch.full((9,), 1 / 9, dtype=torch.float64))
    torch.testing.assert_close(plan.sum(0), torch.full((6,), 1 / 6, dtype=torch.float64))


def test_small_eps_cost_approaches_exact_emd():
    cost, a, b = _problem(1, 12, 10, seed=2)
    cost = cost / cost.max()
    got = sinkhorn_log(cost, a, b, eps=2e-3, n_iters=3000, return_plan=False)
    exact = ot.emd2(a[0].numpy(), b[0].numpy(), cost[0].numpy())
    assert abs(got.item() - exact) < 5e-3 * max(exact, 1e-3) + 1e-4


def naive_unrolled(cost, a, b, eps, n_iters):
    """Independent oracle: scaling form u, v (POT's sinkhorn_knopp), differentiable by autograd."""
    k = torch.exp(-cost / eps)
    u = torch.ones_like(a)
    for _ in range(n_iters):
        v = b / torch.einsum("bij,bi->bj", k, u)
        u = a / torch.einsum("bij,bj->bi", k, v)
    return u[:, :, None] * k * v[:, None, :]


def test_gradients_match_autograd_through_naive_unrolled_loop():
    cost, a, b = _problem(2, 6, 5, seed=3)
    w = torch.randn(2, 6, 5, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    leaves1 = [t.clone().requires_grad_(True) for t in (cost, a, b)]
    leaves2 = [t.clone().requires_grad_(True) for t in (cost, a, b)]
    (sinkhorn_log(*leaves1, eps=0.4, n_iters=8) * w).sum().backward()
    (naive_unrolled(*leaves2, eps=0.4, n_iters=8) * w).sum().backward()
    for l1, l2 in zip(leaves1, leaves2, strict=True):
        torch.testing.assert_close(l1.grad, l2.grad)


def test_gradcheck_float64():
    cost, a, b = _problem(1, 3, 4, seed=4)
    inputs = tuple(t.clone().requires_grad_(True) for t in (cost, a, b))
    assert torch.autograd.gradcheck(lambda c, x, y: sinkhorn_log(c, x, y, eps=0.5, n_iters=5), inputs)
    assert torch.autograd.gradcheck(
        lambda c: sinkhorn_log(c, eps=0.5, n_iters=5, return_plan=False), (inputs[0],)
    )


def test_float16_cost_is_iterated_in_float32():
    cost, a, b = _problem(1, 7, 5, seed=5)
    got = sinkhorn_log(cost.half(), a.half(), b.half(), eps=0.3, n_iters=20)
    assert got.dtype == torch.float16
    expect = sinkhorn_log(cost.half().double(), a.half().double(), b.half().double(), eps=0.3, n_iters=20)
    torch.testing.assert_close(got.double(), expect, atol=1e-3, rtol=1e-2)


# ---------------------------------------------------------------- Triton body vs reference
@pytest.mark.parametrize("n,m", [(1, 1), (7, 33), (130, 7)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_triton_forward_matches_reference(n, m, dtype):
    pytest.importorskip("triton")
    tri = triton_module("sinkhorn")
    dev = kernel_device()
    cost, a, b = (t.to(device=dev, dtype=dtype) for t in _problem(2, n, m, seed=n + m))
    out = tri.sinkhorn_potentials(cost, a, b, 0.3, 3)
    expect = ref.sinkhorn_potentials(cost, a, b, 0.3, 3)
    for got, exp in zip(out, expect, strict=True):
        torch.testing.assert_close(got, exp, atol=1e-5, rtol=1e-5)


def test_triton_half_step_with_several_column_chunks():
    pytest.importorskip("triton")
    tri = triton_module("sinkhorn")
    dev = kernel_device()
    g = torch.Generator().manual_seed(6)
    c = (10 * torch.rand(2, 5, 150, generator=g)).to(dev)  # 150 columns = 3 chunks of BLOCK_L = 64
    h = torch.randn(2, 150, generator=g).to(dev)
    lw = torch.randn(2, 5, generator=g).to(dev)
    torch.testing.assert_close(tri.half_step(c, h, lw, 0.05), ref.half_step(c, h, lw, 0.05))


# ---------------------------------------------------------------- bad input
def _ok():
    return _problem(2, 4, 3)


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"cost": torch.randn(2, 3, 4, 5)}, ValueError, "cost must have 2 or 3 dimensions"),
        ({"cost": torch.zeros(2, 0, 3), "a": None, "b": None}, ValueError, "non-empty"),
        ({"eps": 0.0}, ValueError, "eps must be a positive"),
        ({"n_iters": 0}, ValueError, "n_iters must be an int"),
        ({"a": torch.full((2, 5), 0.2, dtype=torch.float64)}, ValueError, r"a must have shape \(2, 4\)"),
        (
            {"a": torch.tensor([[0.5, 0.5, 0.0, 0.0]] * 2, dtype=torch.float64)},
            ValueError,
            "a must be positive",
        ),
        ({"b": torch.full((2, 3), 0.5, dtype=torch.float64)}, ValueError, "equal total mass"),
        (
            {"cost": torch.full((2, 4, 3), float("nan"), dtype=torch.float64)},
            ValueError,
            "cost must be finite",
        ),
        ({"cost": torch.ones(2, 4, 3, dtype=torch.int64)}, TypeError, "floating-point"),
    ],
)
def test_bad_input_raises_clear_error(kwargs, exc, match):
    cost, a, b = _ok()
    args = {"cost": cost, "a": a, "b": b, "eps": 0.1, "n_iters": 5} | kwargs
    with pytest.raises(exc, match=match):
        sinkhorn_log(**args)


# ---------------------------------------------------------------- compiled kernels / torch.compile
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_cuda_op_matches_pot(dtype):
    cost, a, b = _problem(3, 257, 130, seed=7)
    cc = cost.to("cuda", dtype).requires_grad_(True)
    plan = sinkhorn_log(cc, a.to("cuda", dtype), b.to("cuda", dtype), eps=0.5, n_iters=50)
    tol = 1e-5 if dtype == torch.float32 else 2e-2
    for i in range(3):
        expect = ot.sinkhorn(a[i].numpy(), b[i].numpy(), cost[i].numpy(), 0.5, numItermax=50, stopThr=0.0)
        np.testing.assert_allclose(
            plan[i].detach().double().cpu().numpy(), expect, atol=tol * expect.max(), rtol=0
        )
    plan.sum().backward()
    assert torch.isfinite(cc.grad).all()


@pytest.mark.slow
def test_torch_compile_smoke_cpu():
    cost, a, b = _problem(2, 5, 4, dtype=torch.float32)
    cost.requires_grad_(True)
    f = torch.compile(lambda c: sinkhorn_log(c, a, b, eps=0.3, n_iters=10, return_plan=False), fullgraph=True)
    out = f(cost)
    out.sum().backward()
    expect = sinkhorn_log(cost.detach(), a, b, eps=0.3, n_iters=10, return_plan=False)
    torch.testing.assert_close(out, expect)
    assert torch.isfinite(cost.grad).all()
