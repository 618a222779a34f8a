"""The local data cache: where datasets live, fetching with pooch, checksum verification.

Layout: ``cache_dir()/<NAME>/<file>`` (``NAME`` as spelled in the card). ``cache_dir()`` is
``$SCIGEN_DATA`` when set, else ``platformdirs.user_cache_dir("scigen")``. Archives marked
``"extract": true`` are unpacked into ``<NAME>/`` with :func:`safe_extract`; a marker file
``.<archive>.extracted`` records that. Hashes observed for files whose card says ``"unknown"`` are
kept in ``<NAME>/.scigen-hashes.json`` (the local record): later verifications compare against it
and report ``unverified`` (never ``ok``) until a maintainer copies a hash into the card.

Offline mode (``offline=True`` or ``SCIGEN_OFFLINE=1``) never touches the network: missing files
raise :class:`DataNotAvailableError` with the command and the directory to fill.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from scigen.datasets.archive import safe_extract
from scigen.datasets.bundled import package_dir
from scigen.datasets.errors import CacheDirError, ChecksumError, DataNotAvailableError
from scigen.datasets.registry import card
from scigen.datasets.schema import DatasetCard, FileEntry

__all__ = [
    "ENV_DATA",
    "ENV_OFFLINE",
    "RECORD_NAME",
    "cache_dir",
    "dataset_dir",
    "sha256_file",
    "fetch",
    "path",
    "verify",
    "FileCheck",
    "VerifyReport",
    "not_available_message",
]

ENV_DATA = "SCIGEN_DATA"
ENV_OFFLINE = "SCIGEN_OFFLINE"
RECORD_NAME = ".scigen-hashes.json"


def cache_dir() -> Path:
    """The cache root: ``$SCIGEN_DATA`` if set and non-empty, else ``user_cache_dir("scigen")``. Not created."""
    env = os.environ.get(ENV_DATA, "").strip()
    if env:
        root = Path(env).expanduser()
        if root.exists() and not root.is_dir():
            raise CacheDirError(f"{ENV_DATA}={env} is not a directory; point {ENV_DATA} at a folder (it is created "
                                "if missing) or unset it to use the user cache directory")
        return root
    import platformdirs

    return Path(platformdirs.user_cache_dir("scigen"))


def dataset_dir(name: str) -> Path:
    """``cache_dir() / <card name>`` (not created)."""
    return cache_dir() / card(name).name


def sha256_file(path: str | Path, chunk_size: int = 1 << 20) -> str:
    """Lowercase hex SHA-256 of a file, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk_size), b""):
            h.update(block)
    return h.hexdigest()


def _offline(offline: bool | None) -> bool:
    if offline is not None:
        return bool(offline)
    return os.environ.get(ENV_OFFLINE, "").strip().lower() in ("1", "true", "yes", "on")


