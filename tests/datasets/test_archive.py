"""safe_extract refuses path traversal, escaping links and devices, and extracts safe archives exactly."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from scigen.datasets import UnsafeArchiveError, safe_extract
from scigen.datasets.errors import ArchiveError


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return path


def _file(name: str) -> tarfile.TarInfo:
    return tarfile.TarInfo(name)


def _link(name: str, target: str, kind=tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


def _zip(path: Path, entries: list[tuple[str, bytes, int | None]]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name)
            if mode is not None:
                info.external_attr = mode << 16
            zf.writestr(info, data)
    return path


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


@pytest.fixture
def box(tmp_path):
    """(archive dir, destination, sentinel dir beside the destination that must stay empty)."""
    (tmp_path / "arch").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    return tmp_path / "arch", tmp_path / "dest" / "inner", outside


def test_safe_tar_and_zip_extract_their_exact_contents(box):
    arch, dest, _ = box
    payload = {"DS/DS_A.txt": b"1, 2\n2, 1\n", "DS/README.txt": b"readme"}
    t = _tar(arch / "ok.tar.gz", [(_file(n), d) for n, d in payload.items()] + [(_link("DS/alias", "DS_A.txt"), None)])
    out = safe_extract(t, dest)
    assert {p.relative_to(dest.resolve()).as_posix() for p in out} == {*payload, "DS/alias"}
    for n, d in payload.items():
        assert (dest / n).read_bytes() == d
    assert (dest / "DS" / "alias").is_symlink() and (dest / "DS" / "alias").read_bytes() == payload["DS/DS_A.txt"]
    z = _zip(arch / "ok.zip", [(n, d, None) for n, d in payload.items()])
    zdest = dest.parent / "z"
    safe_extract(z, zdest)
    assert {n: (zdest / n).read_bytes() for n in payload} == payload


@pytest.mark.parametrize(
    ("members", "bad", "reason"),
    [
        ([(_file("ok.txt"), b"x"), (_file("../escape.txt"), b"x")], "../escape.txt", "'..' component"),
        ([(_file("a/../../escape.txt"), b"x")], "a/../../escape.txt", "'..' component"),
        ([(_file("/tmp/abs.txt"), b"x")], "/tmp/abs.txt", "absolute path"),
        ([(_link("link", "../outside"), None)], "link", "points outside"),
        ([(_link("d/link", "../../outside"), None)], "d/link", "points outside"),
        ([(_link("link", "/etc/passwd"), None)], "link", "points outside"),
        ([(_link("hard", "../outside/x", tarfile.LNKTYPE), None)], "hard", "hard link"),
        ([(_link("dev", "", tarfile.CHRTYPE), None)], "dev", "device or FIFO"),
        ([(_link("fifo", "", tarfile.FIFOTYPE), None)], "fifo", "device or FIFO"),
    ],
)
def test_unsafe_tar_members_are_refused_before_anything_is_written(box, members, bad, reason):
    arch, dest, outside = box
    t = _tar(arch / "bad.tar", members, mode="w")
    with pytest.raises(UnsafeArchiveError) as ei:
        safe_extract(t, dest)
    msg = str(ei.value)
    assert repr(bad) in msg and reason in msg and str(t) in msg
    assert _tree(dest) == set()  # nothing extracted, not even the safe first member
    assert _tree(outside) == set() and not (dest.parent.parent / "escape.txt").exists()


def test_link_chain_that_only_escapes_once_resolved_is_refused(box):
    # d/s2 -> ".." is lexically "." (inside) and s1 -> "d/s2/.." is lexically "d" (inside), but
    # resolved, s1 is the parent of the destination: the link (or s1/evil.txt) must be refused.
    arch, dest, outside = box
    d = tarfile.TarInfo("d")
    d.type = tarfile.DIRTYPE
    t = _tar(arch / "chain.tar", [(d, None), (_link("d/s2", ".."), None), (_link("s1", "d/s2/.."), None),
                                  (_file("s1/evil.txt"), b"x")], mode="w")
    with pytest.raises(UnsafeArchiveError, match=r"member 's1"):
        safe_extract(t, dest)
    assert not (dest.parent / "evil.txt").exists()


@pytest.mark.parametrize(
    ("entries", "bad", "reason"),
    [
        ([("ok.txt", b"x", None), ("../escape.txt", b"x", None)], "../escape.txt", "'..' component"),
        ([("/abs.txt", b"x", None)], "/abs.txt", "absolute path"),
        ([("C:/win.txt", b"x", None)], "C:/win.txt", "absolute path"),
        ([("link", b"../../outside", stat.S_IFLNK | 0o777)], "link", "symbolic link"),
    ],
)
def test_unsafe_zip_members_are_refused(box, entries, bad, reason):
    arch, dest, outside = box
    z = _zip(arch / "bad.zip", entries)
    with pytest.raises(UnsafeArchiveError) as ei:
        safe_extract(z, dest)
    assert repr(bad) in str(ei.value) and reason in str(ei.value)
    assert _tree(dest) == set() and _tree(outside) == set()


def test_non_archives_and_missing_files_are_rejected(tmp_path):
    p = tmp_path / "plain.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(ArchiveError, match="neither a zip nor a tar"):
        safe_extract(p, tmp_path / "d")
    with pytest.raises(FileNotFoundError, match="archive"):
        safe_extract(tmp_path / "nope.zip", tmp_path / "d")
