"""Backend selection shared by every op in :mod:`scigen.kernels`.

An op has two implementations: a pure-PyTorch *reference* (runs everywhere, and is the test oracle)
and a *Triton* kernel (CUDA only). Callers never choose: they call the op, and the op dispatches on
the device of its inputs. ``SCIGEN_KERNELS=reference`` forces the reference on CUDA too (for
debugging and for benchmarks that time both).
"""

from __future__ import annotations

import functools
import os

import torch

ENV_VAR = "SCIGEN_KERNELS"


@functools.lru_cache(maxsize=1)
def triton_importable() -> bool:
    """True when ``import triton`` works (it does on CPU machines too; launching needs CUDA)."""
    try:
        import triton  # noqa: F401
        import triton.language  # noqa: F401
    except Exception:  # pragma: no cover - depends on the environment
        return False
    return True


def interpret_mode() -> bool:
    """True when Triton runs kernels in its CPU interpreter (``TRITON_INTERPRET=1``)."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def use_triton(*tensors: torch.Tensor) -> bool:
    """Whether an op called on ``tensors`` should launch its Triton kernel.

    True only when triton imports, every tensor is on a CUDA device, and the user did not force the
    reference with ``SCIGEN_KERNELS=reference``.
    """
    if os.environ.get(ENV_VAR, "auto").lower() == "reference":
        return False
    if not triton_importable():
        return False
    return all(t.is_cuda for t in tensors)
