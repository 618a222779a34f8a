"""Atomic writes: the target is replaced whole or not at all, and no temporary file is left behind;
atomic folders appear whole under their final name or not at all (also under ``kill -9``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from scigen.core.errors import InvalidInputError
from scigen.core.files import atomic_dir, atomic_path, atomic_write_text


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


def test_atomic_dir_appears_whole_under_its_name(tmp_path):
    target = tmp_path / "sub" / "samples"
    with atomic_dir(target) as tmp:
        assert tmp.parent == target.parent and tmp.is_dir() and not target.exists()
        for i in range(3):
            (tmp / f"{i}.txt").write_text(str(i))
    assert sorted(p.name for p in target.iterdir()) == ["0.txt", "1.txt", "2.txt"]
    assert [p.name for p in target.parent.iterdir()] == ["samples"]  # no temporary left


def test_atomic_dir_removes_its_temporary_on_failure(tmp_path):
    target = tmp_path / "samples"
    with pytest.raises(RuntimeError), atomic_dir(target) as tmp:
        (tmp / "0.txt").write_text("half")
        raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["folder", "file"])
def test_atomic_dir_refuses_an_existing_path_and_leaves_it_alone(tmp_path, kind):
    target = tmp_path / "samples"
    if kind == "folder":
        target.mkdir()
        (target / "notes.txt").write_text("mine")
    else:
        target.write_text("mine")
    with pytest.raises(InvalidInputError, match=f"{target}: a {kind} of that name exists"), atomic_dir(target):
        raise AssertionError("the block must not run")
    assert (target / "notes.txt" if kind == "folder" else target).read_text() == "mine"
    assert [p.name for p in tmp_path.iterdir()] == ["samples"]


def test_atomic_dir_refuses_a_path_that_appeared_while_writing(tmp_path):
    target = tmp_path / "samples"
    with pytest.raises(InvalidInputError, match="exists"), atomic_dir(target) as tmp:
        (tmp / "0.txt").write_text("new")
        target.mkdir()
        (target / "theirs.txt").write_text("theirs")
    assert [p.name for p in target.iterdir()] == ["theirs.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["samples"]


def test_kill_9_while_filling_leaves_nothing_under_the_final_name(tmp_path):
    target = tmp_path / "samples"
    code = (
        "import sys, time\n"
        "from scigen.core.files import atomic_dir\n"
        f"with atomic_dir({str(target)!r}) as tmp:\n"
        "    for i in range(2):\n"
        "        (tmp / f'{i}.graphml').write_text('x')\n"
        "    print('ready', flush=True)\n"
        "    time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not target.exists()
    leftovers = [p.name for p in tmp_path.iterdir()]
    assert len(leftovers) == 1 and leftovers[0].startswith(".samples.") and leftovers[0].endswith(".tmpdir")


def test_atomic_dir_overwrite_replaces_only_a_folder_it_fully_rewrites(tmp_path):
    target = tmp_path / "out"
    with atomic_dir(target) as tmp:
        (tmp / "a.txt").write_text("1")
    with pytest.raises(RuntimeError), atomic_dir(target, overwrite=True) as tmp:
        (tmp / "a.txt").write_text("half")
        raise RuntimeError("interrupted")
    assert (target / "a.txt").read_text() == "1"  # a failed rewrite keeps the old folder
    with atomic_dir(target, overwrite=True) as tmp:  # a superset of the old entries replaces it
        (tmp / "a.txt").write_text("2")
        (tmp / "b.txt").write_text("3")
    assert (target / "a.txt").read_text() == "2" and (target / "b.txt").read_text() == "3"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # nothing left beside it
    (target / "mine.txt").write_text("user file")
    with pytest.raises(InvalidInputError, match="mine.txt"), atomic_dir(target, overwrite=True) as tmp:
        (tmp / "a.txt").write_text("new")
    assert sorted(p.name for p in target.iterdir()) == ["a.txt", "b.txt", "mine.txt"]
    assert (target / "a.txt").read_text() == "2" and sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidInputError, match="a file"), atomic_dir(tmp_path / "file", overwrite=True):
        pass
