"""Sampling on many processes: ``n`` samples split over ranks by index, gathered into one result.

Each sample draws from its own :class:`~scigen.core.streams.SampleStreams` key (its index ``0..n-1``), so the
result does not depend on the number of processes (issue 33.3). Processes come from Lightning Fabric (its
launcher and collective ``all_gather``): nothing here starts a process or opens a process group itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from scigen.core.errors import InvalidInputError

__all__ = ["sample_in_shards"]


def _leaves(out: Any, m: int) -> tuple[list[Tensor], Callable[[list[Tensor]], Any]]:
    """The tensors of ``out`` (a Tensor, or a tuple/list/dict of Tensors, each ``[m, ...]``) and a rebuilder."""
    if isinstance(out, Tensor):
        leaves, build = [out], (lambda xs: xs[0])
    elif isinstance(out, dict):
        names = list(out)
        leaves = [out[k] for k in names]

        def build(xs, names=names):
            return dict(zip(names, xs, strict=True))
    elif isinstance(out, (tuple, list)) and out:
        leaves = list(out)
        kind = type(out)

        def build(xs, kind=kind):
            return kind(xs)
    else:
        raise InvalidInputError("draw(keys) must return a tensor or a non-empty tuple/list/dict of tensors, got "
                                f"{type(out).__name__}")
    for i, x in enumerate(leaves):
        if not isinstance(x, Tensor) or x.ndim == 0 or x.shape[0] != m:
            raise InvalidInputError(f"draw(keys) must return tensors with one row per key ({m}); output {i} is "
                                    f"{getattr(x, 'shape', type(x).__name__)}")
    return leaves, build


def sample_in_shards(draw: Callable[[Tensor], Any], n: int, *, devices: int = 1, accelerator: str = "cpu",
                     strategy: str = "ddp", block: int = 1) -> Any:
    """``draw(keys)`` for ``keys = 0..n-1``, computed on ``devices`` processes and gathered in key order.

    ``draw(keys [m])`` returns a Tensor ``[m, ...]`` or a tuple/list/dict of them (each with one row per key)
    and must give row ``i`` from key ``keys[i]`` alone (per-sample streams). Rank ``r`` of ``W`` draws keys
    ``r·m .. (r+1)·m - 1`` with ``m = block · ceil(n / (W · block))`` (the last ranks' keys past ``n`` are
    passed to ``draw`` and their rows dropped); every rank returns the whole result, of the same structure as
    ``draw``'s.

    ``block``: ranks own whole blocks of ``block`` consecutive keys (``m`` is a multiple of it). A system that
    computes its samples in batches of ``block`` keys aligned to multiples of ``block`` (and cut at ``n``)
    then batches every sample with the same others on any number of processes, so the result equals one
    process's to the bit, not only to the float rounding of batched kernels. (Fewer than ``W · block``
    samples then leave the last ranks idle: their keys all lie past ``n``.)

    Variable-size outputs: the trailing dimensions of a tensor may differ between ranks (each rank padded its
    block to its own largest sample); they are padded with zeros (``False``) to the largest over ranks before
    the gather. A system that pads its batch to the largest sample of the batch thus gets, on ``W`` processes,
    exactly the tensors one process gives, and trims with its own sizes/masks afterwards.

    With ``devices > 1`` on the CPU the calling script is re-launched once per extra process (Lightning's
    launcher): call it under ``if __name__ == "__main__"``.
    """
    if isinstance(devices, bool) or not isinstance(devices, int) or devices < 1:
        raise InvalidInputError(f"devices must be a positive int, got {devices!r}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidInputError(f"n must be a positive int, got {n!r}")
    if isinstance(block, bool) or not isinstance(block, int) or block < 1:
        raise InvalidInputError(f"block must be a positive int, got {block!r}")
    if devices == 1:
        out = draw(torch.arange(n))
        _leaves(out, n)  # checks the structure
        return out
    import torch.distributed as dist
    from lightning.fabric import Fabric

    owned = not (dist.is_available() and dist.is_initialized())
    fabric = Fabric(accelerator=accelerator, devices=devices, strategy=strategy)
    fabric.launch()
    world, rank = fabric.world_size, fabric.global_rank
    m = block * math.ceil(n / (world * block))
    leaves, build = _leaves(draw(torch.arange(rank * m, (rank + 1) * m)), m)
    out = []
    for x in leaves:
        home = x.device
        x = x.to(fabric.device)
        shapes = fabric.all_gather(torch.tensor(x.shape, dtype=torch.int64, device=fabric.device))  # [W, ndim]
        full = shapes.max(dim=0).values.tolist()
        if list(x.shape) != full:
            pad = torch.zeros(full, dtype=x.dtype, device=x.device)
            pad[tuple(slice(0, s) for s in x.shape)] = x
            x = pad
        gathered = fabric.all_gather(x)  # [W, m, ...]
        out.append(gathered.reshape(world * m, *full[1:])[:n].to(home))
    fabric.barrier()
    if owned and dist.is_initialized():
        # tear the gloo/nccl group down before interpreter exit: a group left to die with the process can
        # abort a rank at exit ("terminate called without an active exception")
        dist.destroy_process_group()
    return build(out)
