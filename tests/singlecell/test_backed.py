"""Training on backed AnnData (data larger than memory): statistics, batches and weights equal the in-memory run.

References: numpy's own min / max / mean / var over the whole matrix (the streaming statistics), and the
same system trained on the same AnnData read into memory (the batches and weights, same seed). The memory
test measures peak RSS in a child process for 1x and 4x the data (see ``_rss_child``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import anndata
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import torch

from scigen.core.errors import InvalidInputError
from scigen.singlecell.backed import RowReader, column_stats, open_input

QUIET = {"progress": False, "logger": None}


def _time_course(n_per_time: int = 60, d: int = 6, times=(0.0, 1.0, 2.0, 3.0), seed: int = 0, sparse=False,
                 dtype=np.float32):
    rng = np.random.default_rng(seed)
    blocks = [rng.normal(loc=t, scale=1.0 + 0.1 * t, size=(n_per_time, d)) for t in times]
    x = np.concatenate(blocks).astype(dtype)
    if sparse:
        x[np.abs(x) < 0.8] = 0.0
    perm = rng.permutation(len(x))  # time points interleaved in the file, as in real data
    obs = pd.DataFrame({"day": np.repeat(times, n_per_time)[perm]}, index=[f"c{i}" for i in range(len(x))])
    X = sp.csr_matrix(x[perm]) if sparse else x[perm]
    ad = anndata.AnnData(X=X, obs=obs, var=pd.DataFrame(index=[f"g{j}" for j in range(d)]))
    ad.obsm["X_low"] = x[perm][:, :3].astype(np.float64)
    return ad


@pytest.mark.parametrize("sparse", [False, True])
def test_row_reader_reads_asked_rows_in_asked_order(tmp_path, sparse):
    ad = _time_course(sparse=sparse)
    path = tmp_path / "a.h5ad"
    ad.write_h5ad(path)
    b = anndata.read_h5ad(path, backed="r")
    dense = ad.X.toarray() if sparse else ad.X
    reader = RowReader(b)
    rows = np.array([17, 3, 3, 200, 0, 239])
    np.testing.assert_array_equal(reader.read(rows), dense[rows].astype(np.float64))
    np.testing.assert_array_equal(reader.read(np.arange(10, 30)), dense[10:30])
    low = RowReader(b, use_rep="X_low")
    np.testing.assert_array_equal(low.read(rows), ad.obsm["X_low"][rows])


@pytest.mark.parametrize("sparse", [False, True])
def test_streaming_stats_equal_in_memory(tmp_path, sparse):
    ad = _time_course(n_per_time=250, d=5, sparse=sparse, dtype=np.float64)
    path = tmp_path / "a.h5ad"
    ad.write_h5ad(path)
    reader = RowReader(anndata.read_h5ad(path, backed="r"))
    dense = ad.X.toarray() if sparse else ad.X
    rows = np.flatnonzero(ad.obs["day"].to_numpy() > 0.5)
    st = column_stats(reader, rows, block_bytes=8 * 5 * 37)  # blocks of 37 rows: many merges
    ref = dense[rows]
    assert st["n"] == len(rows)
    np.testing.assert_array_equal(st["min"], ref.min(0))
    np.testing.assert_array_equal(st["max"], ref.max(0))
    np.testing.assert_allclose(st["mean"], ref.mean(0), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(st["var"], ref.var(0), rtol=1e-12)


def test_csc_matrix_is_refused_with_the_fix(tmp_path):
    ad = _time_course(sparse=True)
    ad.X = ad.X.tocsc()
    path = tmp_path / "a.h5ad"
    ad.write_h5ad(path)
    with pytest.raises(InvalidInputError, match="CSC"):
        RowReader(anndata.read_h5ad(path, backed="r"))


def test_open_input_names_bad_paths(tmp_path):
    with pytest.raises(InvalidInputError, match="no such file"):
        open_input(tmp_path / "missing.h5ad", True)
    (tmp_path / "x.csv").write_text("a,b\n1,2\n")
    with pytest.raises(InvalidInputError, match="h5ad"):
        open_input(tmp_path / "x.csv", True)
    with pytest.raises(InvalidInputError, match="backed"):
        open_input(tmp_path / "x.csv", "yes")


def _params(system) -> list[torch.Tensor]:
    return [p.detach().clone() for p in system.network.parameters()]


@pytest.mark.parametrize(("sparse", "scaler"), [(False, "minmax"), (True, "standard")])
def test_mmsfm_backed_trains_like_in_memory(tmp_path, sparse, scaler):
    from scigen.singlecell import MMSFM

    ad = _time_course(sparse=sparse)
    path = tmp_path / "a.h5ad"
    ad.write_h5ad(path)
    kw = dict(time_key="day", holdout=[2.0], max_steps=6, batch_size=16, seed=3, **QUIET)
    cfg = dict(k=1, width=16, depth=2, scaler=scaler, max_source_cells=50)
    mem = MMSFM(**cfg).fit(anndata.read_h5ad(path), **kw)
    disk = MMSFM(**cfg).fit(path, backed=True, num_workers=1, **kw)
    exact = scaler == "minmax"  # min / max stream exactly; the standard scaler's mean / std to float64 rounding
    for key in ("shift", "scale", "source"):
        if exact or key == "source":
            torch.testing.assert_close(disk.buffers[key], mem.buffers[key], rtol=0, atol=0)
        else:
            torch.testing.assert_close(disk.buffers[key], mem.buffers[key], rtol=1e-12, atol=1e-12)
    tol = {"rtol": 0, "atol": 0} if exact else {"rtol": 1e-5, "atol": 1e-6}
    np.testing.assert_allclose(disk.history.losses, mem.history.losses, **tol)
    for p, q in zip(_params(disk), _params(mem), strict=True):
        torch.testing.assert_close(p, q, **tol)
    assert disk.metadata["cells_per_time"] == mem.metadata["cells_per_time"]
