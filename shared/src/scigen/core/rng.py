"""The global random states, captured and restored: no verb of a system changes its caller's RNG.

Every global random source a system can touch is covered: torch's CPU generator, every CUDA device's
generator (when CUDA is available), numpy's global ``RandomState`` and Python's ``random``.

* :func:`get_rng_state` / :func:`set_rng_state`: the states as tensors, ints and tuples only, so a
  training checkpoint holding them loads with ``torch.load(weights_only=True)``.
* :func:`preserved_rng`: run a block (a ``fit``, Lightning's ``seed_everything``, a sampler that draws
  from the global generator) and put every global state back afterwards, error or not.
* :func:`seeded_rng`: the same, with torch's CPU generator seeded to ``seed`` inside the block; networks
  are built under it (:meth:`scigen.core.system.System.make_network`), so a seed gives the same initial
  weights as ``torch.manual_seed(seed); build()`` did, without resetting the caller's stream.
"""

from __future__ import annotations

import contextlib
import functools
import os
import random
from collections.abc import Callable, Iterator
from typing import TypeVar

import numpy as np
import torch

__all__ = ["get_rng_state", "preserved_rng", "preserves_rng", "seeded_rng", "set_rng_state"]

F = TypeVar("F", bound=Callable)

# environment variables Lightning's ``seed_everything`` sets; part of what a fit must not leave behind
_SEED_ENV = ("PL_GLOBAL_SEED", "PL_SEED_WORKERS")


def get_rng_state(*, cuda: bool | None = None) -> dict:
    """Return the current global RNG states as a ``weights_only``-loadable dict.

    ``cuda``: include every CUDA device's state; ``None`` (default) = only when CUDA is already
    initialised (reading it would otherwise start CUDA); ``True`` = whenever CUDA is available.
    """
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state = {
        "torch": torch.get_rng_state(),
        "numpy": {"kind": kind, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos),
                  "has_gauss": int(has_gauss), "cached_gaussian": float(cached)},
        "python": random.getstate(),
    }
    if cuda is None:
        cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
    if cuda and torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    """Restore the states captured by :func:`get_rng_state`."""
    torch.set_rng_state(state["torch"].cpu())
    n = state["numpy"]
    np.random.set_state((n["kind"], n["keys"].numpy().astype(np.uint32), n["pos"], n["has_gauss"],
                         n["cached_gaussian"]))
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


@contextlib.contextmanager
def preserved_rng() -> Iterator[None]:
    """Run the block, then restore torch (CPU and, where CUDA is available, every device), numpy and
    Python ``random`` to their states before it, and Lightning's seed environment variables.

    Where CUDA is available its states are read up front (this starts CUDA): ``torch.manual_seed``
    inside the block would otherwise queue a seed for the devices that runs only when CUDA starts,
    after the restore, and so reach the caller.
    """
    saved = get_rng_state(cuda=True)
    env = {k: os.environ.get(k) for k in _SEED_ENV}
    try:
        yield
    finally:
        set_rng_state(saved)
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def seeded_rng(seed: int) -> Iterator[None]:
    """Run the block with torch's CPU generator seeded to ``seed``; restore every global state afterwards.

    Only the CPU generator is seeded: it is the one that draws a network's initial weights (same draws
    as ``torch.manual_seed(seed)`` on the CPU), and leaving CUDA alone means building a model never
    starts CUDA (its states are restored too when it was already running).
    """
    saved = get_rng_state()
    torch.default_generator.manual_seed(int(seed))
    try:
        yield
    finally:
        set_rng_state(saved)


def preserves_rng(fn: F) -> F:
    """Decorator: ``fn`` runs under :func:`preserved_rng` (for a function that seeds the global generators
    itself, e.g. a baseline that calls ``torch.manual_seed(seed)`` before building and training its network:
    its results are unchanged, and its caller's random state is left as it was)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with preserved_rng():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
