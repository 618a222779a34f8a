"""``torch_threads(n)``: run a block on ``n`` torch threads (torch is imported only when it is used,
so the CLI can build its commands without it)."""

from __future__ import annotations

import contextlib

from scigen.core.errors import InvalidInputError

__all__ = ["torch_threads"]


@contextlib.contextmanager
def torch_threads(n: int | None):
    """Run a block with ``torch.set_num_threads(n)`` and restore the previous count afterwards.

    Demos use ``n = 1``: their networks are small, intra-op parallelism buys little, and on a shared or
    loaded machine oversubscribed threads made them many times slower (measured in the molecules and
    placement demos: 9× and 3×). ``None`` leaves the setting alone.
    """
    if n is None:
        yield
        return
    import torch

    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidInputError(f"threads must be a positive int or None, got {n!r}")
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
