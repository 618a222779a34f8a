"""BatchNorm under data parallelism: statistics of the union batch (torch's ``SyncBatchNorm``) where it can run.

A BatchNorm layer normalises with the statistics of the batch it sees. Under DDP each rank sees its own share of
the batch, so ``N`` ranks of batch ``B`` train another network than one process of batch ``N·B`` unless the layer
pools its mean and variance over the ranks (Ioffe & Szegedy, "Batch Normalization", ICML 2015; the cross-device
variant of Peng et al., "MegDet", CVPR 2018, which torch implements as ``nn.SyncBatchNorm``). torch's
``SyncBatchNorm`` runs on GPUs only (it refuses CPU tensors in a multi-process step), so:

* ``sync_batchnorm="auto"`` (``fit``'s default): several GPU processes with BatchNorm layers → synchronised; several
  CPU processes → each rank normalises with its own batch, with a warning saying so; one process → nothing to do;
* ``True``: synchronised, and a clear error on CPU processes instead of torch's failure inside the first step;
* ``False``: never.

The layers are swapped for ``SyncBatchNorm`` (the same parameters and buffers) for the run and back to their own
classes afterwards (:func:`synced_batchnorm`), so the trained module, its EMA copy and checkpoints keep the keys and
classes of the user's module.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

import torch
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm

from scigen.core.errors import InvalidInputError

__all__ = ["SYNC_BATCHNORM", "plan_sync_batchnorm", "synced_batchnorm"]

SYNC_BATCHNORM = ("auto", True, False)


def _processes(devices, num_nodes: int) -> int | None:
    """How many processes train (``None``: decided by Lightning, e.g. ``devices="auto"`` or a device list)."""
    if isinstance(devices, int) and not isinstance(devices, bool) and devices >= 1:
        return devices * num_nodes
    if isinstance(devices, (list, tuple)):
        return len(devices) * num_nodes
    return None if num_nodes == 1 else num_nodes


def _on_gpu(accelerator) -> bool:
    name = accelerator if isinstance(accelerator, str) else type(accelerator).__name__.lower()
    return name in ("gpu", "cuda") or "cuda" in name or (name == "auto" and torch.cuda.is_available())


def _batchnorms(module: nn.Module) -> list[str]:
    return [name for name, m in module.named_modules() if isinstance(m, _BatchNorm) and name]


def plan_sync_batchnorm(module: nn.Module, setting, *, accelerator, devices, num_nodes: int) -> bool:
    """Whether ``fit`` swaps ``module``'s BatchNorm layers for ``SyncBatchNorm`` (module docstring)."""
    if setting not in SYNC_BATCHNORM or not isinstance(setting, (str, bool)):
        raise InvalidInputError(f"sync_batchnorm must be one of {SYNC_BATCHNORM}, got {setting!r}")
    if isinstance(module, _BatchNorm) and setting is not False:
        raise InvalidInputError("sync_batchnorm: the module is itself a BatchNorm layer; wrap it in a container")
    layers = _batchnorms(module)
    n = _processes(devices, num_nodes)
    if setting is False or not layers or n == 1:
        return False
    if not _on_gpu(accelerator):
        if setting is True:
            raise InvalidInputError(
                f"sync_batchnorm=True needs GPUs: torch's SyncBatchNorm refuses CPU tensors, and this run trains "
                f"{n or 'several'} CPU processes; use sync_batchnorm='auto' (each rank normalises with its own batch) "
                "or train on GPUs")
        warnings.warn(
            f"{len(layers)} BatchNorm layer(s) ({', '.join(layers[:3])}{', ...' if len(layers) > 3 else ''}) are "
            f"normalised with each CPU process's own batch statistics (torch's SyncBatchNorm needs GPUs), so this run "
            "is not the one-process run on the union batch", UserWarning, stacklevel=3)
        return False
    return True


def _as(cls: type[_BatchNorm], src: _BatchNorm) -> _BatchNorm:
    """A ``cls`` layer holding ``src``'s settings, parameters and buffers (the same tensors)."""
    out = cls(src.num_features, eps=src.eps, momentum=src.momentum, affine=src.affine,
              track_running_stats=src.track_running_stats)
    for name, p in src.named_parameters(recurse=False):
        setattr(out, name, p)
    for name, b in src.named_buffers(recurse=False):
        setattr(out, name, b)
    out.train(src.training)
    return out


def _swap(module: nn.Module, classes: dict[str, type[_BatchNorm]]) -> None:
    for name, cls in classes.items():
        parent_name, _, child = name.rpartition(".")
        parent = module.get_submodule(parent_name) if parent_name else module
        setattr(parent, child, _as(cls, getattr(parent, child)))


@contextlib.contextmanager
def synced_batchnorm(module: nn.Module, *, also=lambda: ()) -> Iterator[nn.Module]:
    """``module``'s BatchNorm layers as ``nn.SyncBatchNorm`` (same parameter and buffer tensors) within the block,
    their own classes again after it, in ``module`` and in each module ``also()`` returns then (an EMA copy made
    during the block)."""
    classes = {name: type(module.get_submodule(name)) for name in _batchnorms(module)}
    _swap(module, dict.fromkeys(classes, nn.SyncBatchNorm))
    try:
        yield module
    finally:
        for m in (module, *also()):
            _swap(m, {k: v for k, v in classes.items() if isinstance(m.get_submodule(k), nn.SyncBatchNorm)})
