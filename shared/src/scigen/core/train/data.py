"""Data loading for :func:`~scigen.core.train.fit` with an order that is a pure function of the step.

:class:`StepBatchSampler` draws the indices of optimizer step ``k`` from a stream made of one
permutation per pass over the data, each from a generator seeded with ``(seed, pass)``. Batch ``k``
is therefore known without replaying batches ``0..k-1``, which is what makes resuming exact: a
resumed run starts the stream at the restored step. Under DDP, rank ``r`` of ``W`` takes the
``(k·W + r)``-th block of ``batch_size`` indices, so ranks see disjoint data within a pass.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor
from torch.utils.data import DataLoader, Dataset, Sampler

from scigen.core.errors import InvalidInputError

__all__ = ["KeyedBatch", "StepBatchSampler", "TensorBatches", "TensorRows", "as_dataset", "check_num_workers",
           "keyed_train_batches", "keyed_val_batches", "train_loader", "val_loader"]

_GOLDEN = 0x9E3779B97F4A7C15


class TensorRows(Dataset):
    """A tensor seen as a dataset of its rows; a batch of rows is the tensor ``data[indices]``."""

    def __init__(self, data: Tensor) -> None:
        self.data = data

    def __len__(self) -> int:
        return self.data.shape[0]

    def __getitem__(self, i: int) -> Tensor:
        return self.data[i]

    def __getitems__(self, indices: list[int]) -> Tensor:
        return self.data[torch.as_tensor(indices, dtype=torch.long)]


def _rows_collate(batch: Tensor) -> Tensor:
    return batch


class StepBatchSampler(Sampler[list[int]]):
    """An endless sampler of index lists, starting at optimizer step ``start_step``."""

    def __init__(self, n: int, batch_size: int, *, seed: int = 0, start_step: int = 0, rank: int = 0,
                 world_size: int = 1) -> None:
        if n < 1:
            raise InvalidInputError("the training data is empty (0 samples)")
        self.n, self.batch_size, self.seed = n, batch_size, seed
        self.start_step, self.rank, self.world_size = start_step, rank, world_size
        self._cache: dict[int, Tensor] = {}

    def _perm(self, epoch: int) -> Tensor:
        if epoch not in self._cache:
            g = torch.Generator().manual_seed((self.seed * _GOLDEN + epoch) % (2**63))
            if len(self._cache) >= 2:  # a batch spans at most two epochs when batch_size <= n
                self._cache.pop(min(self._cache))
            self._cache[epoch] = torch.randperm(self.n, generator=g)
        return self._cache[epoch]

    def index_tensor(self, step: int) -> Tensor:
        """:meth:`indices` as a ``long`` tensor (no Python list in between: what in-memory batches index with)."""
        start = (step * self.world_size + self.rank) * self.batch_size
        epoch, first = divmod(start, self.n)
        if first + self.batch_size <= self.n:  # the usual case: one slice of one epoch's permutation
            return self._perm(epoch)[first:first + self.batch_size]
        parts, pos, end = [], start, start + self.batch_size  # across passes: consecutive slices of each
        while pos < end:
            epoch, first = divmod(pos, self.n)
            take = min(self.n - first, end - pos)
            parts.append(self._perm(epoch)[first:first + take])
            pos += take
        return torch.cat(parts)

    def indices(self, step: int) -> list[int]:
        """The indices this rank uses at optimizer step ``step`` (positions in the epoch stream)."""
        return self.index_tensor(step).tolist()

    def __iter__(self):
        step = self.start_step
        while True:
            yield self.indices(step)
            step += 1


class TensorBatches:
    """The batches of :class:`StepBatchSampler` over an in-memory tensor, without a ``DataLoader``.

    Batch ``k`` is ``data[sampler.index_tensor(k)]``: the rows a ``DataLoader`` over :class:`TensorRows`
    with the same sampler yields, bit for bit, minus its per-batch machinery (fetcher, index list,
    collate), which on a small model cost as much as the forward pass. An endless iterable: ``fit``
    stops it at ``max_steps``.
    """

    def __init__(self, data: Tensor, sampler: StepBatchSampler) -> None:
        self.data, self.sampler = data, sampler

    def __iter__(self):
        data, sampler = self.data, self.sampler
        step = sampler.start_step
        while True:
            yield data[sampler.index_tensor(step)]
            step += 1


def as_dataset(data, name: str = "data") -> Dataset:
    """A Tensor becomes :class:`TensorRows`; a Dataset passes through; anything else is a TypeError."""
    if isinstance(data, Tensor):
        if data.ndim == 0 or data.shape[0] == 0:
            raise InvalidInputError(f"{name} must be a tensor [N, ...] with N >= 1, got shape {tuple(data.shape)}")
        if data.is_floating_point() and not torch.isfinite(data).all():
            bad = (~torch.isfinite(data)).reshape(data.shape[0], -1).any(1).nonzero()[:5].flatten().tolist()
            raise InvalidInputError(f"{name} contains NaN or inf (first bad rows: {bad})")
        return TensorRows(data)
    if isinstance(data, Dataset):
        try:
            n = len(data)
        except TypeError as e:
            raise TypeError(f"{name} must be a map-style Dataset with __len__ (or pass a DataLoader)") from e
        if n == 0:
            raise InvalidInputError(f"{name} is an empty Dataset")
        return data
    raise TypeError(f"{name} must be a torch.Tensor, a Dataset or a DataLoader, got {type(data).__name__}")


def _collate(dataset: Dataset):
    return _rows_collate if isinstance(dataset, TensorRows) else None


def check_num_workers(num_workers) -> int:
    """``num_workers`` if it is an int >= 0; an :class:`InvalidInputError` naming the value otherwise."""
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
        raise InvalidInputError(f"num_workers must be an int >= 0 (0 = load batches in the training process), "
                                f"got {num_workers!r}")
    return num_workers


def train_loader(dataset: Dataset, batch_size: int, *, seed: int, start_step: int, rank: int = 0,
                 world_size: int = 1, collate_fn=None, num_workers: int = 0) -> DataLoader | TensorBatches:
    """The training batches of ``dataset`` in the order of :class:`StepBatchSampler`.

    A tensor (:class:`TensorRows`) without ``collate_fn`` gives :class:`TensorBatches` (rows indexed
    directly, in memory: ``num_workers`` is not used); anything else a DataLoader driven by the sampler.
    ``collate_fn`` batches the items (default: row stacking for tensors, torch's default otherwise), e.g.
    to pad variable-size graphs or molecules.

    ``num_workers > 0`` loads the batches in that many persistent worker processes (torch's DataLoader
    workers: worth it when reading a batch costs time, e.g. rows of a file on disk). The order does not
    change: the DataLoader hands out the sampler's batches in the sampler's order whichever worker
    loaded them, so batch ``k`` is still a pure function of ``(seed, k, rank)`` and resuming stays
    exact. Each worker's own RNG is seeded from ``seed`` (torch's ``base_seed + worker_id``); a Dataset
    that draws random numbers while loading gets a stream that depends on which worker loads a batch,
    so keep loading deterministic (randomness belongs in the loss, which runs in the training process).
    """
    check_num_workers(num_workers)
    sampler = StepBatchSampler(len(dataset), batch_size, seed=seed, start_step=start_step, rank=rank,
                               world_size=world_size)
    if isinstance(dataset, TensorRows) and collate_fn is None:
        return TensorBatches(dataset.data, sampler)
    workers = {"num_workers": num_workers, "persistent_workers": True} if num_workers > 0 else {}
    return DataLoader(dataset, batch_sampler=sampler, collate_fn=collate_fn or _collate(dataset),
                      generator=torch.Generator().manual_seed(seed), **workers)


def val_loader(dataset: Dataset, batch_size: int, collate_fn=None) -> DataLoader:
    """Sequential batches over the whole of ``dataset`` (every DDP rank evaluates all of it)."""
    n = len(dataset)
    batches = [list(range(i, min(i + batch_size, n))) for i in range(0, n, batch_size)]
    return DataLoader(dataset, batch_sampler=batches, collate_fn=collate_fn or _collate(dataset))


class KeyedBatch(NamedTuple):
    """A batch with the dataset index of each of its samples and its optimizer step (``-1``: validation), for
    per-sample random streams (``fit(..., rng="per_sample")``, :mod:`scigen.core.streams`). Lightning moves
    it to the device like any named tuple; the loss receives ``batch`` only."""

    batch: object
    keys: Tensor
    step: int


class _KeyedSteps:
    """Batch ``k`` of a step-indexed loader with the indices the sampler drew for it."""

    def __init__(self, batches, sampler: StepBatchSampler) -> None:
        self.batches, self.sampler = batches, sampler

    def __iter__(self):
        step = self.sampler.start_step
        for batch in self.batches:
            yield KeyedBatch(batch, self.sampler.index_tensor(step), step)
            step += 1


def keyed_train_batches(loader: DataLoader | TensorBatches) -> _KeyedSteps:
    """The batches of :func:`train_loader`'s ``loader`` as :class:`KeyedBatch` (same order, same rows)."""
    # (a user's DataLoader, whose batches carry no indices, is refused before: GenerativeModule)
    return _KeyedSteps(loader, loader.sampler if isinstance(loader, TensorBatches) else loader.batch_sampler)


def keyed_val_batches(loader: DataLoader):
    """:func:`val_loader`'s batches as :class:`KeyedBatch` with step ``-1`` (the same draws at every validation)."""
    for batch, indices in zip(loader, loader.batch_sampler, strict=True):
        yield KeyedBatch(batch, torch.as_tensor(indices, dtype=torch.long), -1)
