"""Boundary validation shared by every part of the engine (and usable by domain packages).

Each check raises at the boundary with a message that names the argument, what it got and what was
expected (:class:`~scigen.core.errors.InvalidInputError`, a ``ValueError``; ``TypeError`` for a
wrong type), so that users never meet a deep torch / POT traceback.
"""

from __future__ import annotations

import math
import os

import torch
from torch import Tensor

from scigen.core.errors import InvalidInputError

__all__ = [
    "as_tensor",
    "broadcast_time",
    "check_count",
    "check_finite_positive",
    "check_keywords",
    "check_num_steps",
    "check_points",
    "check_real",
    "check_same_dim",
    "check_same_shape",
    "check_tensor",
    "check_time_range",
    "check_weights",
    "max_count_for_memory",
    "optional_package",
]


def as_tensor(value, name: str, *, like: Tensor | None = None) -> Tensor:
    """Return ``value`` as a floating tensor (on ``like``'s device/dtype when given).

    Python numbers are accepted for convenience; anything else that is not a tensor raises a
    ``TypeError`` naming ``name``.
    """
    if isinstance(value, Tensor):
        t = value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        t = torch.tensor(float(value))
    else:
        raise TypeError(f"{name} must be a torch.Tensor (or a Python number), got {type(value).__name__}")
    if like is not None:
        t = t.to(device=like.device, dtype=like.dtype if like.is_floating_point() else t.dtype)
    if not t.is_floating_point():
        t = t.to(torch.get_default_dtype())
    return t


def broadcast_time(t: Tensor, x: Tensor, name: str = "t") -> Tensor:
    """Reshape per-sample times for broadcasting over ``x``.

    Args:
        t: a scalar (0-d or 1-element) tensor, or per-sample times of shape ``[B]`` where
            ``B = x.shape[0]``. Time convention: ``t = 0`` is data, ``t = 1`` is noise.
        x: the tensor the times apply to, shape ``[B, ...]``.

    Returns:
        ``t`` viewed as ``[B, 1, ..., 1]`` (or ``[1, ..., 1]`` for a scalar) with ``x.ndim`` dims,
        on ``x``'s device.
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    t = as_tensor(t, name)
    t = t.to(device=x.device)
    if x.ndim == 0:
        raise InvalidInputError("x must have a batch dimension (ndim >= 1), got a 0-d tensor")
    if t.numel() == 1:
        return t.reshape((1,) * x.ndim)
    if t.ndim != 1 or t.shape[0] != x.shape[0]:
        raise InvalidInputError(
            f"{name} must be a scalar or have shape [B] = [{x.shape[0]}] matching x of shape "
            f"{tuple(x.shape)}, got shape {tuple(t.shape)}"
        )
    return t.reshape((-1,) + (1,) * (x.ndim - 1))


def check_time_range(t: Tensor, name: str = "t", lo: float = 0.0, hi: float = 1.0) -> None:
    """Raise ``ValueError`` unless every entry of ``t`` is finite and within ``[lo, hi]``."""
    if t.numel() == 0:
        return
    if not bool(torch.isfinite(t).all()):
        raise InvalidInputError(f"{name} must be finite, got non-finite values")
    tmin, tmax = float(t.min()), float(t.max())
    if tmin < lo or tmax > hi:
        raise InvalidInputError(f"{name} must lie in [{lo}, {hi}] (t=0 data, t=1 noise), got range [{tmin}, {tmax}]")


def check_same_shape(a: Tensor, b: Tensor, name_a: str, name_b: str) -> None:
    """Raise ``ValueError`` unless ``a`` and ``b`` are tensors of the same shape."""
    for v, n in ((a, name_a), (b, name_b)):
        if not isinstance(v, Tensor):
            raise TypeError(f"{n} must be a torch.Tensor, got {type(v).__name__}")
    if a.shape != b.shape:
        raise InvalidInputError(f"{name_b} must have the shape of {name_a} {tuple(a.shape)}, got {tuple(b.shape)}")


def check_finite_positive(value: float, name: str, *, allow_zero: bool = False) -> float:
    """Return ``float(value)``; raise ``ValueError`` unless it is finite and > 0 (>= 0 if allowed)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}") from None
    ok = math.isfinite(v) and (v >= 0 if allow_zero else v > 0)
    if not ok:
        raise InvalidInputError(f"{name} must be finite and {'>= 0' if allow_zero else '> 0'}, got {value}")
    return v


