"""Reference (pure PyTorch, tiled) multi-bandwidth RBF MMD² and its gradient.

Memory is O((n + m) · tile): pairwise quantities are formed for a chunk of rows at a time, never the
full ``n × m`` matrix, so CPU users with 10^5 points do not run out of memory.

Kernel: ``k(a, b) = Σ_j exp(−‖a − b‖² / (2 h_j²))``. Estimators (Gretton et al., "A Kernel
Two-Sample Test", JMLR 2012): biased V-statistic, eq. (5), and unbiased U-statistic, eq. (3).
"""

from __future__ import annotations

import torch

# Elements of the largest temporary (chunk_rows × m × max(d, k)) formed at once.
DEFAULT_TILE_ELEMENTS = 1 << 20


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """Accumulation dtype: fp16/bf16 inputs are computed in fp32, fp32/fp64 in themselves."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def _chunk_rows(m: int, width: int, tile_elements: int) -> int:
    return max(1, tile_elements // max(1, m * width))


def _sq_dists(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    # Difference form (not |a|²+|b|²−2ab): exact zero on the diagonal, no cancellation.
    return (a[:, None, :] - b[None, :, :]).pow(2).sum(-1)


def rbf_pair_sum(
    a: torch.Tensor, b: torch.Tensor, bandwidths: torch.Tensor, tile_elements: int = DEFAULT_TILE_ELEMENTS
) -> torch.Tensor:
    """``Σ_{i, l} k(a_i, b_l)`` over all pairs (diagonal included), as a float64 scalar."""
    ct = compute_dtype(a.dtype)
    a, b = a.to(ct), b.to(ct)
    coef = (0.5 / bandwidths.to(ct).pow(2)).reshape(1, 1, -1)
    rows = _chunk_rows(b.shape[0], max(a.shape[1], coef.numel()), tile_elements)
    total = torch.zeros((), dtype=torch.float64, device=a.device)
    for s in range(0, a.shape[0], rows):
        d2 = _sq_dists(a[s : s + rows], b)
        total = total + torch.exp(-d2[..., None] * coef).sum().to(torch.float64)
    return total


def combine(
    sxx: torch.Tensor, syy: torch.Tensor, sxy: torch.Tensor, n: int, m: int, k: int, unbiased: bool
) -> torch.Tensor:
    """MMD² from the three pair sums (float64). Unbiased: the diagonal (k(x, x) = k exactly) is removed."""
    if unbiased:
        return (sxx - n * k) / (n * (n - 1)) + (syy - m * k) / (m * (m - 1)) - 2.0 * sxy / (n * m)
    return sxx / (n * n) + syy / (m * m) - 2.0 * sxy / (n * m)


def mmd_rbf(
    x: torch.Tensor,
    y: torch.Tensor,
    bandwidths: torch.Tensor,
    unbiased: bool,
    tile_elements: int = DEFAULT_TILE_ELEMENTS,
) -> torch.Tensor:
    """MMD² between the rows of ``x [n, d]`` and ``y [m, d]``; a 0-dim tensor of ``x.dtype``.

    No validation here (the public :func:`scigen.kernels.mmd_rbf` validates).
    """
    n, m, k = x.shape[0], y.shape[0], bandwidths.numel()
    sxx = rbf_pair_sum(x, x, bandwidths, tile_elements)
    syy = rbf_pair_sum(y, y, bandwidths, tile_elements)
    sxy = rbf_pair_sum(x, y, bandwidths, tile_elements)
    return combine(sxx, syy, sxy, n, m, k, unbiased).to(x.dtype)


def rbf_weight_sums(
    a: torch.Tensor, b: torch.Tensor, bandwidths: torch.Tensor, tile_elements: int = DEFAULT_TILE_ELEMENTS
) -> tuple[torch.Tensor, torch.Tensor]:
    """For ``w(a, b) = Σ_j exp(−‖a−b‖²/(2h_j²)) / h_j²`` return ``s_i = Σ_l w(a_i, b_l)`` and
    ``v_i = Σ_l w(a_i, b_l) b_l`` (compute dtype), so that ``Σ_l ∂k(a_i, b_l)/∂a_i = v_i − s_i a_i``."""
    ct = compute_dtype(a.dtype)
    a, b = a.to(ct), b.to(ct)
    coef = (0.5 / bandwidths.to(ct).pow(2)).reshape(1, 1, -1)
    rows = _chunk_rows(b.shape[0], max(a.shape[1], coef.numel()), tile_elements)
    s_out = a.new_empty(a.shape[0])
    v_out = a.new_empty(a.shape)
    for s in range(0, a.shape[0], rows):
        d2 = _sq_dists(a[s : s + rows], b)
        w = (torch.exp(-d2[..., None] * coef) * (2.0 * coef)).sum(-1)
        torch.sum(w, 1, out=s_out[s : s + rows])
        torch.matmul(w, b, out=v_out[s : s + rows])
    return s_out, v_out


def grad_scales(n: int, m: int, unbiased: bool) -> tuple[float, float, float]:
    """Weights of the xx, yy and xy kernel sums in MMD²."""
    if unbiased:
        return 1.0 / (n * (n - 1)), 1.0 / (m * (m - 1)), 1.0 / (n * m)
    return 1.0 / (n * n), 1.0 / (m * m), 1.0 / (n * m)


def assemble_grads(
    grad: torch.Tensor,
    x: torch.Tensor,
    y: torch.Tensor,
    sums: tuple[tuple[torch.Tensor, torch.Tensor], ...],
    unbiased: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradients of MMD² from the weight sums ``(xx, xy, yy, yx)``.

    ``∂MMD²/∂x_i = 2 c_xx (v^xx_i − s^xx_i x_i) − 2 c_xy (v^xy_i − s^xy_i x_i)`` (the diagonal
    term has zero gradient, so biased and unbiased differ only in ``c_xx``), and symmetrically for y.
    """
    (sxx, vxx), (sxy, vxy), (syy, vyy), (syx, vyx) = sums
    cxx, cyy, cxy = grad_scales(x.shape[0], y.shape[0], unbiased)
    ct = sxx.dtype
    xc, yc, g = x.to(ct), y.to(ct), grad.to(ct)
    gx = 2.0 * cxx * (vxx - sxx[:, None] * xc) - 2.0 * cxy * (vxy - sxy[:, None] * xc)
    gy = 2.0 * cyy * (vyy - syy[:, None] * yc) - 2.0 * cxy * (vyx - syx[:, None] * yc)
    return (g * gx).to(x.dtype), (g * gy).to(y.dtype)


def mmd_rbf_backward(
    grad: torch.Tensor,
    x: torch.Tensor,
    y: torch.Tensor,
    bandwidths: torch.Tensor,
    unbiased: bool,
    tile_elements: int = DEFAULT_TILE_ELEMENTS,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(grad · ∂MMD²/∂x, grad · ∂MMD²/∂y)``, tiled like the forward."""
    sums = (
        rbf_weight_sums(x, x, bandwidths, tile_elements),
        rbf_weight_sums(x, y, bandwidths, tile_elements),
        rbf_weight_sums(y, y, bandwidths, tile_elements),
        rbf_weight_sums(y, x, bandwidths, tile_elements),
    )
    return assemble_grads(grad, x, y, sums, unbiased)
