"""Per-net wirelength: exact half-perimeter (HPWL) and weighted-average (WA) smooth wirelength.

Called by **scigen-placement** (ChipDiffusion, "Chip Placement with Diffusion Models", ICML 2025):
``net_hpwl`` is the HPWL metric and the wirelength guidance term; ``wa_wirelength`` is a smooth
alternative for guidance/legalisation (WA model of Hsu, Chang & Balabanov, DAC 2011, as in
ePlace/DREAMPlace).

Netlist layout: pin p sits at ``pos[pin_obj[p]] + pin_offset[p]``; pins are sorted by net and net n
owns pins ``net_ptr[n]:net_ptr[n+1]`` (CSR). For each net,

* ``HPWL_n = (max_p x_p - min_p x_p) + (max_p y_p - min_p y_p)``; 0 for nets with fewer than 2 pins.
  Its (sub)gradient gives +g to the pin at the max and -g to the pin at the min; pins tied at an
  extreme share it evenly.
* ``WA_n = Σ_axis [Σ x e^{x/γ} / Σ e^{x/γ} - Σ x e^{-x/γ} / Σ e^{-x/γ}]`` (the first term is a
  weighted mean below the max, the second one above the min), so ``0 <= WA_n <= HPWL_n`` and
  ``WA_n -> HPWL_n`` as γ -> 0.

Gradients flow to ``pos`` and ``pin_offset``.
"""

from __future__ import annotations

import torch

from scigen.kernels import _validate
from scigen.kernels._backend import use_triton
from scigen.kernels.reference import wirelength as ref


def _fast(pins: torch.Tensor, net_ptr: torch.Tensor) -> bool:
    return use_triton(pins, net_ptr) and pins.dtype != torch.float64


@torch.library.custom_op("scigen::net_hpwl", mutates_args=())
def _hpwl_op(pins: torch.Tensor, net_ptr: torch.Tensor) -> torch.Tensor:
    return ref.hpwl_reference(pins, net_ptr)


@_hpwl_op.register_kernel("cuda")
def _(pins, net_ptr):
    if not _fast(pins, net_ptr):
        return ref.hpwl_reference(pins, net_ptr)
    from scigen.kernels.triton import wirelength as tri

    return tri.hpwl(pins, net_ptr).to(pins.dtype)


@torch.library.custom_op("scigen::net_hpwl_backward", mutates_args=())
def _hpwl_bwd_op(grad: torch.Tensor, pins: torch.Tensor, net_ptr: torch.Tensor) -> torch.Tensor:
    return ref.hpwl_pin_grad(grad, pins, net_ptr)


@_hpwl_bwd_op.register_kernel("cuda")
def _(grad, pins, net_ptr):
    if not _fast(pins, net_ptr):
        return ref.hpwl_pin_grad(grad, pins, net_ptr)
    from scigen.kernels.triton import wirelength as tri

    return tri.hpwl_pin_grad(grad, pins, net_ptr).to(pins.dtype)


@torch.library.custom_op("scigen::wa_wirelength", mutates_args=())
def _wa_op(pins: torch.Tensor, net_ptr: torch.Tensor, gamma: float) -> torch.Tensor:
    return ref.wa_reference(pins, net_ptr, gamma)


@_wa_op.register_kernel("cuda")
def _(pins, net_ptr, gamma):
    if not _fast(pins, net_ptr):
        return ref.wa_reference(pins, net_ptr, gamma)
    from scigen.kernels.triton import wirelength as tri

    return tri.wa(pins, net_ptr, gamma).to(pins.dtype)


@torch.library.custom_op("scigen::wa_wirelength_backward", mutates_args=())
def _wa_bwd_op(grad: torch.Tensor, pins: torch.Tensor, net_ptr: torch.Tensor, gamma: float) -> torch.Tensor:
    return ref.wa_pin_grad(grad, pins, net_ptr, gamma)


@_wa_bwd_op.register_kernel("cuda")
def _(grad, pins, net_ptr, gamma):
    if not _fast(pins, net_ptr):
        return ref.wa_pin_grad(grad, pins, net_ptr, gamma)
    from scigen.kernels.triton import wirelength as tri

    return tri.wa_pin_grad(grad, pins, net_ptr, gamma).to(pins.dtype)


def _fake_per_net(pins, net_ptr, *args):
    return pins.new_empty((net_ptr.shape[0] - 1,))


def _fake_pin_grad(grad, pins, net_ptr, *args):
    return torch.empty_like(pins)