def check_num_steps(T, name: str = "T") -> int:
    """Return ``T`` if it is an ``int >= 1`` (a number of discrete steps), else raise ``ValueError``."""
    if isinstance(T, bool) or not isinstance(T, int) or T < 1:
        raise InvalidInputError(f"{name} (number of discrete steps) must be an int >= 1, got {T!r}")
    return T


def check_tensor(
    value: object,
    name: str,
    *,
    ndim: int | tuple[int, ...] | None = None,
    last: int | None = None,
    finite: bool = True,
    allow_empty: bool = False,
) -> Tensor:
    """Return ``value`` if it is a real tensor meeting the stated shape; raise a clear error otherwise.

    Args:
        ndim: allowed number(s) of dimensions; last: required size of the last dimension.
        finite: also require every entry to be finite (costs a device sync: off in hot loops).
        allow_empty: accept a tensor with no elements.

    Integer tensors are converted to the default float dtype; complex tensors are refused.
    """
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if value.is_complex():
        raise TypeError(f"{name} must be a real tensor, got dtype {value.dtype}")
    if not value.is_floating_point():
        value = value.to(torch.get_default_dtype())
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if value.ndim not in allowed:
            raise InvalidInputError(
                f"{name} must have {' or '.join(map(str, allowed))} dims, got shape {tuple(value.shape)}")
    if last is not None and (value.ndim == 0 or value.shape[-1] != last):
        raise InvalidInputError(f"{name} must have last dimension {last}, got shape {tuple(value.shape)}")
    if not allow_empty and value.numel() == 0:
        raise InvalidInputError(f"{name} is empty (shape {tuple(value.shape)}); expected at least one element")
    if finite and value.numel() > 0 and not bool(torch.isfinite(value).all()):
        n_bad = int((~torch.isfinite(value)).sum())
        raise InvalidInputError(f"{name} contains {n_bad} NaN/inf value(s); expected finite values")
    return value


def check_points(value: object, name: str, *, min_rows: int = 1) -> Tensor:
    """Validate a point cloud: a finite tensor of shape ``[n, d]`` (a 1-D tensor is read as ``[n, 1]``)."""
    value = check_tensor(value, name)
    if value.dim() == 1:
        value = value[:, None]
    if value.dim() != 2:
        raise InvalidInputError(f"{name} must have shape [n, d] (or [n]), got shape {tuple(value.shape)}")
    if value.shape[0] < min_rows:
        raise InvalidInputError(f"{name} needs at least {min_rows} row(s), got shape {tuple(value.shape)}")
    if value.shape[1] == 0:
        raise InvalidInputError(f"{name} has zero features (shape {tuple(value.shape)})")
    return value


def check_same_dim(x: Tensor, y: Tensor, names: tuple[str, str]) -> None:
    """Raise unless two point clouds have the same number of features."""
    if x.shape[1] != y.shape[1]:
        raise InvalidInputError(
            f"{names[0]} and {names[1]} must have the same feature dimension, got shapes "
            f"{tuple(x.shape)} and {tuple(y.shape)}"
        )


def check_weights(w: object, n: int, name: str, like: Tensor) -> Tensor:
    """Validate marginal weights: ``None`` gives uniform ``1/n``; else ``[n]``, >= 0, positive sum.

    Returns float64 weights normalised to sum to one, on ``like``'s device.
    """
    if w is None:
        return torch.full((n,), 1.0 / n, dtype=torch.float64, device=like.device)
    w = check_tensor(w, name)
    if w.dim() != 1 or w.shape[0] != n:
        raise InvalidInputError(f"{name} must have shape [{n}] to match its points, got shape {tuple(w.shape)}")
    if bool((w < 0).any()):
        raise InvalidInputError(f"{name} must be non-negative, got min {float(w.min())}")
    total = float(w.sum())
    if total <= 0:
        raise InvalidInputError(f"{name} must have a positive sum, got {total}")
    return w.to(device=like.device, dtype=torch.float64) / total


