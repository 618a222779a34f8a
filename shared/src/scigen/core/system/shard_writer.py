"""Samples written by many processes into one output, never gathered in memory (issue 33.3).

:func:`~scigen.core.system.sharded.sample_in_shards` gathers every sample on every rank: right for a result the
caller holds in memory, wrong for ten million samples. :func:`write_in_shards` instead lets each rank draw its
own samples a chunk at a time and write them into their rows of one NumPy ``.npy`` file (a tensor per sample) or
one folder of ``.npy`` files (a tuple or dict of tensors per sample, plus ``manifest.json``), which rank 0 created
under a temporary name beside the target and renames into place only when every rank has written its rows:

* memory per rank is one chunk (``chunk_size`` samples), whatever ``n``;
* sample ``i`` comes from key ``i`` (per-sample streams), so the file is the same for any number of processes
  and any chunk size;
* the output is atomic: a reader never sees a half-written file, and if any rank fails (an exception in
  ``draw``, samples of the wrong shape) every rank raises, the temporary file is removed and an existing output
  is left as it was. An existing output is replaced only with ``overwrite=True``.

Processes come from Lightning Fabric (its launcher, ``broadcast``, ``all_gather`` and ``barrier``); nothing here
starts a process or opens a process group itself. Read the result with :func:`load_sharded_samples` (memory-mapped).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from scigen.core.errors import InvalidInputError
from scigen.core.files import atomic_dir, atomic_path

__all__ = ["load_sharded_samples", "write_in_shards"]

FORMAT = "scigen.sharded-samples/1"
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


class _OneProcess:
    """The collectives of a world of one."""

    world, rank = 1, 0

    def broadcast(self, obj):
        return obj

    def all_true(self, flag: bool) -> bool:
        return bool(flag)

    def barrier(self) -> None:
        pass

    def close(self) -> None:
        pass


class _FabricGroup:
    """The collectives of Lightning Fabric's processes (launched here: the calling script is re-run per rank)."""

    def __init__(self, devices: int, accelerator: str, strategy: str) -> None:
        import torch.distributed as dist
        from lightning.fabric import Fabric

        self._owned = not (dist.is_available() and dist.is_initialized())
        self.fabric = Fabric(accelerator=accelerator, devices=devices, strategy=strategy)
        self.fabric.launch()
        self.world, self.rank = self.fabric.world_size, self.fabric.global_rank

    def broadcast(self, obj):
        return self.fabric.broadcast(obj, src=0)

    def all_true(self, flag: bool) -> bool:
        flags = self.fabric.all_gather(torch.tensor(int(bool(flag)), device=self.fabric.device))
        return bool(flags.min())

    def barrier(self) -> None:
        self.fabric.barrier()

    def close(self) -> None:
        import torch.distributed as dist

        self.fabric.barrier()
        if self._owned and dist.is_initialized():
            dist.destroy_process_group()  # a group left to die with the process can abort a rank at exit


def _named_leaves(out: Any, m: int) -> tuple[str, list[tuple[str, Tensor]]]:
    """``(structure, [(name, tensor)])`` of one chunk's result; each tensor has one row per key (``m``)."""
    if isinstance(out, Tensor):
        structure, leaves = "tensor", [("samples", out)]
    elif isinstance(out, dict) and out:
        structure, leaves = "dict", list(out.items())
    elif isinstance(out, (tuple, list)) and out:
        structure, leaves = "tuple", [(str(i), x) for i, x in enumerate(out)]
    else:
        raise InvalidInputError("draw(keys) must return a tensor or a non-empty tuple/list/dict of tensors, got "
                                f"{type(out).__name__}")
    for name, x in leaves:
        if not isinstance(name, str) or not _NAME.match(name):
            raise InvalidInputError(f"draw(keys) returned a dict key {name!r} that cannot name a file "
                                    "(letters, digits, '_', '.', '-')")
        if not isinstance(x, Tensor) or x.ndim == 0 or x.shape[0] != m:
            raise InvalidInputError(f"draw(keys) must return tensors with one row per key ({m}); output {name!r} "
                                    f"is {getattr(x, 'shape', type(x).__name__)}")
        if x.dtype == torch.bfloat16:
            raise InvalidInputError(f"output {name!r} is bfloat16, which NumPy files cannot hold; cast it in draw")
    return structure, leaves


