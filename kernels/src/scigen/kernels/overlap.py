"""Box-overlap legality energy and exact overlap area for macro placement.

Called by **scigen-placement** (ChipDiffusion, "Chip Placement with Diffusion Models", ICML 2025):
the smooth energy is the legality term of guided sampling and of the post-sampling legaliser
(paper §4 "legality guidance"); the exact area supports the legality metric.

Objects are axis-aligned boxes with centres ``pos [V,2]`` and sizes ``size [V,2]`` (width, height).
``mask [V]`` (bool) selects the *active* objects; inactive objects (e.g. ports) are ignored entirely.
Fixed-but-active objects (fixed macros) are the caller's business: zero their gradient.

Definitions (k = ``sharpness``, ``sp_k(z) = softplus(k z)/k``, so relu(z) <= sp_k(z) <= relu(z) + log2/k):

* penetration lengths ``o^x_ij = (w_i + w_j)/2 - |x_i - x_j|``, ``o^y_ij = (h_i + h_j)/2 - |y_i - y_j|``;
* ``box_overlap_energy = Σ_{i<j active} sp_k(o^x_ij)·sp_k(o^y_ij) + Σ_{i active} B_i`` with
  ``B_i = h_i·[sp_k(x_i + w_i/2 - x_hi) + sp_k(x_lo - x_i + w_i/2)]
  + w_i·[sp_k(y_i + h_i/2 - y_hi) + sp_k(y_lo - y_i + h_i/2)]`` for canvas (x_lo, x_hi, y_lo, y_hi).

As k → ∞ the pair term tends to ``Σ relu(o^x) relu(o^y)``: the exact intersection area whenever no box
contains another along an axis (then the intersection length is ``min(o, w_i, w_j)`` < o, and the
energy is an upper bound that still pushes nested boxes apart); it is 0 exactly for legal placements.
``B_i`` tends to (protrusion length) × (extent along the other axis): the out-of-canvas area of a box
protruding on one side. Unlike ChipDiffusion's potential (softmax over axes of the separation, squared)
this energy is a product of the two smooth overlaps, so it has units of area and converges to it.

The gradient is with respect to ``pos`` only; ``∂|d|/∂d`` at d = 0 is taken as 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from scigen.kernels import _validate
from scigen.kernels._backend import use_triton
from scigen.kernels.reference import overlap as ref


def _canvas(x_lo: float, x_hi: float, y_lo: float, y_hi: float) -> tuple[float, float, float, float]:
    return (x_lo, x_hi, y_lo, y_hi)


def _fast(pos: torch.Tensor, size: torch.Tensor, mask: torch.Tensor) -> bool:
    return use_triton(pos, size, mask) and pos.dtype != torch.float64


@torch.library.custom_op("scigen::box_overlap_energy", mutates_args=())
def _energy_op(
    pos: torch.Tensor, size: torch.Tensor, mask: torch.Tensor, sharpness: float,
    x_lo: float, x_hi: float, y_lo: float, y_hi: float,
) -> torch.Tensor:
    return ref.overlap_energy_reference(pos, size, mask, sharpness, _canvas(x_lo, x_hi, y_lo, y_hi))


@_energy_op.register_kernel("cuda")
def _energy_cuda(pos, size, mask, sharpness, x_lo, x_hi, y_lo, y_hi):
    canvas = _canvas(x_lo, x_hi, y_lo, y_hi)
    if not _fast(pos, size, mask):
        return ref.overlap_energy_reference(pos, size, mask, sharpness, canvas)
    from scigen.kernels.triton import overlap as tri

    rows = tri.overlap_rows(pos, size, mask, sharpness, tri.MODE_ENERGY)
    b, _ = ref.boundary_energy_and_grad(pos.float(), size.float(), mask, sharpness, canvas)
    return (rows.sum() / 2 + b).to(pos.dtype)


@_energy_op.register_fake
def _(pos, size, mask, sharpness, x_lo, x_hi, y_lo, y_hi):
    return pos.new_empty(())


@torch.library.custom_op("scigen::box_overlap_energy_backward", mutates_args=())
def _energy_grad_op(
    pos: torch.Tensor, size: torch.Tensor, mask: torch.Tensor, sharpness: float,
    x_lo: float, x_hi: float, y_lo: float, y_hi: float,
) -> torch.Tensor:
    return ref.overlap_energy_grad_reference(pos, size, mask, sharpness, _canvas(x_lo, x_hi, y_lo, y_hi))


@_energy_grad_op.register_kernel("cuda")
def _energy_grad_cuda(pos, size, mask, sharpness, x_lo, x_hi, y_lo, y_hi):
    canvas = _canvas(x_lo, x_hi, y_lo, y_hi)
    if not _fast(pos, size, mask):
        return ref.overlap_energy_grad_reference(pos, size, mask, sharpness, canvas)
    from scigen.kernels.triton import overlap as tri

    rows = tri.overlap_rows(pos, size, mask, sharpness, tri.MODE_GRAD)
    _, gb = ref.boundary_energy_and_grad(pos.float(), size.float(), mask, sharpness, canvas)
    return (rows + gb).to(pos.dtype)


@_energy_grad_op.register_fake
def _(pos, size, mask, sharpness, x_lo, x_hi, y_lo, y_hi):
    return torch.empty_like(pos)


def _setup(ctx, inputs, output):
    pos, size, mask = inputs[:3]
    ctx.save_for_backward(pos, size, mask)
    ctx.args = inputs[3:]


def _backward(ctx, grad):
    pos, size, mask = ctx.saved_tensors
    g = _energy_grad_op(pos, size, mask, *ctx.args)
    return (grad * g,) + (None,) * 7


_energy_op.register_autograd(_backward, setup_context=_setup)


@torch.library.custom_op("scigen::total_overlap_area", mutates_args=())
def _area_op(pos: torch.Tensor, size: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return ref.total_overlap_area_reference(pos, size, mask)


@_area_op.register_kernel("cuda")
def _area_cuda(pos, size, mask):
    if not _fast(pos, size, mask):
        return ref.total_overlap_area_reference(pos, size, mask)
    from scigen.kernels.triton import overlap as tri

    rows = tri.overlap_rows(pos, size, mask, 1.0, tri.MODE_AREA)
    return (rows.sum(dtype=torch.float64) / 2).to(pos.dtype)


@_area_op.register_fake
def _(pos, size, mask):
    return pos.new_empty(())


def _validate_boxes(pos, size, mask) -> torch.Tensor:
    _validate.check_tensor("pos", pos, ndim=2)
    _validate.check_tensor("size", size, ndim=2)
    if pos.shape[1] != 2:
        raise ValueError(f"pos must be [V, 2] box centres, got shape {tuple(pos.shape)}")
    if tuple(size.shape) != tuple(pos.shape):
        raise ValueError(f"size must be [V, 2] like pos {tuple(pos.shape)}, got shape {tuple(size.shape)}")
    v = pos.shape[0]
    if mask is None:
        mask = torch.ones(v, dtype=torch.bool, device=pos.device)
    _validate.check_tensor("mask", mask, ndim=1, floating=False)
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must be a bool tensor, got dtype {mask.dtype}")
    if mask.shape[0] != v:
        raise ValueError(f"mask must be [V] = [{v}], got shape {tuple(mask.shape)}")
    _validate.check_same_device(pos=pos, size=size, mask=mask)
    return mask


def box_overlap_energy(
    pos: torch.Tensor,
    size: torch.Tensor,
    mask: torch.Tensor | None = None,
    sharpness: float = 10.0,
    canvas: Sequence[float] = (-1.0, 1.0, -1.0, 1.0),
) -> torch.Tensor:
    """Smooth pairwise-overlap + boundary energy (scalar, dtype of ``pos``); see the module docstring.

    Args:
        pos: [V, 2] box centres (differentiable).
        size: [V, 2] box widths and heights (no gradient).
        mask: [V] bool, True for active objects (default: all).
        sharpness: k > 0 of the smooth ReLU ``softplus(k z)/k``.
        canvas: (x_lo, x_hi, y_lo, y_hi) with x_lo < x_hi, y_lo < y_hi.

    Computed over tiles of pairs: memory is O(V), not O(V²). V = 0 gives 0.
    """
    mask = _validate_boxes(pos, size, mask)
    sharpness = float(sharpness)
    if not sharpness > 0:
        raise ValueError(f"sharpness must be > 0, got {sharpness}")
    canvas = [float(c) for c in canvas]
    if len(canvas) != 4 or not (canvas[0] < canvas[1] and canvas[2] < canvas[3]):
        raise ValueError(f"canvas must be (x_lo, x_hi, y_lo, y_hi) with lo < hi, got {canvas}")
    return _energy_op(pos, size.detach().to(pos.dtype), mask, sharpness, *canvas)


def total_overlap_area(pos: torch.Tensor, size: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Exact ``Σ_{i<j active} area(box_i ∩ box_j)`` (scalar, dtype of ``pos``; no gradient).

    The intersection length along x is ``max(0, min(o^x_ij, w_i, w_j))`` (likewise y). This is the sum
    of pairwise intersections, not the union deficit: a point covered by three boxes counts three times.
    """
    mask = _validate_boxes(pos, size, mask)
    with torch.no_grad():
        return _area_op(pos.detach(), size.detach().to(pos.dtype), mask)
