"""Training on AnnData larger than memory: rows of a backed ``.h5ad`` read per batch, statistics in one pass.

An AnnData opened with ``anndata.read_h5ad(path, backed="r")`` (or a path given to ``fit(..., backed=True)``)
keeps its matrix on disk. :class:`RowReader` reads a set of rows of the modelled representation (``X``,
``layers[name]`` or ``obsm[key]``; dense or CSR) from the file in **one** h5py call (HDF5 wants the rows sorted
and unique: they are sorted, read, and put back in the asked order), opening the file lazily in each process
so that it works inside DataLoader workers (``fit(..., num_workers=N)``). :func:`column_stats` computes
per-feature count, min, max, mean and variance in one streaming pass over row blocks (Chan, Golub & LeVeque
1979's pairwise update of the mean and the sum of squared deviations), equal to the in-memory values (min / max
exactly, mean / variance to float64 rounding).

What stays in memory is what anndata itself keeps of a backed file (``obs``, ``var``; anndata loads ``layers``
and ``obsm`` of a backed file whole, so for data larger than memory model ``X``) and the integer row indices of
the training cells (8 bytes a cell), never the cells x features matrix.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from scigen.core.errors import InvalidInputError

__all__ = ["BLOCK_BYTES", "RowReader", "column_stats", "is_backed", "open_input", "write_dense_h5ad"]

#: the bytes of float64 values one streaming block reads (its rows: ``BLOCK_BYTES // (8 · n_features)``)
BLOCK_BYTES = 4 * 2**20


def is_backed(adata: Any) -> bool:
    """True for an AnnData whose matrix is on disk (``backed="r"``)."""
    return bool(getattr(adata, "isbacked", False))


def open_input(data: Any, backed: bool) -> Any:
    """``data`` itself, or for a path the ``.h5ad`` file it names: opened ``backed="r"`` with ``backed=True``
    (rows read per batch), else read into memory. Errors name the file (:func:`~scigen.singlecell.h5ad.open_h5ad`)."""
    if not isinstance(backed, bool):
        raise InvalidInputError(f"backed must be True or False, got {backed!r}")
    if not isinstance(data, (str, os.PathLike)):
        return data
    from scigen.singlecell.h5ad import open_h5ad, read_h5ad_file

    if not backed:
        return read_h5ad_file(data)
    p = Path(data)
    if p.suffix != ".h5ad":
        raise InvalidInputError(f"{p}: expected an .h5ad file, got suffix {p.suffix!r}")
    adata = open_h5ad(p, backed="r")
    if adata.n_obs == 0:
        raise InvalidInputError(f"{p}: holds no cells (n_obs == 0)")
    return adata


class RowReader:
    """Rows of one representation of a backed ``.h5ad`` file as float64 arrays (see the module docstring).

    Picklable: it holds the file name and the element's path, and each process opens the file on first use.
    """

    def __init__(self, adata: Any, use_rep: str | None = None, layer: str | None = None) -> None:
        from scigen.singlecell.io import rep_dim, resolve_rep

        if not is_backed(adata):
            raise InvalidInputError("RowReader needs a backed AnnData (anndata.read_h5ad(path, backed='r'))")
        if getattr(adata, "is_view", False):
            raise InvalidInputError("a view of a backed AnnData cannot be read row by row: pass the backed AnnData "
                                    "itself (the systems select cells by obs keys, e.g. condition=)")
        kind, key = resolve_rep(adata, use_rep, layer)
        self.filename = str(adata.filename)
        self.element = {"X": "X", "layer": f"layers/{key}", "obsm": f"obsm/{key}"}[kind]
        self.n_obs, self.dim = int(adata.n_obs), rep_dim(adata, use_rep, layer)
        self.what = {"X": "X", "layer": f"layers[{key!r}]", "obsm": f"obsm[{key!r}]"}[kind]
        self._node, self._pid = None, None
        self._open()  # fail now (CSC, a data frame in obsm), not in a worker

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("_node", "_file")} | {"_node": None, "_pid": None}

    def _open(self):
        if self._node is not None and self._pid == os.getpid():
            return self._node
        import h5py

        self._file = h5py.File(self.filename, "r")
        node = self._file[self.element]
        if isinstance(node, h5py.Group):
            enc = node.attrs.get("encoding-type", "")
            enc = enc.decode() if isinstance(enc, bytes) else str(enc)
            if enc == "csc_matrix":
                raise InvalidInputError(f"{self.filename}: {self.what} is stored CSC (by column); reading cells "
                                        "means reading every column: write it as CSR (adata.X = adata.X.tocsr()) "
                                        "to train from the file")
            if enc != "csr_matrix":
                raise InvalidInputError(f"{self.filename}: {self.what} is a {enc or 'group'}, not a matrix that "
                                        "can be read by rows (a dense array or CSR)")
            from anndata.io import sparse_dataset

            node = sparse_dataset(node)
        self._node, self._pid = node, os.getpid()
        return node

    def read(self, rows) -> np.ndarray:
        """The rows ``rows`` (any order, repeats allowed) as float64 ``[len(rows), dim]``, in one read."""
        rows = np.asarray(rows, dtype=np.int64)
        uniq, inverse = np.unique(rows, return_inverse=True)
        node = self._open()
        if len(uniq) == 0:
            return np.zeros((0, self.dim))
        if uniq[-1] - uniq[0] + 1 == len(uniq):  # contiguous: one slice
            block = node[int(uniq[0]):int(uniq[-1]) + 1]
        else:
            block = node[uniq]
        if hasattr(block, "toarray"):
            block = block.toarray()
        from scigen.core.validation import check_real

        check_real(block, self.what, hint="the models here are real-valued: store the real and imaginary parts "
                   "as separate features")
        out = np.asarray(block, dtype=np.float64)
        return out if len(uniq) == len(rows) and (np.diff(rows) > 0).all() else out[inverse.reshape(-1)]

    def blocks(self, rows, block_bytes: int | None = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """``(rows, values)`` blocks over ``rows`` (sorted first), each at most ``block_bytes`` (default
        :data:`BLOCK_BYTES`) of float64; every block is checked to be finite (the error names the cell)."""
        rows = np.sort(np.asarray(rows, dtype=np.int64))
        step = max(1, int(BLOCK_BYTES if block_bytes is None else block_bytes) // (8 * max(self.dim, 1)))
        for start in range(0, len(rows), step):
            r = rows[start:start + step]
            x = self.read(r)
            bad = ~np.isfinite(x)
            if bad.any():
                i, j = (int(v) for v in np.argwhere(bad)[0])
                raise InvalidInputError(f"{self.what} has NaN/inf values (first at cell {int(r[i])}, feature {j})")
            yield r, x


def column_stats(reader: RowReader, rows, block_bytes: int | None = None,
                 round_to=None) -> dict[str, np.ndarray | int]:
    """``{"n", "min", "max", "mean", "var"}`` (float64, ``var`` with ddof 0) of the rows ``rows`` in one pass.
    ``round_to`` (e.g. ``np.float32``): the statistics of the values rounded to that type first (what a
    system that holds its data as float32 sees).

    Blocks are merged with Chan, Golub & LeVeque's update (``M2 = M2_a + M2_b + δ² n_a n_b / n``), which
    keeps float64 accuracy where the textbook ``E[x²] − E[x]²`` cancels."""
    n, mean, m2 = 0, np.zeros(reader.dim), np.zeros(reader.dim)
    lo, hi = np.full(reader.dim, np.inf), np.full(reader.dim, -np.inf)
    for _, x in reader.blocks(rows, block_bytes):
        if round_to is not None:
            x = x.astype(round_to).astype(np.float64)
        nb = x.shape[0]
        mb = x.mean(0)
        m2b = ((x - mb) ** 2).sum(0)
        tot = n + nb
        delta = mb - mean
        mean = mean + delta * (nb / tot)
        m2 = m2 + m2b + delta**2 * (n * nb / tot)
        n = tot
        lo, hi = np.minimum(lo, x.min(0)), np.maximum(hi, x.max(0))
    if n == 0:
        raise InvalidInputError("no cells to compute statistics over")
    return {"n": n, "min": lo, "max": hi, "mean": mean, "var": m2 / n}


def write_dense_h5ad(path: str | os.PathLike, obs, n_genes: int, block, *, rows_per_block: int = 4096) -> int:
    """Write an ``.h5ad`` whose dense float32 ``X`` (``len(obs) x n_genes``) is filled block by block by
    ``block(a, b) -> array [b - a, n_genes]`` (never whole in memory: data larger than memory for tests and
    benchmarks); ``obs`` is a DataFrame, genes are named ``g0, g1, ...``. Returns the bytes of ``X``."""
    import anndata
    import h5py
    import pandas as pd

    n_cells = len(obs)
    anndata.AnnData(obs=obs, var=pd.DataFrame(index=[f"g{j}" for j in range(n_genes)])).write_h5ad(path)
    with h5py.File(path, "a") as f:
        if "X" in f:
            del f["X"]
        ds = f.create_dataset("X", shape=(n_cells, n_genes), dtype="f4")
        ds.attrs["encoding-type"], ds.attrs["encoding-version"] = "array", "0.2.0"
        for a in range(0, n_cells, rows_per_block):
            b = min(a + rows_per_block, n_cells)
            ds[a:b] = np.asarray(block(a, b), dtype=np.float32)
    return n_cells * n_genes * 4
