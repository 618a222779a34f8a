"""CSR segment reductions ``segment_sum``, ``segment_max``, ``segment_min`` as custom ops.

Used by :func:`scigen.kernels.net_hpwl` (placement: per-net bounding boxes) and
:func:`scigen.kernels.egnn_aggregate` (molecules: per-node message sums), and by any model that
pools variable-size sets stored back to back.
"""

from __future__ import annotations

import math

import torch

from scigen.kernels import _validate
from scigen.kernels._backend import use_triton
from scigen.kernels.reference import segment as ref


def _tri():
    from scigen.kernels.triton import segment as tri

    return tri


# ---------------------------------------------------------------- sum
@torch.library.custom_op("scigen::segment_sum", mutates_args=())
def _segment_sum_op(src: torch.Tensor, ptr: torch.Tensor) -> torch.Tensor:
    return ref.segment_sum(src, ptr)


@_segment_sum_op.register_kernel("cuda")
def _segment_sum_cuda(src: torch.Tensor, ptr: torch.Tensor) -> torch.Tensor:
    if use_triton(src, ptr):
        return _tri().segment_sum(src, ptr)
    return ref.segment_sum(src, ptr)


@_segment_sum_op.register_fake
def _segment_sum_fake(src, ptr):
    return src.new_empty((ptr.shape[0] - 1, src.shape[1]))


def _sum_setup(ctx, inputs, output):
    src, ptr = inputs
    ctx.save_for_backward(ptr)
    ctx.num_elements = src.shape[0]


def _sum_backward(ctx, grad):
    (ptr,) = ctx.saved_tensors
    return ref.segment_sum_backward(grad, ptr, ctx.num_elements), None


_segment_sum_op.register_autograd(_sum_backward, setup_context=_sum_setup)


# ---------------------------------------------------------------- max / min
@torch.library.custom_op("scigen::segment_minmax", mutates_args=())
def _segment_minmax_op(
    src: torch.Tensor, ptr: torch.Tensor, is_min: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    return ref.segment_minmax(src, ptr, is_min)


@_segment_minmax_op.register_kernel("cuda")
def _segment_minmax_cuda(
    src: torch.Tensor, ptr: torch.Tensor, is_min: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    if use_triton(src, ptr):
        return _tri().segment_minmax(src, ptr, is_min)
    return ref.segment_minmax(src, ptr, is_min)


@_segment_minmax_op.register_fake
def _segment_minmax_fake(src, ptr, is_min):
    shape = (ptr.shape[0] - 1, src.shape[1])
    return src.new_empty(shape), src.new_empty(shape, dtype=torch.int64)


def _minmax_setup(ctx, inputs, output):
    src, _, _ = inputs
    _, arg = output
    ctx.mark_non_differentiable(arg)
    ctx.save_for_backward(arg)
    ctx.num_elements = src.shape[0]


def _minmax_backward(ctx, grad, _grad_arg):
    (arg,) = ctx.saved_tensors
    return ref.segment_minmax_backward(grad, arg, ctx.num_elements), None, None


_segment_minmax_op.register_autograd(_minmax_backward, setup_context=_minmax_setup)


# ---------------------------------------------------------------- public wrappers
def _prepare(src: object, ptr: object) -> tuple[torch.Tensor, torch.Tensor]:
    _validate.check_tensor("src", src)
    if src.ndim < 1:
        raise ValueError(f"src must have at least 1 dimension [E, F...], got shape {tuple(src.shape)}")
    _validate.check_tensor("ptr", ptr, ndim=1, floating=False)
    if ptr.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"ptr must be an int64 (or int32) tensor of CSR offsets, got {ptr.dtype}")
    _validate.check_same_device(src=src, ptr=ptr)
    if ptr.numel() == 0:
        raise ValueError("ptr must have S + 1 >= 1 entries (CSR offsets starting at 0), got an empty tensor")
    ptr = ptr.to(torch.int64)
    if not torch.compiler.is_compiling():
        e = src.shape[0]
        first, last = int(ptr[0]), int(ptr[-1])
        if first != 0 or last != e:
            raise ValueError(
                f"ptr must start at 0 and end at src.shape[0] = {e}, got ptr[0] = {first}, ptr[-1] = {last}"
            )
        if ptr.numel() > 1 and bool((ptr[1:] < ptr[:-1]).any()):
            raise ValueError("ptr must be non-decreasing (CSR offsets)")
    return src, ptr


def _flat(src: torch.Tensor) -> torch.Tensor:
    return src.reshape(src.shape[0], math.prod(src.shape[1:]))


def segment_sum(src: torch.Tensor, ptr: torch.Tensor) -> torch.Tensor:
    """Sum of each CSR segment: ``out[s] = Σ_{ptr[s] <= e < ptr[s+1]} src[e]``.

    Args:
        src: ``[E, F...]`` floating tensor (rows of all segments back to back).
        ptr: ``[S + 1]`` int64 offsets, ``ptr[0] = 0``, ``ptr[S] = E``, non-decreasing.

    Returns:
        ``[S, F...]`` of ``src.dtype`` (fp16/bf16 accumulated in fp32); an empty segment gives 0.
        ``E = 0`` and ``S = 0`` are allowed. Gradient: ``grad_src[e] = grad_out[segment(e)]``.
    """
    src, ptr = _prepare(src, ptr)
    out = _segment_sum_op(_flat(src), ptr)
    return out.reshape(ptr.shape[0] - 1, *src.shape[1:])


def _minmax(src: torch.Tensor, ptr: torch.Tensor, is_min: bool) -> torch.Tensor:
    src, ptr = _prepare(src, ptr)
    out, _ = _segment_minmax_op(_flat(src), ptr, is_min)
    return out.reshape(ptr.shape[0] - 1, *src.shape[1:])


def segment_max(src: torch.Tensor, ptr: torch.Tensor) -> torch.Tensor:
    """Elementwise maximum over each CSR segment (``src [E, F...]``, ``ptr [S + 1]`` as in
    :func:`segment_sum`); returns ``[S, F...]`` of ``src.dtype``.

    An **empty segment gives 0** (not -inf), so the output is always finite for finite input.
    Gradient: routed to the arg-max; with ties, to the **first** (lowest-index) maximal element only;
    empty segments pass no gradient. A segment containing NaN gives NaN and passes no gradient.
    """
    return _minmax(src, ptr, False)


def segment_min(src: torch.Tensor, ptr: torch.Tensor) -> torch.Tensor:
    """Elementwise minimum over each CSR segment; as :func:`segment_max` (empty segment gives 0,
    gradient to the first minimal element)."""
    return _minmax(src, ptr, True)
