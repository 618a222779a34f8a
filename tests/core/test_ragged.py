"""The on-disk ragged store: what is written is what is read, record by record and in blocks."""

import pickle

import numpy as np
import pytest

from scigen.core.errors import InvalidInputError
from scigen.core.ragged import RaggedArrays, is_ragged_store, write_ragged


def _records(n, seed=0):
    rng = np.random.default_rng(seed)
    for i in range(n):
        k = int(rng.integers(1, 9))
        yield {"pos": rng.normal(size=(k, 3)), "z": rng.integers(1, 10, size=k).astype(np.int8),
               "edges": rng.integers(0, k, size=(int(rng.integers(0, 5)), 2)), "y": np.array([i, -i], np.float32)}


def test_round_trip_records_blocks_and_chunks(tmp_path):
    attrs = {}

    def gen():
        yield from _records(37)
        attrs["seen"] = 37  # filled while yielding: read after the last record

    p = write_ragged(tmp_path / "s", gen(), ragged=("pos", "z", "edges"), attrs=attrs)
    assert is_ragged_store(p) and not is_ragged_store(tmp_path) and not is_ragged_store(None)
    k = write_ragged(tmp_path / "k", _records(2), ragged=("pos", "z", "edges"), attrs={"kind": "graphs"})
    assert is_ragged_store(k, kind="graphs") and not is_ragged_store(k, kind="molecules")
    assert not is_ragged_store(p, kind="graphs")  # a store without a kind is no domain's store
    st = RaggedArrays(p)
    ref = list(_records(37))
    assert len(st) == 37 and st.attrs == {"seen": 37}
    for i in (0, 5, 36, -1):
        got = st[i]
        for f, v in ref[i].items():
            assert got[f].dtype == v.dtype and np.array_equal(got[f], v)
            assert got[f].flags.writeable
    pos = np.concatenate([r["pos"] for r in ref[3:20]])
    assert np.array_equal(st.field("pos", 3, 20), pos)
    assert np.array_equal(st.lengths("edges"), [len(r["edges"]) for r in ref])
    assert np.array_equal(st.field("y", 3, 20), np.stack([r["y"] for r in ref[3:20]]))
    blocks = list(st.chunks("z", records=10))
    assert [(a, b) for a, b, _ in blocks] == [(0, 10), (10, 20), (20, 30), (30, 37)]
    assert np.array_equal(np.concatenate([v for _, _, v in blocks]), np.concatenate([r["z"] for r in ref]))
    clone = pickle.loads(pickle.dumps(st))
    assert np.array_equal(clone[7]["pos"], ref[7]["pos"])
    with pytest.raises(IndexError):
        st[37]


def test_bad_records_are_refused_and_leave_nothing(tmp_path):
    with pytest.raises(InvalidInputError, match="nothing to write"):
        write_ragged(tmp_path / "a", iter([]))
    recs = [{"x": np.zeros((2, 3))}, {"x": np.zeros((2, 4))}]
    with pytest.raises(InvalidInputError, match=r"records\[1\]\['x'\] has shape"):
        write_ragged(tmp_path / "b", recs, ragged=("x",))
    with pytest.raises(InvalidInputError, match="fields"):
        write_ragged(tmp_path / "c", [{"x": np.zeros(2)}, {"y": np.zeros(2)}])
    with pytest.raises(InvalidInputError, match="not numeric"):
        write_ragged(tmp_path / "d", [{"s": np.array(["a"])}])
    with pytest.raises(InvalidInputError, match="not fields"):
        write_ragged(tmp_path / "e", [{"x": np.zeros(2)}], ragged=("w",))
    assert not any(tmp_path.iterdir())
    with pytest.raises(InvalidInputError, match="not a ragged store"):
        RaggedArrays(tmp_path)
    write_ragged(tmp_path / "f", [{"x": np.zeros(2)}])
    with pytest.raises(InvalidInputError, match="exists"):
        write_ragged(tmp_path / "f", [{"x": np.zeros(2)}])