def _atomic_write_json(target: Path, obj: dict) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=target.name, suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(obj, fh, indent=2, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read_record(d: Path) -> dict:
    p = d / RECORD_NAME
    if not p.is_file():
        return {}
    try:
        obj = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    files = obj.get("files", {}) if isinstance(obj, dict) else {}
    return files if isinstance(files, dict) else {}


def _write_record(c: DatasetCard, d: Path, observed: dict[str, tuple[str, int]]) -> Path:
    files = _read_record(d)
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    for fname, (sha, size) in observed.items():
        files[fname] = {"sha256": sha, "size_bytes": size, "recorded_at": now}
    p = d / RECORD_NAME
    _atomic_write_json(p, {"dataset": c.name, "files": files})
    return p


def _marker(d: Path, f: FileEntry) -> Path:
    return d / f".{f.name}.extracted"


def _present(d: Path, f: FileEntry) -> bool:
    if f.directory:
        return (d / f.name).is_dir() and any((d / f.name).iterdir())
    return (d / f.name).is_file() or (f.extract and _marker(d, f).is_file())


def not_available_message(c: DatasetCard, missing: list[FileEntry], reason: str) -> str:
    """The instructions shown when data is missing: the fetch command and what to place where."""
    d = cache_dir() / c.name
    lines = [f"dataset {c.name!r} is not available locally ({reason})."]
    direct = [f for f in missing if f.access == "direct"]
    manual = [f for f in missing if f.access == "manual"]
    if direct:
        lines += ["On a machine with internet access run:",
                  f"    scigen data fetch {c.name}",
                  f"then copy the folder it prints to {d} on this machine (set {ENV_DATA} to choose the "
                  f"cache root; it is now {cache_dir()}).",
                  f"Or download these file(s) yourself and place them in {d}:"]
        lines += [f"    {f.name}  <-  {f.url}" for f in direct]
    if manual:
        lines.append(f"These file(s) need a manual download; place them in {d}:")
        for f in manual:
            lines += [f"    {f.name}  <-  {f.url}", f"      how: {f.instructions}"]
    lines.append(f"Then check them with: scigen data verify {c.name}")
    return "\n".join(lines)


def _check_known(c: DatasetCard, f: FileEntry, target: Path) -> tuple[str, int]:
    sha = sha256_file(target)
    if f.sha256_known and sha != f.sha256:
        raise ChecksumError(
            f"{target}: sha256 {sha} does not match the card ({f.sha256}); delete the file or re-download "
            f"with `scigen data fetch {c.name} --force`")
    return sha, target.stat().st_size


def _download(c: DatasetCard, f: FileEntry, d: Path, progress: bool) -> None:
    import importlib.util

    import pooch

    progress = progress and importlib.util.find_spec("tqdm") is not None  # pooch needs tqdm for a bar
    known = f"sha256:{f.sha256}" if f.sha256_known else None
    try:
        pooch.retrieve(url=f.url, known_hash=known, fname=f.name, path=d, progressbar=progress)
    except ValueError as exc:
        if "hash" in str(exc).lower():
            raise ChecksumError(f"{f.url}: downloaded file failed verification: {exc}") from exc
        raise DataNotAvailableError(not_available_message(c, [f], f"download failed: {exc}")) from exc
    except OSError as exc:  # requests' errors are OSErrors: no network, DNS, HTTP errors
        raise DataNotAvailableError(not_available_message(c, [f], f"download failed: {exc}")) from exc


def _ensure_extracted(c: DatasetCard, f: FileEntry, d: Path, *, force: bool = False) -> None:
    marker = _marker(d, f)
    if marker.is_file() and not force:
        return
    archive = d / f.name
    sha = sha256_file(archive)
    members = safe_extract(archive, d)
    root = d.resolve()
    _atomic_write_json(marker, {"archive": f.name, "sha256": sha,
                                "members": sorted(Path(m).relative_to(root).as_posix() for m in members)})


def fetch(name: str, *, force: bool = False, offline: bool | None = None, progress: bool = False) -> Path:
    """Download (with pooch) every file of dataset ``name`` into ``dataset_dir(name)``; return that dir.

    Files already present are not downloaded again (``force=True`` re-downloads direct files and
    re-extracts archives). Known SHA-256s are verified (pooch checks the download; a cached file
    is re-hashed) and a mismatch raises :class:`ChecksumError`. For cards whose hash is
    ``"unknown"`` the computed SHA-256 is printed to stderr and kept in the local record.
    Offline (``offline=True`` or ``SCIGEN_OFFLINE=1``), a failed download, or a file that needs
    a manual download raise :class:`DataNotAvailableError` with instructions. Bundled datasets
    return their package's directory (or raise :class:`MissingPackageError`).
    """
    c = card(name)
    if c.bundled is not None and not c.files:
        return package_dir(c.bundled.import_name, c.bundled.install)
    d = cache_dir() / c.name
    off = _offline(offline)
    missing: list[FileEntry] = []
    observed: dict[str, tuple[str, int]] = {}
    for f in c.files:
        target = d / f.name
        if f.directory:
            if not _present(d, f):
                missing.append(f)
            continue
        if force and f.access == "direct" and not off and target.exists():
            target.unlink()
        if not target.is_file():
            if f.extract and _marker(d, f).is_file() and not force:
                continue  # extracted earlier and the archive was removed to save space
            if f.access == "manual" or off:
                missing.append(f)
                continue
            d.mkdir(parents=True, exist_ok=True)
            _download(c, f, d, progress)
        sha, size = _check_known(c, f, target)
        if not f.sha256_known:
            observed[f.name] = (sha, size)
            print(f"scigen.datasets: {c.name}/{f.name} sha256={sha} size={size} (the card says 'unknown'; "
                  f"recorded in {d / RECORD_NAME})", file=sys.stderr)
        if f.extract:
            _ensure_extracted(c, f, d, force=force)
    if observed:
        _write_record(c, d, observed)
    if missing:
        reason = "offline mode" if off and any(f.access == "direct" for f in missing) else "manual download needed"
        raise DataNotAvailableError(not_available_message(c, missing, reason))
    return d


def path(name: str) -> Path:
    """The local directory of dataset ``name``, without any network access.

    Raises :class:`DataNotAvailableError` with the exact ``scigen data fetch NAME`` command and the
    file(s) to place in which directory when something is missing. Archives placed by hand are
    extracted (safely) on first use. Bundled datasets return their package's directory.
    """
    c = card(name)
    if c.bundled is not None and not c.files:
        return package_dir(c.bundled.import_name, c.bundled.install)
    d = cache_dir() / c.name
    missing = [f for f in c.files if not _present(d, f)]
    if missing:
        raise DataNotAvailableError(not_available_message(c, missing, "not in the cache"))
    for f in c.files:
        if f.extract and not _marker(d, f).is_file():
            _check_known(c, f, d / f.name)
            _ensure_extracted(c, f, d)
    return d


@dataclass(frozen=True)
class FileCheck:
    """One line of a verification: ``status`` is ``ok``, ``mismatch``, ``missing`` or ``unverified``.

    ``unverified`` means the file is present but no trusted hash exists (the card says
    ``"unknown"``); it is never counted as passed. ``expected_from`` is ``"card"`` or ``"local
    record"`` (a hash this machine recorded earlier).
    """

    name: str
    status: str
    expected: str | None
    observed: str | None
    expected_from: str | None = None
    note: str = ""


@dataclass
class VerifyReport:
    """Result of :func:`verify`. ``passed``: every check is ``ok``; ``ok``: nothing missing or mismatched."""

    dataset: str
    directory: Path
    checks: list[FileCheck] = field(default_factory=list)
    record_path: Path | None = None

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(ch.status == "ok" for ch in self.checks)

    @property
    def ok(self) -> bool:
        return all(ch.status in ("ok", "unverified") for ch in self.checks)

    def count(self, status: str) -> int:
        return sum(ch.status == status for ch in self.checks)


def verify(name: str, *, record: bool = False) -> VerifyReport:
    """Hash every file of dataset ``name`` in the cache and compare with the card.

    Card hash known: ``ok`` or ``mismatch``. Card hash ``"unknown"``: ``unverified`` (with the
    observed hash), or ``mismatch`` if it differs from this machine's earlier record. Absent:
    ``missing`` (an archive already extracted and deleted is not missing). Extracted archive
    members with known hashes are checked too. ``record=True`` stores the observed hashes of the
    unknown-hash files in the local record (``<dir>/.scigen-hashes.json``).
    """
    c = card(name)
    if c.bundled is not None and not c.files:
        d = package_dir(c.bundled.import_name, c.bundled.install)
        return VerifyReport(c.name, d, [FileCheck(c.bundled.package, "unverified", None, None,
                                                  note="bundled in a wheel; pip verifies the wheel's RECORD")])
    d = cache_dir() / c.name
    rec = _read_record(d)
    report = VerifyReport(c.name, d)
    observed: dict[str, tuple[str, int]] = {}
    for f in c.files:
        target = d / f.name
        if f.directory:
            present = _present(d, f)
            report.checks.append(FileCheck(f.name + "/", "unverified" if present else "missing", None, None,
                                           note="folder filled by hand; its files are not hashed" if present else ""))
            continue
        if not target.is_file():
            if f.extract and _marker(d, f).is_file():
                report.checks.append(FileCheck(f.name, "unverified", f.sha256 if f.sha256_known else None, None,
                                               note="archive removed after extraction; members checked below"))
            else:
                report.checks.append(FileCheck(f.name, "missing", f.sha256 if f.sha256_known else None, None,
                                               "card" if f.sha256_known else None))
        else:
            sha = sha256_file(target)
            if f.sha256_known:
                status = "ok" if sha == f.sha256 else "mismatch"
                report.checks.append(FileCheck(f.name, status, f.sha256, sha, "card"))
            else:
                prev = rec.get(f.name, {}).get("sha256") if isinstance(rec.get(f.name), dict) else None
                observed[f.name] = (sha, target.stat().st_size)
                if prev is not None and prev != sha:
                    report.checks.append(FileCheck(f.name, "mismatch", prev, sha, "local record",
                                                   note="changed since it was recorded on this machine"))
                else:
                    note = "card sha256 is 'unknown'" + ("; matches the local record" if prev else "")
                    report.checks.append(FileCheck(f.name, "unverified", None, sha, None, note=note))
        if f.extract and _marker(d, f).is_file():
            for m in f.members:
                mp = d / m.name
                if not mp.is_file():
                    report.checks.append(FileCheck(m.name, "missing", m.sha256, None, "card"))
                    continue
                msha = sha256_file(mp)
                report.checks.append(FileCheck(m.name, "ok" if msha == m.sha256 else "mismatch", m.sha256, msha,
                                               "card", note=f"member of {f.name}"))
    if record and observed:
        report.record_path = _write_record(c, d, observed)
    return report
