"""Helpers for testing Triton kernel bodies on CPU (``TRITON_INTERPRET=1``) and on CUDA.

Triton 3.x reads ``TRITON_INTERPRET`` when a ``@triton.jit`` decorator runs, i.e. when a module of
:mod:`scigen.kernels.triton` is imported (not when :mod:`triton` itself is imported). So:

- on a machine without CUDA, :func:`triton_module` turns the interpreter on and (re)imports the
  kernel module so its kernels are interpreted, and tests run the kernel bodies on CPU tensors;
- with CUDA (and the interpreter off), tests run the compiled kernels on the GPU.

Only for tests and benchmarks: library code never imports this module.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

import torch

from scigen.kernels._backend import interpret_mode, triton_importable


def kernel_device() -> torch.device:
    """Where Triton launchers can run here: ``cuda`` with a GPU (compiled), else ``cpu`` (interpreter)."""
    if torch.cuda.is_available() and not interpret_mode():
        return torch.device("cuda")
    return torch.device("cpu")


def enable_interpreter_if_no_cuda() -> None:
    """Set ``TRITON_INTERPRET=1`` when no GPU is present (before any kernel module is imported)."""
    if not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"


def _is_interpreted(module: ModuleType) -> bool:
    from triton.runtime.interpreter import InterpretedFunction

    jitted = [v for v in vars(module).values() if type(v).__name__ in ("JITFunction", "InterpretedFunction")]
    return all(isinstance(v, InterpretedFunction) for v in jitted)


def triton_module(name: str) -> ModuleType:
    """Import ``scigen.kernels.triton.<name>`` so that its kernels can run on :func:`kernel_device`.

    Re-imports the module when it was first imported in the other mode. Raises ``RuntimeError`` when
    triton is not importable (tests should ``pytest.importorskip("triton")`` first).
    """
    if not triton_importable():
        raise RuntimeError("triton is not importable")
    enable_interpreter_if_no_cuda()
    full = f"scigen.kernels.triton.{name}"
    module = sys.modules.get(full)
    if module is None:
        return importlib.import_module(full)
    want_interpreted = kernel_device().type == "cpu"
    if _is_interpreted(module) != want_interpreted:
        module = importlib.reload(module)
    return module
