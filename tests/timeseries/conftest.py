"""Tests of scigen.timeseries run single-threaded: tiny models are much faster on a shared 2-core machine."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
