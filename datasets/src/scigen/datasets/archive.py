"""Safe extraction of zip and tar archives (no path traversal).

:func:`safe_extract` checks every member *before* writing it and refuses, naming the member:

* absolute paths (``/etc/x``, ``\\x``, ``C:x``) and any ``..`` component;
* symbolic or hard links whose target is absolute or resolves outside the destination
  (zip archives: every symlink is refused — Python's zipfile would write it as a plain file);
* character/block devices and FIFOs;
* a member whose parent directory, after links already extracted, resolves outside the destination.

Tar members are additionally extracted with the standard library's ``"data"`` filter when the
running Python has it (3.11.4+/3.12+), which also strips setuid bits and unsafe modes.
"""

from __future__ import annotations

import os
import stat
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

from scigen.datasets.errors import ArchiveError, UnsafeArchiveError

__all__ = ["safe_extract"]


def _check_name(archive: Path, name: str) -> None:
    norm = name.replace("\\", "/")
    if norm.startswith("/") or (len(norm) > 1 and norm[1] == ":"):
        raise UnsafeArchiveError(f"refusing to extract {archive}: member {name!r} has an absolute path")
    if ".." in PurePosixPath(norm).parts:
        raise UnsafeArchiveError(f"refusing to extract {archive}: member {name!r} contains a '..' component")


def _inside(root: Path, target: Path) -> bool:
    try:
        target.relative_to(root)
        return True
    except ValueError:
        return False


def _check_parent(archive: Path, root: Path, name: str) -> None:
    parent = Path(os.path.realpath(root / PurePosixPath(name.replace("\\", "/")).parent))
    if not _inside(root, parent):
        raise UnsafeArchiveError(
            f"refusing to extract {archive}: member {name!r} would be written outside {root} through a link")


def _link_target_escapes(member_name: str, target: str, *, relative_to_member: bool) -> bool:
    t = target.replace("\\", "/")
    if t.startswith("/") or (len(t) > 1 and t[1] == ":"):
        return True
    base = PurePosixPath(member_name.replace("\\", "/")).parent if relative_to_member else PurePosixPath("")
    parts: list[str] = []
    for part in (base / t).parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return True
            parts.pop()
        else:
            parts.append(part)
    return False


def _extract_tar(archive: Path, root: Path) -> list[Path]:
    out = []
    use_filter = hasattr(tarfile, "data_filter")
    with tarfile.open(archive, "r:*") as tar:
        members = tar.getmembers()
        for m in members:
            _check_name(archive, m.name)
            if m.ischr() or m.isblk() or m.isfifo() or m.isdev():
                raise UnsafeArchiveError(f"refusing to extract {archive}: member {m.name!r} is a device or FIFO")
            if m.issym() and _link_target_escapes(m.name, m.linkname, relative_to_member=True):
                raise UnsafeArchiveError(
                    f"refusing to extract {archive}: member {m.name!r} is a symlink to {m.linkname!r}, "
                    "which points outside the destination")
            if m.islnk() and _link_target_escapes(m.name, m.linkname, relative_to_member=False):
                raise UnsafeArchiveError(
                    f"refusing to extract {archive}: member {m.name!r} is a hard link to {m.linkname!r}, "
                    "which points outside the destination")
            if not (m.isfile() or m.isdir() or m.issym() or m.islnk()):
                raise UnsafeArchiveError(f"refusing to extract {archive}: member {m.name!r} has an unsupported type")
        for m in members:
            _check_parent(archive, root, m.name)
            if m.issym() or m.islnk():
                base = (root / m.name).parent if m.issym() else root
                if not _inside(root, Path(os.path.realpath(base / m.linkname))):
                    raise UnsafeArchiveError(
                        f"refusing to extract {archive}: member {m.name!r} is a link to {m.linkname!r}, which "
                        "resolves outside the destination through links extracted before it")
            if use_filter:
                try:
                    tar.extract(m, root, filter="data")
                except tarfile.FilterError as exc:
                    raise UnsafeArchiveError(f"refusing to extract {archive}: member {m.name!r}: {exc}") from exc
            else:  # pragma: no cover - Python without extraction filters
                tar.extract(m, root)
            out.append(root / m.name)
    return out


def _extract_zip(archive: Path, root: Path) -> list[Path]:
    out = []
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        for info in infos:
            _check_name(archive, info.filename)
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise UnsafeArchiveError(
                    f"refusing to extract {archive}: member {info.filename!r} is a symbolic link "
                    "(links in zip archives are not supported)")
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode):
                raise UnsafeArchiveError(
                    f"refusing to extract {archive}: member {info.filename!r} is a device or FIFO")
        for info in infos:
            _check_parent(archive, root, info.filename)
            out.append(Path(zf.extract(info, root)))
    return out


def safe_extract(archive: str | Path, dest: str | Path) -> list[Path]:
    """Extract a zip or tar (``.tar``, ``.tar.gz``, ``.tgz``, ``.tar.bz2``, ``.tar.xz``) into ``dest``.

    Names, member types and link targets of *all* members are checked before the first write; on
    the first unsafe member an :class:`UnsafeArchiveError` naming it is raised and nothing is
    extracted. Each member's parent directory is re-checked with ``realpath`` just before it is
    written (this catches chains of links that only escape once resolved). Returns the paths of
    the extracted members. ``dest`` is created if needed.
    """
    archive = Path(archive)
    if not archive.is_file():
        raise FileNotFoundError(f"archive: {archive} does not exist or is not a file")
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    root = Path(os.path.realpath(dest))
    try:
        if zipfile.is_zipfile(archive):
            return _extract_zip(archive, root)
        if tarfile.is_tarfile(archive):
            return _extract_tar(archive, root)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError) as exc:
        raise ArchiveError(f"archive: {archive} is damaged or truncated ({exc}); delete it and fetch it again "
                           "(scigen data fetch NAME --force)") from None
    raise ArchiveError(f"archive: {archive} is neither a zip nor a tar archive (expected .zip, .tar, "
                       ".tar.gz/.bz2/.xz); delete it and fetch it again (scigen data fetch NAME --force)")
