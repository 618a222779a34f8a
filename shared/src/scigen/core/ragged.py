"""Many variable-size records (molecules, graphs) in flat files on disk, read one record at a time.

A *ragged store* is a folder: per field one raw binary file holding every record's array back to back
(``<field>.bin``), per ragged field an ``int64`` offsets file (``<field>.offsets``, ``n + 1`` entries, record
``i`` owns rows ``offsets[i]:offsets[i+1]``), and ``ragged.json`` (record count, dtypes, row shapes,
free ``attrs``). The layout is the CSR one of :mod:`scigen.molecules.data.batching` and PyG's
``InMemoryDataset`` "slices", kept on disk instead of in memory.

:func:`write_ragged` writes records from any iterable (a generator over a file too big for memory:
it holds one record at a time) into a folder renamed into place when complete
(:func:`scigen.core.files.atomic_dir`). :class:`RaggedArrays` reads record ``i`` with positional reads
(``os.preadv``) of exactly its bytes, so the process holds one batch, never the file: unlike
``numpy.memmap``, pages read once do not stay mapped, so a full pass over the store (statistics, a
vocabulary) leaves the resident set size where it was (the OS page cache, which is not the process's
memory, keeps what it likes). :meth:`RaggedArrays.chunks` streams one field in blocks for such passes.
Instances pickle by path (file handles are reopened in each process), so DataLoader workers can use them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from scigen.core.errors import InvalidInputError
from scigen.core.files import atomic_dir

__all__ = ["META_FILE", "RaggedArrays", "is_ragged_store", "write_ragged"]

META_FILE = "ragged.json"
_FORMAT = "scigen-ragged/1"


def is_ragged_store(path: Any, kind: str | None = None) -> bool:
    """True when ``path`` (a ``str`` or path; anything else is not a store) is a folder written by
    :func:`write_ragged`, and, when ``kind`` is given, its ``attrs["kind"]`` is ``kind`` (a domain's own store)."""
    if not isinstance(path, (str, os.PathLike)):
        return False
    if not (Path(path).is_dir() and (Path(path) / META_FILE).is_file()):
        return False
    return kind is None or RaggedArrays(path).attrs.get("kind") == kind


def write_ragged(path: str | os.PathLike[str], records: Iterable[Mapping[str, Any]], *, ragged: Sequence[str] = (),
                 attrs: Mapping[str, Any] | None = None, overwrite: bool = False) -> Path:
    """Write ``records`` (mappings ``field -> array``) to the ragged store ``path``; return ``path``.

    The first record fixes the fields, their dtypes and row shapes. A field named in ``ragged`` may
    change its first dimension from record to record (atoms, edges); any other field must have the same
    shape in every record (a property vector, a label). ``attrs`` (JSON) is read *after* the last record,
    so a generator may fill it while it yields (a vocabulary seen on the way). Records are written as
    they come: memory holds one record. An existing ``path`` is refused unless ``overwrite`` and it is an
    older store (see :func:`~scigen.core.files.atomic_dir`).
    """
    ragged = tuple(ragged)
    with atomic_dir(path, overwrite=overwrite) as tmp:
        files: dict[str, Any] = {}
        offsets: dict[str, Any] = {}
        spec: dict[str, dict[str, Any]] = {}
        ends: dict[str, int] = {}
        n = 0
        try:
            for k, rec in enumerate(records):
                if not isinstance(rec, Mapping):
                    raise InvalidInputError(f"records[{k}]: expected a mapping field -> array, got {type(rec).__name__}")
                arrays = {str(f): np.asarray(v) for f, v in rec.items()}
                if k == 0:
                    unknown = sorted(set(ragged) - set(arrays))
                    if unknown:
                        raise InvalidInputError(f"ragged fields {unknown} are not fields of the first record "
                                                f"(fields {sorted(arrays)})")
                    for f, a in arrays.items():
                        if a.dtype.kind not in "biuf":
                            raise InvalidInputError(f"records[0][{f!r}]: dtype {a.dtype} is not numeric (store "
                                                    "strings as codes of a vocabulary in attrs)")
                        if f in ragged and a.ndim == 0:
                            raise InvalidInputError(f"records[0][{f!r}]: a ragged field needs a first dimension")
                        shape = list(a.shape[1:] if f in ragged else a.shape)
                        spec[f] = {"dtype": a.dtype.str, "shape": shape, "ragged": f in ragged}
                        files[f] = open(tmp / f"{f}.bin", "wb")  # noqa: SIM115 (closed in finally)
                        if f in ragged:
                            offsets[f] = open(tmp / f"{f}.offsets", "wb")  # noqa: SIM115
                            offsets[f].write(np.zeros(1, np.int64).tobytes())
                            ends[f] = 0
                elif set(arrays) != set(spec):
                    raise InvalidInputError(f"records[{k}] has fields {sorted(arrays)}, the first record "
                                            f"{sorted(spec)}")
                for f, a in arrays.items():
                    s = spec[f]
                    want = tuple(s["shape"])
                    if (a.shape[1:] if s["ragged"] else a.shape) != want or (s["ragged"] and a.ndim != len(want) + 1):
                        raise InvalidInputError(f"records[{k}][{f!r}] has shape {a.shape}; the store's rows are "
                                                f"{('[n, ' + ', '.join(map(str, want)) + ']') if s['ragged'] else list(want)}")
                    files[f].write(np.ascontiguousarray(a, dtype=np.dtype(s["dtype"])).tobytes())
                    if s["ragged"]:
                        ends[f] += a.shape[0]
                        offsets[f].write(np.array([ends[f]], np.int64).tobytes())
                n += 1
        finally:
            for fh in (*files.values(), *offsets.values()):
                fh.close()
        if n == 0:
            raise InvalidInputError("records: nothing to write (the iterable is empty)")
        meta = {"format": _FORMAT, "n": n, "fields": spec, "attrs": dict(attrs or {})}
        (tmp / META_FILE).write_text(json.dumps(meta, indent=1))
    return Path(path)


class RaggedArrays(Sequence):
    """A ragged store (:func:`write_ragged`) opened for reading: ``store[i]`` is record ``i`` as a dict of
    fresh, writable numpy arrays, read from disk on each call."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if not is_ragged_store(self.path):
            raise InvalidInputError(f"{self.path}: not a ragged store (no {META_FILE}); write one with "
                                    "scigen.core.ragged.write_ragged")
        meta = json.loads((self.path / META_FILE).read_text())
        if meta.get("format") != _FORMAT:
            raise InvalidInputError(f"{self.path}: store format {meta.get('format')!r}, this reader reads {_FORMAT!r}")
        self.n = int(meta["n"])
        self.fields: dict[str, dict[str, Any]] = meta["fields"]
        self.attrs: dict[str, Any] = meta["attrs"]
        self._dtype = {f: np.dtype(s["dtype"]) for f, s in self.fields.items()}
        self._row = {f: int(np.prod(s["shape"], dtype=np.int64)) for f, s in self.fields.items()}
        self._fds: dict[str, int] | None = None

    # --------------------------------------------------------------- file handles (per process)
    def _fd(self, name: str) -> int:
        if self._fds is None or self._fds.get("__pid__") != os.getpid():
            self._fds = {"__pid__": os.getpid()}
        if name not in self._fds:
            self._fds[name] = os.open(self.path / name, os.O_RDONLY)
        return self._fds[name]

    def close(self) -> None:
        """Close the file handles of this process (reopened on the next read)."""
        if self._fds is not None and self._fds.get("__pid__") == os.getpid():
            for k, fd in self._fds.items():
                if k != "__pid__":
                    os.close(fd)
        self._fds = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 (interpreter shutdown)
            pass

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_fds": None}

    def _read(self, name: str, dtype: np.dtype, start: int, count: int) -> np.ndarray:
        out = np.empty(count, dtype)
        if count:
            want = out.nbytes
            got = os.preadv(self._fd(name), [memoryview(out).cast("B")], start * dtype.itemsize)
            if got != want:
                raise InvalidInputError(f"{self.path / name}: truncated ({got} of {want} bytes at item {start}); "
                                        "the store is damaged, write it again")
        return out

    # --------------------------------------------------------------- reading
    def __len__(self) -> int:
        return self.n

    def _index(self, i: int) -> int:
        if not hasattr(i, "__index__") or isinstance(i, bool):
            raise TypeError(f"store indices are integers, got {type(i).__name__}")
        j = int(i) + self.n if int(i) < 0 else int(i)
        if not 0 <= j < self.n:
            raise IndexError(f"record {i} out of range for a store of {self.n}")
        return j

    def offsets(self, field: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        """``offsets[start : stop + 1]`` of a ragged field (rows of records ``start..stop-1``)."""
        stop = self.n if stop is None else stop
        if not self.fields[field]["ragged"]:
            raise InvalidInputError(f"field {field!r} is not ragged")
        return self._read(f"{field}.offsets", np.dtype(np.int64), start, stop - start + 1)

    def lengths(self, field: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        """The row count of each record ``start..stop-1`` of a ragged field."""
        return np.diff(self.offsets(field, start, stop))

    def field(self, field: str, start: int, stop: int) -> np.ndarray:
        """Records ``start..stop-1`` of ``field`` in one read: the rows concatenated for a ragged field
        (split them with :meth:`offsets`), stacked ``[stop - start, ...]`` for a fixed one."""
        s, dt, row = self.fields[field], self._dtype[field], self._row[field]
        if s["ragged"]:
            o = self.offsets(field, start, stop)
            a = self._read(f"{field}.bin", dt, int(o[0]) * row, int(o[-1] - o[0]) * row)
            return a.reshape(-1, *s["shape"])
        return self._read(f"{field}.bin", dt, start * row, (stop - start) * row).reshape(stop - start, *s["shape"])

    def __getitem__(self, i: int) -> dict[str, np.ndarray]:
        if isinstance(i, slice):
            raise TypeError("a store is read one record at a time; use store.field(name, start, stop) for blocks")
        j = self._index(i)
        out = {}
        for f, s in self.fields.items():
            if s["ragged"]:
                a, b = self.offsets(f, j, j + 1)
                out[f] = self._read(f"{f}.bin", self._dtype[f], int(a) * self._row[f],
                                    int(b - a) * self._row[f]).reshape(-1, *s["shape"])
            else:
                out[f] = self._read(f"{f}.bin", self._dtype[f], j * self._row[f], self._row[f]).reshape(s["shape"])
        return out

    def __iter__(self) -> Iterator[dict[str, np.ndarray]]:
        for i in range(self.n):
            yield self[i]

    def chunks(self, field: str, records: int = 4096) -> Iterator[tuple[int, int, np.ndarray]]:
        """``(start, stop, values)`` blocks of ``records`` records of ``field`` (see :meth:`field`), for
        one streaming pass (statistics, vocabularies) that holds one block at a time."""
        if records < 1:
            raise InvalidInputError(f"records must be >= 1, got {records}")
        for start in range(0, self.n, records):
            stop = min(start + records, self.n)
            yield start, stop, self.field(field, start, stop)

    def nbytes(self) -> int:
        """The size of the store's files on disk."""
        return sum(p.stat().st_size for p in self.path.iterdir() if p.is_file())

    def __repr__(self) -> str:
        return f"RaggedArrays({str(self.path)!r}, {self.n} records, fields {sorted(self.fields)})"