def _layout(structure: str, leaves: list[tuple[str, Tensor]]) -> dict:
    return {"structure": structure,
            "leaves": [[name, np.dtype(torch.empty((), dtype=x.dtype).numpy().dtype).str, list(x.shape[1:])]
                       for name, x in leaves]}


def _target_problem(path: Path, overwrite: bool, folder: bool | None) -> str | None:
    """Why ``path`` cannot be written (``None``: it can)."""
    if not (path.exists() or path.is_symlink()):
        return None
    if not overwrite:
        return f"{path} exists; pass overwrite=True to replace it, or choose a new output"
    if folder is False and path.is_dir():
        return f"{path} is a folder; the samples (one tensor each) go to a .npy file"
    return None


def _name_problem(path: Path, folder: bool) -> str | None:
    """Why ``path`` cannot name this output: a tensor per sample goes to ``*.npy``, several arrays to a folder."""
    if folder and path.suffix == ".npy":
        return (f"{path}: these samples are several arrays each, written to a folder of .npy files; name the output "
                "without the .npy suffix")
    if not folder and path.suffix != ".npy":
        return f"{path}: these samples are one array each, written to one .npy file; name the output *.npy"
    return None


def write_in_shards(draw: Callable[[Tensor], Any], n: int, path: str | os.PathLike[str], *, devices: int = 1,
                    chunk_size: int | None = None, overwrite: bool = False, accelerator: str = "cpu",
                    strategy: str = "ddp", block: int = 1) -> Path:
    """Write ``draw(keys)`` for ``keys = 0..n-1`` into one output at ``path``, drawn ``chunk_size`` keys at a time on
    ``devices`` processes (module docstring).

    ``draw(keys [m])`` returns a Tensor ``[m, ...]`` (written to the ``.npy`` file ``path``) or a tuple/list/dict of
    them (written to the folder ``path``: ``<name>.npy`` per output, names ``0, 1, ...`` for a tuple, and
    ``manifest.json``), row ``i`` from key ``keys[i]`` alone; every sample of an output has the same shape (ragged
    samples: :func:`~scigen.core.system.sharded.sample_in_shards`). Rank ``r`` of ``W`` writes keys
    ``r·m ..`` up to ``n`` with ``m = block·ceil(n / (W·block))``. ``chunk_size``: keys per ``draw`` call (default: a
    rank's whole share), rounded up to a multiple of ``block``: a system that computes its samples in batches of
    ``block`` keys aligned to multiples of ``block`` then meets the same batches for any chunk size and number of
    processes (:func:`~scigen.core.system.sharded.sample_in_shards`'s ``block``).
    Returns ``path`` on every rank. With ``devices > 1`` on the CPU the calling script is re-launched once per extra
    process (Lightning's launcher): call it under ``if __name__ == "__main__"``.
    """
    if isinstance(devices, bool) or not isinstance(devices, int) or devices < 1:
        raise InvalidInputError(f"devices must be a positive int, got {devices!r}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidInputError(f"n must be a positive int, got {n!r}")
    if chunk_size is not None and (isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1):
        raise InvalidInputError(f"chunk_size must be a positive int or None, got {chunk_size!r}")
    if isinstance(block, bool) or not isinstance(block, int) or block < 1:
        raise InvalidInputError(f"block must be a positive int, got {block!r}")
    path = Path(path)
    group = _OneProcess() if devices == 1 else _FabricGroup(devices, accelerator, strategy)
    try:
        return _write(group, draw, n, path, chunk_size, overwrite, block)
    finally:
        group.close()


def _write(group, draw, n: int, path: Path, chunk_size: int | None, overwrite: bool, block: int) -> Path:
    m = block * math.ceil(n / (group.world * block))
    lo, hi = min(group.rank * m, n), min((group.rank + 1) * m, n)
    chunk = block * math.ceil((chunk_size or max(hi - lo, 1)) / block)
    starts = list(range(lo, hi, chunk))

    def drawn(start: int) -> tuple[str, list[tuple[str, Tensor]]]:
        keys = torch.arange(start, min(start + chunk, hi))
        return _named_leaves(draw(keys), len(keys))

    # 1. the target, and the layout every rank's samples must share (rank 0's first chunk)
    problem = group.broadcast(_target_problem(path, overwrite, None) if group.rank == 0 else None)
    if problem:
        raise InvalidInputError(problem)
    first, error, mine = None, None, None
    try:
        if starts:
            structure, first = drawn(starts[0])
            mine = _layout(structure, first)
    except Exception as exc:  # noqa: BLE001 - re-raised below on this rank, after the others learn of it
        error = exc
    layout = group.broadcast(mine if group.rank == 0 else None)
    if error is None and mine is not None and mine != layout:
        error = InvalidInputError(f"rank {group.rank} drew samples laid out as {mine['leaves']}, rank 0 as "
                                  f"{layout['leaves']}: every sample of an output must have the same shape and dtype")
    if not group.all_true(error is None):
        raise error or InvalidInputError("another process failed while drawing its first samples (see its error)")
    folder = layout["structure"] != "tensor"
    problem = _name_problem(path, folder) or group.broadcast(
        _target_problem(path, overwrite, folder) if group.rank == 0 else None)
    if problem:
        raise InvalidInputError(problem)

    # 2. rank 0 creates the temporary output; every rank writes its rows; rank 0 renames it into place
    with contextlib.ExitStack() as stack:
        tmp = None
        if group.rank == 0:
            if folder:
                tmp = stack.enter_context(atomic_dir(path, overwrite=overwrite))
            else:
                tmp = stack.enter_context(atomic_path(path))
            for name, dtype, shape in layout["leaves"]:
                arr = np.lib.format.open_memmap(_leaf_file(tmp, name, folder), mode="w+", dtype=np.dtype(dtype),
                                                shape=(n, *shape))
                arr.flush()
                del arr
        tmp = Path(group.broadcast(str(tmp) if tmp is not None else None))
        error = None
        try:
            files = {name: np.load(_leaf_file(tmp, name, folder), mmap_mode="r+") for name, _, _ in layout["leaves"]}
            want = {name: (dtype, shape) for name, dtype, shape in layout["leaves"]}
            for j, start in enumerate(starts):
                leaves = first if j == 0 else drawn(start)[1]
                for name, x in leaves:
                    if name not in want:
                        raise InvalidInputError(f"draw returned an output {name!r} its first call did not")
                    got = x.detach().cpu().numpy()
                    if list(got.shape[1:]) != want[name][1] or got.dtype.str != want[name][0]:
                        raise InvalidInputError(
                            f"output {name!r} of keys {start}..{start + len(got) - 1} is {got.dtype.str} "
                            f"{list(got.shape[1:])} per sample, the first samples {want[name][0]} {want[name][1]}: "
                            "every sample must have the same shape (ragged samples: use sample_in_shards)")
                    files[name][start:start + len(got)] = got
                first = None  # free the first chunk
            for arr in files.values():
                arr.flush()
            del files
        except Exception as exc:  # noqa: BLE001 - re-raised below, after every rank agrees the write failed
            error = exc
        if not group.all_true(error is None):
            raise error or InvalidInputError("another process failed while writing its samples (see its error); "
                                             f"nothing was written to {path}")
        if group.rank == 0 and folder:
            manifest = {"format": FORMAT, "n": n, **layout}
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    group.barrier()  # the rename is done before any rank returns
    return path


def _leaf_file(root: Path, name: str, folder: bool) -> Path:
    return root / f"{name}.npy" if folder else root


def load_sharded_samples(path: str | os.PathLike[str], *, mmap: bool = True) -> Any:
    """What :func:`write_in_shards` wrote: a NumPy array (a ``.npy`` file), or a tuple/dict of them (a folder, in
    the order and names of its manifest); memory-mapped read-only unless ``mmap=False``."""
    p = Path(path)
    mode = "r" if mmap else None
    if p.is_file():
        return np.load(p, mmap_mode=mode)
    manifest = p / "manifest.json"
    if not manifest.is_file():
        raise InvalidInputError(f"{p}: neither a .npy file nor a folder with manifest.json written by write_in_shards")
    meta = json.loads(manifest.read_text())
    if meta.get("format") != FORMAT:
        raise InvalidInputError(f"{manifest}: format {meta.get('format')!r}, expected {FORMAT!r}")
    arrays = {name: np.load(p / f"{name}.npy", mmap_mode=mode) for name, _, _ in meta["leaves"]}
    return arrays if meta["structure"] == "dict" else tuple(arrays.values())
