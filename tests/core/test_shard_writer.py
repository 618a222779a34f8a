"""Samples written by ranks into one atomic output (issue 33.3): ``write_in_shards`` writes ``draw(keys)`` for
``keys = 0..n-1`` a chunk at a time into one ``.npy`` file (or one folder of them), the same for any chunk size
or number of processes, and leaves nothing behind when it fails."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.core.system.shard_writer import load_sharded_samples, write_in_shards


def _rows(keys: torch.Tensor) -> torch.Tensor:
    """Sample ``k`` is ``[k, k², -k]`` (float64): any misplaced row is visible."""
    k = keys.double()
    return torch.stack([k, k * k, -k], dim=1)


def test_a_tensor_per_sample_goes_to_one_npy_file_drawn_a_chunk_at_a_time(tmp_path):
    calls = []

    def draw(keys):
        calls.append(keys.tolist())
        return _rows(keys)

    out = write_in_shards(draw, 10, tmp_path / "x.npy", chunk_size=3)
    assert out == tmp_path / "x.npy"
    assert calls == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]  # memory: at most one chunk of 3 at a time
    k = np.arange(10.0)
    np.testing.assert_array_equal(np.load(out), np.stack([k, k * k, -k], axis=1))
    assert isinstance(load_sharded_samples(out), np.memmap)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.npy"]  # no temporary file left



def test_blocks_keep_the_draws_aligned_to_multiples_of_the_block(tmp_path):
    calls = []

    def draw(keys):
        calls.append(keys.tolist())
        return _rows(keys)

    write_in_shards(draw, 10, tmp_path / "x.npy", chunk_size=3, block=4)  # chunks rounded up to 4
    assert calls == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    np.testing.assert_array_equal(np.load(tmp_path / "x.npy")[:, 0], np.arange(10.0))
    with pytest.raises(InvalidInputError, match="block"):
        write_in_shards(draw, 4, tmp_path / "y.npy", block=0)

def test_dicts_and_tuples_go_to_a_folder_with_a_manifest(tmp_path):
    def draw(keys):
        return {"x": _rows(keys).float(), "label": keys % 2 == 0, "z": torch.complex(keys.float(), -keys.float())}

    out = write_in_shards(draw, 5, tmp_path / "s", chunk_size=2)
    got = load_sharded_samples(out)
    assert list(got) == ["x", "label", "z"]
    np.testing.assert_array_equal(got["label"], [True, False, True, False, True])
    np.testing.assert_array_equal(got["z"], np.arange(5) - 1j * np.arange(5))
    assert got["x"].dtype == np.float32 and got["x"].shape == (5, 3)
    pair = load_sharded_samples(write_in_shards(lambda keys: (keys, keys * 10), 4, tmp_path / "t"), mmap=False)
    assert isinstance(pair, tuple) and pair[1].tolist() == [0, 10, 20, 30]


def test_a_failure_leaves_no_output_and_an_existing_one_untouched(tmp_path):
    target = tmp_path / "x.npy"

    def failing(keys):
        if int(keys[0]) >= 6:
            raise RuntimeError("draw failed at key 6")
        return _rows(keys)

    with pytest.raises(RuntimeError, match="key 6"):
        write_in_shards(failing, 10, target, chunk_size=3)
    assert list(tmp_path.iterdir()) == []
    np.save(target, np.zeros(2))
    with pytest.raises(InvalidInputError, match="exists; pass overwrite=True"):
        write_in_shards(_rows, 4, target)
    with pytest.raises(RuntimeError, match="key 6"):
        write_in_shards(failing, 10, target, chunk_size=3, overwrite=True)
    np.testing.assert_array_equal(np.load(target), np.zeros(2))  # the failed overwrite left it as it was
    write_in_shards(_rows, 4, target, overwrite=True)
    assert np.load(target).shape == (4, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.npy"]


def test_bad_draws_and_arguments_are_named(tmp_path):
    with pytest.raises(InvalidInputError, match="same shape"):
        write_in_shards(lambda keys: torch.zeros(len(keys), int(keys[0]) + 1), 4, tmp_path / "r.npy", chunk_size=2)
    with pytest.raises(InvalidInputError, match="one row per key"):
        write_in_shards(lambda keys: torch.zeros(3), 4, tmp_path / "r.npy")
    with pytest.raises(InvalidInputError, match="cannot name a file"):
        write_in_shards(lambda keys: {"a/b": keys}, 4, tmp_path / "d")
    with pytest.raises(InvalidInputError, match="name the output without the .npy suffix"):
        write_in_shards(lambda keys: (keys, keys), 4, tmp_path / "d.npy")
    with pytest.raises(InvalidInputError, match=r"name the output \*.npy"):
        write_in_shards(_rows, 4, tmp_path / "x.pt")
    with pytest.raises(InvalidInputError, match="bfloat16"):
        write_in_shards(lambda keys: keys.to(torch.bfloat16), 4, tmp_path / "b.npy")
    with pytest.raises(InvalidInputError, match="chunk_size"):
        write_in_shards(_rows, 4, tmp_path / "c.npy", chunk_size=0)
    with pytest.raises(InvalidInputError, match="devices"):
        write_in_shards(_rows, 4, tmp_path / "c.npy", devices=0)
    assert list(tmp_path.iterdir()) == []


SCRIPT = textwrap.dedent(
    """
    import sys
    import torch
    from scigen.core.system.shard_writer import write_in_shards

    def draw(keys):
        if sys.argv[2] == "fail" and int(keys[0]) >= 7:
            raise RuntimeError("rank of key 7 failed")
        k = keys.double()
        return {"x": torch.stack([k, k * k, -k], dim=1), "n": keys}

    if __name__ == "__main__":
        write_in_shards(draw, 11, sys.argv[1], devices=2, chunk_size=2)
    """
)


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
def test_two_processes_write_their_rows_into_one_output(tmp_path, run_script):
    run_script(tmp_path / "run.py", tmp_path / "two", "ok", cwd=tmp_path, text=SCRIPT)
    one = write_in_shards(lambda keys: {"x": _rows(keys), "n": keys}, 11, tmp_path / "one", chunk_size=5)
    a, b = load_sharded_samples(tmp_path / "two"), load_sharded_samples(one)
    for name in ("x", "n"):
        np.testing.assert_array_equal(a[name], b[name])
    # rank 1 (keys 6..10) fails on its second chunk: both ranks exit with an error, no output, no temporary
    proc = subprocess.run([sys.executable, str(tmp_path / "run.py"), str(tmp_path / "bad"), "fail"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=150, env={**__import__("os").environ,
                                                                            "OMP_NUM_THREADS": "1"})
    assert proc.returncode != 0 and "rank of key 7 failed" in proc.stdout + proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one", "run.py", "two"]