_hpwl_op.register_fake(_fake_per_net)
_wa_op.register_fake(_fake_per_net)
_hpwl_bwd_op.register_fake(_fake_pin_grad)
_wa_bwd_op.register_fake(_fake_pin_grad)


def _setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0], inputs[1])
    ctx.gamma = inputs[2] if len(inputs) > 2 else None


def _hpwl_backward(ctx, grad):
    pins, net_ptr = ctx.saved_tensors
    return _hpwl_bwd_op(grad, pins, net_ptr), None


def _wa_backward(ctx, grad):
    pins, net_ptr = ctx.saved_tensors
    return _wa_bwd_op(grad, pins, net_ptr, ctx.gamma), None, None


_hpwl_op.register_autograd(_hpwl_backward, setup_context=_setup)
_wa_op.register_autograd(_wa_backward, setup_context=_setup)


def _pins(pos, pin_offset, pin_obj, net_ptr, check_indices: bool) -> torch.Tensor:
    _validate.check_tensor("pos", pos, ndim=2)
    _validate.check_tensor("pin_offset", pin_offset, ndim=2)
    if pos.shape[1] != 2:
        raise ValueError(f"pos must be [V, 2] object centres, got shape {tuple(pos.shape)}")
    if pin_offset.shape[1] != 2:
        raise ValueError(f"pin_offset must be [P, 2], got shape {tuple(pin_offset.shape)}")
    p = pin_offset.shape[0]
    _validate.check_tensor("pin_obj", pin_obj, ndim=1, floating=False)
    _validate.check_tensor("net_ptr", net_ptr, ndim=1, floating=False)
    for name, t in (("pin_obj", pin_obj), ("net_ptr", net_ptr)):
        if t.dtype not in (torch.int64, torch.int32):
            raise TypeError(f"{name} must be an int64/int32 tensor, got dtype {t.dtype}")
    if pin_obj.shape[0] != p:
        raise ValueError(f"pin_obj must be [P] = [{p}] object indices, got shape {tuple(pin_obj.shape)}")
    if net_ptr.numel() < 1:
        raise ValueError("net_ptr must be an [N+1] CSR pointer (at least [0]), got an empty tensor")
    _validate.check_same_device(pos=pos, pin_offset=pin_offset, pin_obj=pin_obj, net_ptr=net_ptr)
    if check_indices and not torch.compiler.is_compiling():  # one host sync; off inside hot loops
        bad_ptr = bool(net_ptr[0] != 0) or bool(net_ptr[-1] != p) or bool((net_ptr.diff() < 0).any())
        if bad_ptr:
            raise ValueError(f"net_ptr must be non-decreasing from 0 to P = {p}, got {net_ptr.tolist()[:8]}...")
        if p and (int(pin_obj.min()) < 0 or int(pin_obj.max()) >= pos.shape[0]):
            raise ValueError(
                f"pin_obj values must lie in [0, V = {pos.shape[0]}), got [{int(pin_obj.min())}, {int(pin_obj.max())}]"
            )
    return pos[pin_obj.long()] + pin_offset.to(pos.dtype)


def net_hpwl(
    pos: torch.Tensor,
    pin_offset: torch.Tensor,
    pin_obj: torch.Tensor,
    net_ptr: torch.Tensor,
    *,
    check_indices: bool = True,
) -> torch.Tensor:
    """[N] exact half-perimeter wirelength per net (dtype of ``pos``), differentiable (subgradient).

    Args:
        pos: [V, 2] object centres. pin_offset: [P, 2] pin offsets from their object's centre.
        pin_obj: [P] object of each pin. net_ptr: [N+1] CSR pointer over pins (sorted by net).
        check_indices: validate index values (costs one device sync).
    """
    pins = _pins(pos, pin_offset, pin_obj, net_ptr, check_indices)
    return _hpwl_op(pins, net_ptr)


def wa_wirelength(
    pos: torch.Tensor,
    pin_offset: torch.Tensor,
    pin_obj: torch.Tensor,
    net_ptr: torch.Tensor,
    gamma: float,
    *,
    check_indices: bool = True,
) -> torch.Tensor:
    """[N] weighted-average wirelength per net (x plus y), smoothing ``γ > 0`` in position units."""
    gamma = float(gamma)
    if not gamma > 0:
        raise ValueError(f"gamma must be > 0, got {gamma}")
    pins = _pins(pos, pin_offset, pin_obj, net_ptr, check_indices)
    return _wa_op(pins, net_ptr, gamma)
