"""The optimizers ``fit`` builds (``scigen.core.train.module.make_optimizer``): Adam/AdamW on torch's fused kernel
where it takes every parameter, checked against the Adam/AdamW update written out (Kingma & Ba, ICLR 2015, Alg. 1;
Loshchilov & Hutter, ICLR 2019, Alg. 2 for the decoupled weight decay), and the multi-tensor kernel otherwise."""

from __future__ import annotations

import copy

import pytest
import torch

from scigen.core.train.module import fused_supported, make_optimizer, mixed_precision


def _adam_by_hand(p0, grads, *, lr, wd, decoupled, b1=0.9, b2=0.999, eps=1e-8):
    """Float64 Adam / AdamW on one tensor, step by step from the algorithm."""
    p, m, v = p0.double().clone(), torch.zeros_like(p0, dtype=torch.float64), torch.zeros_like(p0, dtype=torch.float64)
    for t, g in enumerate(grads, start=1):
        g = g.double()
        if decoupled:
            p = p * (1 - lr * wd)
        else:
            g = g + wd * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
        p = p - lr * m_hat / (v_hat.sqrt() + eps)
    return p


@pytest.mark.parametrize("name,decoupled", [("adamw", True), ("adam", False)])
def test_fused_adam_follows_the_algorithm(name, decoupled):
    g = torch.Generator().manual_seed(0)
    p0 = [torch.randn(5, 3, generator=g), torch.randn(7, generator=g)]
    params = [torch.nn.Parameter(x.clone()) for x in p0]
    opt, _ = make_optimizer(params, name, lr=1e-2, weight_decay=0.05, lr_lambda=lambda s: 1.0)
    assert opt.param_groups[0]["fused"] is True
    grads = [[torch.randn(x.shape, generator=g) for _ in range(50)] for x in p0]
    for step in range(50):
        for p, gs in zip(params, grads, strict=True):
            p.grad = gs[step].clone()
        opt.step()
    for p, x, gs in zip(params, p0, grads, strict=True):
        ref = _adam_by_hand(x, gs, lr=1e-2, wd=0.05, decoupled=decoupled)
        # float32 against float64: a few roundings (float32 eps relative) of the parameter per step, 50 steps
        bound = 50 * 4 * torch.finfo(torch.float32).eps * ref.abs().max().item()
        torch.testing.assert_close(p.detach().double(), ref, rtol=0, atol=bound)
        assert not torch.equal(p.detach(), x)  # it moved (lr 1e-2 x 50 steps)


def test_fused_and_default_kernels_agree_to_rounding():
    g = torch.Generator().manual_seed(1)
    x = [torch.randn(64, 16, generator=g), torch.randn(64, generator=g)]
    a = [torch.nn.Parameter(t.clone()) for t in x]
    b = [torch.nn.Parameter(t.clone()) for t in x]
    fused, _ = make_optimizer(a, "adamw", lr=1e-3, weight_decay=0.01, lr_lambda=lambda s: 1.0)
    default = torch.optim.AdamW(b, lr=1e-3, weight_decay=0.01, foreach=False)
    for _ in range(200):
        for p, q in zip(a, b, strict=True):
            p.grad = torch.randn(p.shape, generator=g)
            q.grad = p.grad.clone()
        fused.step()
        default.step()
    for p, q in zip(a, b, strict=True):
        ulp = torch.finfo(torch.float32).eps * q.detach().abs().max().item()
        assert (p - q).abs().max().item() <= 20 * ulp


def test_complex_parameters_use_the_multi_tensor_kernel():
    real = torch.nn.Parameter(torch.randn(3))
    cplx = torch.nn.Parameter(torch.randn(3, dtype=torch.complex64))
    assert fused_supported([real]) and not fused_supported([real, cplx])
    opt, _ = make_optimizer([real, cplx], "adam", lr=1e-3, weight_decay=0.0, lr_lambda=lambda s: 1.0)
    assert opt.param_groups[0]["foreach"] is True and not opt.param_groups[0]["fused"]
    before = real.detach().clone()
    real.grad, cplx.grad = torch.ones(3), torch.ones(3, dtype=torch.complex64)
    opt.step()  # the first Adam step moves each coordinate by lr * g / (|g| + eps) = lr (m_hat = g, v_hat = g^2)
    rounding = 2 * torch.finfo(torch.float32).eps * before.abs().max().item()  # of the float32 parameter
    torch.testing.assert_close(before - real.detach(), torch.full((3,), 1e-3 / (1 + 1e-8)), rtol=0, atol=rounding)


def test_sgd_keeps_the_multi_tensor_kernel():
    p = torch.nn.Parameter(torch.randn(4))
    opt, _ = make_optimizer([p], "sgd", lr=0.1, weight_decay=0.0, lr_lambda=lambda s: 1.0)
    assert opt.param_groups[0]["foreach"] is True and not opt.param_groups[0].get("fused")


def test_a_checkpoint_of_the_multi_tensor_kernel_resumes_on_it():
    """Optimizer state written before the fused kernel (``foreach=True``) keeps its kernel when loaded, so a run
    resumed from it continues bit for bit as the uninterrupted run would have."""
    g = torch.Generator().manual_seed(2)
    x = torch.randn(16, generator=g)
    grads = [torch.randn(16, generator=g) for _ in range(6)]
    ref = torch.nn.Parameter(x.clone())
    old = torch.optim.AdamW([ref], lr=1e-2, foreach=True)
    for gr in grads[:3]:
        ref.grad = gr.clone()
        old.step()
    saved, weights = copy.deepcopy(old.state_dict()), ref.detach().clone()  # state_dict holds live tensors
    for gr in grads[3:]:
        ref.grad = gr.clone()
        old.step()
    resumed = torch.nn.Parameter(weights)
    opt, _ = make_optimizer([resumed], "adamw", lr=1e-2, weight_decay=0.01, lr_lambda=lambda s: 1.0)
    opt.load_state_dict(saved)
    assert opt.param_groups[0]["foreach"] is True and not opt.param_groups[0]["fused"]
    for gr in grads[3:]:
        resumed.grad = gr.clone()
        opt.step()
    assert torch.equal(resumed.detach(), ref.detach())


def test_mixed_precision_keeps_the_multi_tensor_kernel():
    class Plugin:
        def __init__(self, precision):
            self.precision = precision

    assert mixed_precision(Plugin("bf16-mixed")) and mixed_precision(Plugin("16-mixed"))
    assert not mixed_precision(Plugin("32-true")) and not mixed_precision(Plugin("bf16-true"))
    p = torch.nn.Parameter(torch.randn(4))
    opt, _ = make_optimizer([p], "adamw", lr=1e-3, weight_decay=0.0, lr_lambda=lambda s: 1.0, fused=False)
    assert opt.param_groups[0]["foreach"] is True and not opt.param_groups[0]["fused"]