def check_count(value: object, name: str = "n_samples", *, maximum: int | None = None, why: str = "") -> int:
    """A positive int count (``n_samples``, ``steps``, ...); ``InvalidInputError`` naming ``name`` otherwise
    (zero and negative counts are refused, never replaced by a default). ``maximum`` is the largest count
    the caller can represent (``why`` says why, e.g. the memory it would take), so an absurd request is
    refused at once instead of hanging or reaching the allocator."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):  # ints, numpy / torch integers
        raise InvalidInputError(f"{name} must be a positive int, got {value!r}")
    n = int(value.__index__())
    if n < 1:
        raise InvalidInputError(f"{name} must be a positive int, got {n}")
    if maximum is not None and n > maximum:
        raise InvalidInputError(f"{name}={n} exceeds the limit of {maximum:,}{': ' + why if why else ''}; "
                                "ask for fewer (several calls with different seeds for more)")
    return n


def max_count_for_memory(bytes_each: float, *, share: float = 0.5) -> int:
    """The largest count whose ``bytes_each`` bytes apiece fit in ``share`` of this machine's physical
    memory (at least 1): the bound :func:`check_count` refuses beyond for outputs held in memory."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # not POSIX: assume 16 GiB
        total = 16 * 2**30
    return max(1, int(share * total // max(float(bytes_each), 1.0)))


def check_real(value: object, name: str, *, hint: str = "") -> None:
    """Refuse complex-valued data (a numpy/torch array, a pandas column or frame, an xarray object): a
    real-valued model would silently drop the imaginary part. ``hint`` says what to pass instead."""
    dtypes = getattr(value, "dtypes", None)  # a DataFrame: one dtype per column
    if dtypes is not None and hasattr(dtypes, "items"):
        bad = [str(c) for c, d in dtypes.items() if getattr(d, "kind", "") == "c"]
        if bad:
            raise InvalidInputError(f"{name}: column(s) {bad} hold complex numbers; this model is real-valued"
                                    f"{'; ' + hint if hint else ''}")
        return
    dtype = getattr(value, "dtype", None)
    complex_ = (dtype.is_complex if isinstance(dtype, torch.dtype) else getattr(dtype, "kind", "") == "c")
    if complex_:
        raise InvalidInputError(f"{name} holds complex numbers (dtype {dtype}); this model is real-valued"
                                f"{'; ' + hint if hint else ''}")


def check_keywords(kwargs: dict, valid, where: str) -> None:
    """Refuse keyword arguments not in ``valid``: ``InvalidInputError`` naming each unknown one and the valid
    names (a typo such as ``n_sample=`` is never swallowed; docs/engine-api.md, "The user vocabulary")."""
    from scigen.core.errors import InvalidInputError

    unknown = [k for k in kwargs if k not in valid]
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        raise InvalidInputError(f"{where}: unknown keyword argument{'s' if len(unknown) > 1 else ''} {names}; "
                                f"valid: {', '.join(valid) or 'none'}")


def optional_package(flag: bool | None, module: str, *, install: str, what: str = "") -> bool:
    """Whether to use the optional ``module`` (an extra): ``flag=None`` — when it is installed; ``True`` —
    required (``ImportError`` naming ``install`` when it is not); ``False`` — never."""
    import importlib.util

    if flag is not None and not isinstance(flag, bool):
        raise TypeError(f"{what or module}: expected True, False or None, got {flag!r}")
    if flag is False:
        return False
    found = importlib.util.find_spec(module) is not None
    if flag and not found:
        raise ImportError(f"{what or module} needs the package {module!r}: pip install '{install}'")
    return found
