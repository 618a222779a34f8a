"""Sampling on many processes: ``n`` samples split over ranks by index, gathered into one result.

Each sample draws from its own :class:`~scigen.core.streams.SampleStreams` key (its index ``0..n-1``), so the
result does not depend on the number of processes (issue 33.3). Processes come from Lightning Fabric (its
launcher and collective ``all_gather``): nothing here starts a process or opens a process group itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from scigen.core.errors import InvalidInputError

__all__ = ["sample_in_shards"]


def sample_in_shards(draw: Callable[[Tensor], Tensor], n: int, *, devices: int = 1, accelerator: str = "cpu",
                     strategy: str = "ddp") -> Tensor:
    """``draw(keys)`` for ``keys = 0..n-1``, computed on ``devices`` processes and gathered in key order.

    ``draw(keys [m]) -> Tensor [m, ...]`` must give row ``i`` from key ``keys[i]`` alone (per-sample streams).
    Rank ``r`` of ``W`` draws keys ``r·m .. (r+1)·m - 1`` with ``m = ceil(n / W)`` (the last rank's keys past
    ``n`` are drawn and dropped, so every rank's block has one shape); every rank returns the whole result.
    With ``devices > 1`` on the CPU the calling script is re-launched once per extra process (Lightning's
    launcher): call it under ``if __name__ == "__main__"``.
    """
    if isinstance(devices, bool) or not isinstance(devices, int) or devices < 1:
        raise InvalidInputError(f"devices must be a positive int, got {devices!r}")
    if devices == 1:
        return draw(torch.arange(n))
    from lightning.fabric import Fabric

    fabric = Fabric(accelerator=accelerator, devices=devices, strategy=strategy)
    fabric.launch()
    world, rank = fabric.world_size, fabric.global_rank
    m = math.ceil(n / world)
    block = draw(torch.arange(rank * m, (rank + 1) * m))
    if not isinstance(block, Tensor) or block.shape[0] != m:
        raise InvalidInputError(f"draw(keys) must return a tensor with one row per key ({m}), got "
                                f"{getattr(block, 'shape', type(block).__name__)}")
    gathered = fabric.all_gather(block.to(fabric.device))  # [W, m, ...]
    return gathered.reshape(world * m, *block.shape[1:])[:n].to(block.device)
