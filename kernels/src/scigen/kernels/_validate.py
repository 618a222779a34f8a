"""Boundary checks shared by every op's public wrapper: clear errors naming the argument."""

from __future__ import annotations

from collections.abc import Sequence

import torch

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def check_tensor(
    name: str, t: object, *, ndim: int | Sequence[int] | None = None, floating: bool = True
) -> torch.Tensor:
    """``t`` must be a tensor (floating point by default) with ``ndim`` dimensions."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if floating and t.dtype not in FLOAT_DTYPES:
        raise TypeError(
            f"{name} must be a floating-point tensor (float16/bfloat16/float32/float64), got {t.dtype}"
        )
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if t.ndim not in allowed:
            want = " or ".join(str(a) for a in allowed)
            raise ValueError(f"{name} must have {want} dimensions, got shape {tuple(t.shape)}")
    return t


def check_same_device(**tensors: torch.Tensor) -> None:
    """All tensors on one device."""
    devices = {name: t.device for name, t in tensors.items()}
    if len(set(devices.values())) > 1:
        listing = ", ".join(f"{n} on {d}" for n, d in devices.items())
        raise ValueError(f"all inputs must be on the same device, got {listing}")


def check_same_dtype(**tensors: torch.Tensor) -> None:
    """All tensors of one dtype."""
    dtypes = {name: t.dtype for name, t in tensors.items()}
    if len(set(dtypes.values())) > 1:
        listing = ", ".join(f"{n} is {d}" for n, d in dtypes.items())
        raise TypeError(f"inputs must share one dtype, got {listing}")


def _show(t: torch.Tensor) -> str:
    return str(t.tolist()) if t.numel() <= 8 else f"a tensor of shape {tuple(t.shape)}"


def check_finite(name: str, t: torch.Tensor) -> None:
    """No NaN/inf. Value checks sync the device and are skipped while ``torch.compile`` traces
    (data-dependent branches would break ``fullgraph``); use them on small parameter tensors only."""
    if torch.compiler.is_compiling():
        return
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} must be finite, got {_show(t)}")


def check_positive(name: str, t: torch.Tensor) -> None:
    """All entries finite and > 0 (skipped under ``torch.compile``, like :func:`check_finite`)."""
    if torch.compiler.is_compiling():
        return
    check_finite(name, t)
    if not bool((t > 0).all()):
        raise ValueError(f"{name} must be positive, got {_show(t)}")
