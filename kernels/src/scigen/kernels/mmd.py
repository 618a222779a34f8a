"""Multi-bandwidth RBF maximum mean discrepancy (MMD²) as a ``torch.library`` custom op.

Used by :mod:`scigen.core.metrics` (the MMD of MMSFM's single-cell evaluation and of the graph
generators' degree/clustering/orbit MMDs). Reference: Gretton et al., "A Kernel Two-Sample Test",
JMLR 13 (2012): the unbiased estimator is eq. (3) (U-statistic), the biased one eq. (5) (V-statistic).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from scigen.kernels import _validate
from scigen.kernels._backend import use_triton
from scigen.kernels.reference import mmd as ref


@torch.library.custom_op("scigen::mmd_rbf", mutates_args=())
def _mmd_rbf_op(x: torch.Tensor, y: torch.Tensor, bandwidths: torch.Tensor, unbiased: bool) -> torch.Tensor:
    return ref.mmd_rbf(x, y, bandwidths, unbiased)


@_mmd_rbf_op.register_kernel("cuda")
def _mmd_rbf_cuda(x: torch.Tensor, y: torch.Tensor, bandwidths: torch.Tensor, unbiased: bool) -> torch.Tensor:
    if use_triton(x, y, bandwidths):
        from scigen.kernels.triton import mmd as tri

        return tri.mmd_rbf(x, y, bandwidths, unbiased)
    return ref.mmd_rbf(x, y, bandwidths, unbiased)


@_mmd_rbf_op.register_fake
def _mmd_rbf_fake(x: torch.Tensor, y: torch.Tensor, bandwidths: torch.Tensor, unbiased: bool) -> torch.Tensor:
    return x.new_empty(())


@torch.library.custom_op("scigen::mmd_rbf_backward", mutates_args=())
def _mmd_rbf_backward_op(
    grad: torch.Tensor, x: torch.Tensor, y: torch.Tensor, bandwidths: torch.Tensor, unbiased: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    return ref.mmd_rbf_backward(grad, x, y, bandwidths, unbiased)


@_mmd_rbf_backward_op.register_kernel("cuda")
def _mmd_rbf_backward_cuda(
    grad: torch.Tensor, x: torch.Tensor, y: torch.Tensor, bandwidths: torch.Tensor, unbiased: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    if use_triton(x, y, bandwidths):
        from scigen.kernels.triton import mmd as tri

        return tri.mmd_rbf_backward(grad, x, y, bandwidths, unbiased)
    return ref.mmd_rbf_backward(grad, x, y, bandwidths, unbiased)


@_mmd_rbf_backward_op.register_fake
def _mmd_rbf_backward_fake(grad, x, y, bandwidths, unbiased):
    return torch.empty_like(x), torch.empty_like(y)


def _setup_context(ctx, inputs, output):
    x, y, bandwidths, unbiased = inputs
    ctx.save_for_backward(x, y, bandwidths)
    ctx.unbiased = unbiased


def _backward(ctx, grad):
    x, y, bandwidths = ctx.saved_tensors
    gx, gy = _mmd_rbf_backward_op(grad, x, y, bandwidths, ctx.unbiased)
    return gx, gy, None, None


_mmd_rbf_op.register_autograd(_backward, setup_context=_setup_context)


def mmd_rbf(
    x: torch.Tensor,
    y: torch.Tensor,
    bandwidths: torch.Tensor | Sequence[float] | float,
    unbiased: bool = False,
) -> torch.Tensor:
    """Squared MMD between samples ``x [n, d]`` and ``y [m, d]`` with a sum of RBF kernels.

    ``k(a, b) = Σ_j exp(−‖a − b‖² / (2 h_j²))`` over the bandwidths ``h_j``.

    Returns MMD² (not MMD), a 0-dim tensor of ``x.dtype``:

    - ``unbiased=False``: the biased V-statistic (Gretton et al. 2012, eq. 5), all pairs including
      ``i = i'``: ``mean K_xx + mean K_yy − 2 mean K_xy``; always ≥ 0.
    - ``unbiased=True``: the U-statistic (eq. 3), diagonal excluded, ``Σ_{i≠i'} K_xx / (n(n−1))``;
      can be slightly negative. Needs ``n, m ≥ 2``.

    Memory is O((n + m)·tile), never O(n·m): on CPU the reference works on row chunks; on CUDA a Triton
    kernel sums tiles. fp16/bf16 inputs are accumulated in fp32. Differentiable in ``x`` and ``y``
    (own backward formula); ``bandwidths`` are treated as constants (detached; no gradient flows to them).

    Raises:
        TypeError: non-tensor or non-floating ``x``/``y``, or ``x`` and ``y`` of different dtypes.
        ValueError: wrong shapes, empty samples, ``n < 2`` or ``m < 2`` with ``unbiased=True``,
            non-positive or non-finite bandwidths, inputs on different devices.
    """
    _validate.check_tensor("x", x, ndim=2)
    _validate.check_tensor("y", y, ndim=2)
    _validate.check_same_dtype(x=x, y=y)
    _validate.check_same_device(x=x, y=y)
    if x.shape[1] != y.shape[1]:
        raise ValueError(
            f"x and y must have the same feature dimension, got x {tuple(x.shape)} and y {tuple(y.shape)}"
        )
    if x.shape[1] == 0:
        raise ValueError(f"x and y must have at least one feature, got x {tuple(x.shape)}")
    min_rows = 2 if unbiased else 1
    for name, t in (("x", x), ("y", y)):
        if t.shape[0] < min_rows:
            need = "at least 2 rows for unbiased=True" if unbiased else "at least 1 row"
            raise ValueError(f"{name} must have {need}, got shape {tuple(t.shape)}")
    if not isinstance(bandwidths, torch.Tensor):
        bandwidths = torch.as_tensor(bandwidths, dtype=torch.float64)
    _validate.check_tensor("bandwidths", bandwidths, ndim=(0, 1))
    bandwidths = (
        bandwidths.detach().reshape(-1).to(device=x.device, dtype=torch.promote_types(x.dtype, torch.float32))
    )
    if bandwidths.numel() == 0:
        raise ValueError("bandwidths must contain at least one value, got an empty tensor")
    _validate.check_positive("bandwidths", bandwidths)
    return _mmd_rbf_op(x, y, bandwidths, bool(unbiased))
