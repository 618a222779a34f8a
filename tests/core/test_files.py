"""Atomic writes: the target is replaced whole or not at all, and no temporary file is left behind."""

from __future__ import annotations

import numpy as np
import pytest

from scigen.core.files import atomic_path, atomic_write_text


def test_atomic_write_text_creates_parents_and_replaces(tmp_path):
    target = tmp_path / "a" / "b" / "out.txt"
    assert atomic_write_text(target, "first\n") == target
    atomic_write_text(target, "second\n")
    assert target.read_text() == "second\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.txt"]


def test_a_failing_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("good\n")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "good\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_the_temporary_keeps_the_suffix_for_format_sniffing_writers(tmp_path):
    target = tmp_path / "table.npz"
    with atomic_path(target) as tmp:
        assert tmp.suffix == ".npz" and tmp.parent == tmp_path
        np.savez(tmp, x=np.arange(3))  # numpy appends .npz unless the name already ends with it
    np.testing.assert_array_equal(np.load(target)["x"], np.arange(3))
    assert [p.name for p in tmp_path.iterdir()] == ["table.npz"]


def test_atomic_dir_appears_whole_or_not_at_all(tmp_path):
    from scigen.core.errors import InvalidInputError
    from scigen.core.files import atomic_dir

    target = tmp_path / "sub" / "out"
    with atomic_dir(target) as tmp:
        assert tmp.parent == target.parent and tmp.is_dir() and not any(tmp.iterdir())
        (tmp / "a.txt").write_text("1")
        assert not target.exists()  # nothing visible until the block ends
    assert sorted(p.name for p in target.iterdir()) == ["a.txt"]
    with pytest.raises(RuntimeError), atomic_dir(target, overwrite=True) as tmp:
        (tmp / "a.txt").write_text("half")
        raise RuntimeError("interrupted")
    assert (target / "a.txt").read_text() == "1"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out"]  # no temporary left
    with pytest.raises(InvalidInputError, match="already exists"), atomic_dir(target):
        pass
    with atomic_dir(target, overwrite=True) as tmp:  # a superset of the old entries replaces it
        (tmp / "a.txt").write_text("2")
        (tmp / "b.txt").write_text("3")
    assert (target / "a.txt").read_text() == "2" and (target / "b.txt").is_file()
    assert sorted(p.name for p in target.parent.iterdir()) == ["out"]


def test_atomic_dir_never_removes_what_it_did_not_write(tmp_path):
    from scigen.core.errors import InvalidInputError
    from scigen.core.files import atomic_dir

    target = tmp_path / "out"
    target.mkdir()
    (target / "mine.txt").write_text("user file")
    with pytest.raises(InvalidInputError, match="mine.txt"), atomic_dir(target, overwrite=True) as tmp:
        (tmp / "a.txt").write_text("new")
    assert sorted(p.name for p in target.iterdir()) == ["mine.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidInputError, match="not a directory"), atomic_dir(tmp_path / "file", overwrite=True):
        pass
