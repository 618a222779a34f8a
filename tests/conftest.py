"""Suite-wide test settings.

Tests run with one torch intra-op thread: their tensors are tiny, and on a shared 2-core machine
extra threads only add contention (measured here: up to 20x slower sampler and Sinkhorn tests with
two threads). Set ``SCIGEN_TEST_THREADS`` to change it.
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _torch_threads():
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(int(os.environ.get("SCIGEN_TEST_THREADS", "1")))
    yield
    torch.set_num_threads(before)


@pytest.fixture
def float64_default():
    """Run a test with float64 as torch's default dtype (closed-form comparisons to 1e-10)."""
    import torch

    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)
