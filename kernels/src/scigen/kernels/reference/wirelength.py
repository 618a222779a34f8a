"""Pure-PyTorch reference for per-net wirelength (exact HPWL and weighted-average WA).

Inputs are pin positions ``pins [P, 2]`` (pins sorted by net) and a CSR pointer ``net_ptr [N+1]``
(net n owns pins ``net_ptr[n]:net_ptr[n+1]``). ``*_pin_grad`` are the analytic gradients: the CPU
backward and the oracle of the Triton backward (autograd cannot run inside a custom op's kernel).
"""

from __future__ import annotations

import torch


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """fp16/bf16 are computed in fp32; fp32/fp64 in themselves."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def _segments(net_ptr: torch.Tensor, p: int) -> tuple[int, torch.Tensor]:
    n = net_ptr.numel() - 1
    idx = torch.repeat_interleave(torch.arange(n, device=net_ptr.device), net_ptr.diff(), output_size=p)
    return n, idx


def _seg_reduce(x: torch.Tensor, idx: torch.Tensor, n: int, how: str) -> torch.Tensor:
    # include_self=False: empty nets keep the initial 0; ties share the gradient evenly
    out = x.new_zeros((n, x.shape[1]))
    return out.scatter_reduce(0, idx[:, None].expand_as(x), x, how, include_self=False)


def _extreme_weights(x: torch.Tensor, idx: torch.Tensor, n: int) -> torch.Tensor:
    """[P, 2] ``1[x = max]/#max - 1[x = min]/#min`` within each pin's net (the HPWL subgradient)."""
    is_mx = (x == _seg_reduce(x, idx, n, "amax")[idx]).to(x.dtype)
    is_mn = (x == _seg_reduce(x, idx, n, "amin")[idx]).to(x.dtype)
    c_mx = x.new_zeros((n, 2)).index_add(0, idx, is_mx)[idx]
    c_mn = x.new_zeros((n, 2)).index_add(0, idx, is_mn)[idx]
    return is_mx / c_mx - is_mn / c_mn


def hpwl_reference(pins: torch.Tensor, net_ptr: torch.Tensor) -> torch.Tensor:
    """[N] ``(max x - min x) + (max y - min y)`` over each net's pins; 0 for nets with < 2 pins."""
    x = pins.to(compute_dtype(pins.dtype))
    n, idx = _segments(net_ptr, x.shape[0])
    span = _seg_reduce(x, idx, n, "amax") - _seg_reduce(x, idx, n, "amin")
    return span.sum(-1).to(pins.dtype)


def hpwl_pin_grad(grad: torch.Tensor, pins: torch.Tensor, net_ptr: torch.Tensor) -> torch.Tensor:
    """[P, 2] ``Σ_n grad[n] ∂HPWL_n/∂pins``: +g at the max, -g at the min, shared evenly by ties."""
    x = pins.to(compute_dtype(pins.dtype))
    n, idx = _segments(net_ptr, x.shape[0])
    return (grad.to(x.dtype)[idx, None] * _extreme_weights(x, idx, n)).to(pins.dtype)


def _wa_parts(x: torch.Tensor, idx: torch.Tensor, n: int, gamma: float):
    """Normalised weights a/Σa, b/Σb [P, 2] and the two weighted means [N, 2] of the WA model."""
    mx = _seg_reduce(x, idx, n, "amax")[idx]
    mn = _seg_reduce(x, idx, n, "amin")[idx]
    a = torch.exp((x - mx) / gamma)
    b = torch.exp((mn - x) / gamma)

    def seg_sum(t):
        return x.new_zeros((n, 2)).index_add(0, idx, t)

    # each non-empty net has a term equal to exp(0) = 1, so the clamp only acts on empty nets
    a = a / seg_sum(a).clamp_min(1.0)[idx]
    b = b / seg_sum(b).clamp_min(1.0)[idx]
    return a, b, seg_sum(x * a), seg_sum(x * b)


def wa_reference(pins: torch.Tensor, net_ptr: torch.Tensor, gamma: float) -> torch.Tensor:
    """[N] weighted-average wirelength (Hsu, Chang & Balabanov, "TSV-aware analytical placement for
    3D IC designs", DAC 2011; as in ePlace/DREAMPlace), summed over x and y.

    ``WA_x(e) = Σ x_i e^{x_i/γ} / Σ e^{x_i/γ} - Σ x_i e^{-x_i/γ} / Σ e^{-x_i/γ}`` (stabilised by shifting
    with the net's max / min, which leaves the value unchanged); 0 for empty nets.
    """
    x = pins.to(compute_dtype(pins.dtype))
    n, idx = _segments(net_ptr, x.shape[0])
    _, _, plus, minus = _wa_parts(x, idx, n, gamma)
    return (plus - minus).sum(-1).to(pins.dtype)


def wa_pin_grad(grad: torch.Tensor, pins: torch.Tensor, net_ptr: torch.Tensor, gamma: float) -> torch.Tensor:
    """[P, 2] ``Σ_n grad[n] ∂WA_n/∂pins``, analytic:
    ``∂WA/∂x_k = â_k (1 + (x_k - WA⁺)/γ) - b̂_k (1 - (x_k - WA⁻)/γ)`` with â, b̂ the normalised weights."""
    x = pins.to(compute_dtype(pins.dtype))
    n, idx = _segments(net_ptr, x.shape[0])
    a, b, plus, minus = _wa_parts(x, idx, n, gamma)
    d = a * (1 + (x - plus[idx]) / gamma) - b * (1 - (x - minus[idx]) / gamma)
    return (grad.to(x.dtype)[idx, None] * d).to(pins.dtype)
