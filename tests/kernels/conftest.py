"""Kernel tests: run Triton kernel bodies under the CPU interpreter when no GPU is present.

``TRITON_INTERPRET`` must be set before any ``scigen.kernels.triton.*`` module is imported (triton
3.x reads it when ``@triton.jit`` runs); :func:`scigen.kernels._testing.triton_module` also re-imports
a module that was imported in the wrong mode.
"""

import pytest
import torch

from scigen.kernels._testing import enable_interpreter_if_no_cuda, kernel_device

enable_interpreter_if_no_cuda()


@pytest.fixture
def kdev() -> torch.device:
    """Device on which Triton launchers run here (cuda, or cpu under the interpreter)."""
    return kernel_device()


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
