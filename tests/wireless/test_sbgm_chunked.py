"""Chunked CSGMM EM through the system (issue 33.4): ``em_chunk_size`` reads a lazily opened HDF5 file one
chunk at a time and fits the same mixture as full-batch EM; under a ``torch.distributed`` group (two gloo
processes, each with half the observations) the summed statistics give the full-batch EM too."""

from __future__ import annotations

import socket
import subprocess
import sys

import numpy as np
import pytest
import torch

from scigen.wireless import SBGM, SBGMConfig, read_dataset, write_dataset
from scigen.wireless import channels as channels_module


@pytest.fixture(scope="module")
def data():
    return SBGM.default_data(quick=True).isel(sample=slice(150))


def test_chunked_fit_from_a_lazy_file_equals_the_full_batch_fit(data, tmp_path, monkeypatch):
    path = write_dataset(data, tmp_path / "obs.h5")
    full = SBGM(SBGMConfig.preset("tiny")).fit(data, max_steps=6, progress=False)
    reads = []
    original = channels_module._LazyArray._get

    def counting(self, key):
        out = original(self, key)
        reads.append((self.shape, np.shape(out)))
        return out

    monkeypatch.setattr(channels_module._LazyArray, "_get", counting)
    lazy = read_dataset(path, lazy=True)
    chunked = SBGM(SBGMConfig.preset("tiny", em_chunk_size=32)).fit(lazy, max_steps=6, progress=False)
    torch.testing.assert_close(chunked.network.gamma, full.network.gamma, rtol=1e-9, atol=1e-15)
    torch.testing.assert_close(chunked.network.log_pi, full.network.log_pi, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(chunked.history.losses, full.history.losses, rtol=1e-10)
    y_reads = [got for shape, got in reads if shape == data["y"].shape]
    assert y_reads and max(r[0] for r in y_reads) <= 32  # y was read 32 observations at a time, never whole
    assert not lazy["y"].variable._in_memory
    # a path with em_chunk_size is opened lazily too
    again = SBGM(SBGMConfig.preset("tiny", em_chunk_size=50)).fit(str(path), max_steps=6, progress=False)
    torch.testing.assert_close(again.network.gamma, full.network.gamma, rtol=1e-9, atol=1e-15)
    lazy.close()


def test_chunk_reading_checks_each_chunk(data, tmp_path):
    bad = data.copy()
    y = data["y"].values.copy()
    y[100, 3] = np.nan
    bad["y"] = (("sample", "pilot"), y)
    path = write_dataset(bad, tmp_path / "bad.h5")
    from scigen.core.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="NaN"):
        SBGM(SBGMConfig.preset("tiny", em_chunk_size=40)).fit(read_dataset(path, lazy=True), max_steps=2,
                                                               progress=False)


WORKER = r'''
import os, sys, torch, torch.distributed as dist, torch.multiprocessing as mp
from scigen.wireless import SBGM
from scigen.wireless.dictionaries import Dictionary
from scigen.wireless.sbgm.csgmm import CSGMMNet, em_step, init_csgmm

def observations():
    ds = SBGM.default_data(quick=True).isel(sample=slice(120))
    y, z, A = (torch.as_tensor(ds[k].values) for k in ("y", "noise_var", "A"))
    d = Dictionary.build(32, angle_grid=48)
    return y, z, A @ d.matrix, d.grid_shape

def work(rank, world, port, out):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    y, z, phi, grid = observations()
    mine = slice(rank * 60, (rank + 1) * 60)  # each process holds half of the observations
    net = CSGMMNet(3, grid)
    init_csgmm(net, y[mine], z[mine], phi, torch.Generator().manual_seed(0))
    lls = [em_step(net, y[mine], z[mine], phi, chunk_size=25) for _ in range(4)]
    if rank == 0:
        torch.save({"gamma": net.gamma, "log_pi": net.log_pi, "lls": torch.tensor(lls, dtype=torch.float64)}, out)
    dist.destroy_process_group()

if __name__ == "__main__":
    mp.spawn(work, args=(2, sys.argv[1], sys.argv[2]), nprocs=2)
'''


def test_statistics_are_summed_over_a_process_group(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    script = tmp_path / "ddp_em.py"
    script.write_text(WORKER)
    out = tmp_path / "rank0.pt"
    r = subprocess.run([sys.executable, str(script), port, str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    got = torch.load(out)
    # the same EM on all 120 observations in this process (no process group)
    from scigen.wireless.dictionaries import Dictionary
    from scigen.wireless.sbgm.csgmm import CSGMMNet, em_step, init_csgmm

    ds = SBGM.default_data(quick=True).isel(sample=slice(120))
    y, z, A = (torch.as_tensor(ds[k].values) for k in ("y", "noise_var", "A"))
    d = Dictionary.build(32, angle_grid=48)
    phi = A @ d.matrix
    net = CSGMMNet(3, d.grid_shape)
    init_csgmm(net, y, z, phi, torch.Generator().manual_seed(0))
    lls = [em_step(net, y, z, phi) for _ in range(4)]
    torch.testing.assert_close(got["gamma"], net.gamma, rtol=1e-9, atol=1e-15)
    torch.testing.assert_close(got["log_pi"], net.log_pi, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got["lls"].numpy(), lls, rtol=1e-10)
    # one process alone (half the data) fits another mixture: the sum over processes matters
    half = CSGMMNet(3, d.grid_shape)
    init_csgmm(half, y[:60], z[:60], phi, torch.Generator().manual_seed(0))
    for _ in range(4):
        em_step(half, y[:60], z[:60], phi)
    assert not torch.allclose(half.gamma, net.gamma, rtol=1e-3)
