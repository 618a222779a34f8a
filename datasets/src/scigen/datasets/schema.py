"""The dataset-card schema and its validator.

A card is one JSON file under ``scigen/datasets/cards/``. The validator checks every field and
raises :class:`~scigen.datasets.errors.CardError` naming the card file and the field path
(e.g. ``files[0].sha256``) with what was expected. Unknown keys are errors, so a typo never
silently drops information.

Card fields (``*`` = required)::

    schema_version*  1
    name*            catalog name, e.g. "ETTh1" (the card file is <name>.json)
    domain*          one of DOMAINS
    description*     one paragraph
    homepage*        the page a human visits for the dataset
    urls*            list of reference URLs (paper, repository, mirrors); may be empty
    license*         licence as stated by the distributor (or an explicit "not stated ..." sentence)
    citation*        the reference to cite
    loader*          dotted path "package.module:function" of the domain loader; a string only,
                     never imported by scigen.datasets. Required unless status is "planned", and
                     forbidden then (a planned card names no function that does not exist)
    status           "available" (default: the loader exists) or "planned" (no loader yet)
    status_note      required with status "planned": what is missing and what to use meanwhile
    files*           list of file entries (empty only for bundled cards)
    size_bytes       total download size in bytes, or "unknown"
    size_note        a human-readable size, e.g. "~1 TB (all modalities)"
    access_note      how access works (accounts, rate limits, bucket tools)
    notes            anything else a user must know (preprocessing variants, versions)
    bundled          {"package", "import_name", "install", "helper"} for data shipped in a wheel

File entry fields::

    name*            file name in the dataset's cache directory (no directories, no "..")
    url*             download URL (access "direct") or the page to download from (access "manual")
    sha256*          64 lowercase hex digits, or the literal "unknown"
    sha256_reason    required when sha256 is "unknown": why, and how to record it
    size_bytes*      integer >= 0, or "unknown"
    access           "direct" (default: fetched with pooch) or "manual" (account / browser / CLI)
    instructions     required for "manual": the exact steps
    directory        true when the entry is a folder the user fills by hand (bucket sync, many files);
                     needs access "manual" and sha256 "unknown"; present when it is a non-empty folder
    extract          true for an archive to unpack (zip, tar, tar.gz/bz2/xz) into the cache dir
    members          list of {"name", "sha256", "size_bytes"} for extracted files whose hashes
                     are known even though the archive's is not
    members_provenance  required with members: where those member hashes came from
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from scigen.datasets.errors import CardError

__all__ = [
    "SCHEMA_VERSION",
    "STATUSES",
    "DOMAINS",
    "UNKNOWN",
    "FileEntry",
    "MemberEntry",
    "BundledInfo",
    "DatasetCard",
    "validate_card",
]

SCHEMA_VERSION = 1
UNKNOWN = "unknown"
DOMAINS = ("timeseries", "molecules", "graphs", "weather", "placement", "singlecell", "wireless")

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_LOADER = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
_URL = re.compile(r"^(https?|ftp)://[^\s]+$")

_CARD_REQUIRED = ("schema_version", "name", "domain", "description", "homepage", "urls", "license",
                  "citation", "files")
_CARD_OPTIONAL = ("loader", "status", "status_note", "size_bytes", "size_note", "access_note", "notes", "bundled")
STATUSES = ("available", "planned")
_FILE_REQUIRED = ("name", "url", "sha256", "size_bytes")
_FILE_OPTIONAL = ("sha256_reason", "access", "instructions", "directory", "extract", "members",
                  "members_provenance")
_MEMBER_REQUIRED = ("name", "sha256", "size_bytes")
_BUNDLED_REQUIRED = ("package", "import_name", "install", "helper")


@dataclass(frozen=True)
class MemberEntry:
    """A file inside an archive whose SHA-256 is known (path relative to the cache directory)."""

    name: str
    sha256: str
    size_bytes: int | str


@dataclass(frozen=True)
class FileEntry:
    """One downloadable file of a dataset."""

    name: str
    url: str
    sha256: str
    size_bytes: int | str
    sha256_reason: str | None = None
    access: str = "direct"
    instructions: str | None = None
    extract: bool = False
    directory: bool = False
    members: tuple[MemberEntry, ...] = ()
    members_provenance: str | None = None

    @property
    def sha256_known(self) -> bool:
        return self.sha256 != UNKNOWN


@dataclass(frozen=True)
class BundledInfo:
    """Data shipped inside a PyPI wheel rather than downloaded."""

    package: str
    import_name: str
    install: str
    helper: str


@dataclass(frozen=True)
class DatasetCard:
    """A validated dataset card. ``source`` is the JSON file it was read from."""

    name: str
    domain: str
    description: str
    homepage: str
    urls: tuple[str, ...]
    license: str
    citation: str
    loader: str | None  # None only when status == "planned"
    files: tuple[FileEntry, ...]
    size_bytes: int | str = UNKNOWN
    size_note: str | None = None
    access_note: str | None = None
    notes: str | None = None
    bundled: BundledInfo | None = None
    status: str = "available"
    status_note: str | None = None
    source: str = "<memory>"
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def planned(self) -> bool:
        """True when no loader exists yet (``status: "planned"``); :attr:`status_note` says why."""
        return self.status == "planned"

    @property
    def manual(self) -> bool:
        """True when at least one file needs a manual download (account, browser, bucket tool)."""
        return any(f.access == "manual" for f in self.files)


class _Checker:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, msg: str) -> CardError:
        return CardError(f"{self.source}: field '{where}': {msg}")

    def keys(self, obj: Any, where: str, required: tuple, optional: tuple) -> None:
        label = where or "card"
        if not isinstance(obj, dict):
            raise self.fail(label, f"expected a JSON object, got {type(obj).__name__}")
        for k in required:
            if k not in obj:
                raise self.fail(f"{where}.{k}" if where else k, "required field is missing")
        unknown = sorted(set(obj) - set(required) - set(optional))
        if unknown:
            raise self.fail(f"{where}.{unknown[0]}" if where else unknown[0],
                            f"unknown field (allowed: {', '.join(required + optional)})")

    def text(self, obj: dict, key: str, where: str, *, required: bool = True) -> str | None:
        path = f"{where}.{key}" if where else key
        if key not in obj:
            if required:
                raise self.fail(path, "required field is missing")
            return None
        value = obj[key]
        if not isinstance(value, str) or not value.strip():
            raise self.fail(path, f"expected a non-empty string, got {value!r}")
        return value

    def url(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not _URL.match(value):
            raise self.fail(path, f"expected an http(s)/ftp URL, got {value!r}")
        return value

    def sha(self, value: Any, path: str) -> str:
        if value == UNKNOWN:
            return UNKNOWN
        if not isinstance(value, str) or not _HEX64.match(value):
            raise self.fail(path, f"expected 64 lowercase hex digits or the literal 'unknown', got {value!r}")
        return value

    def size(self, value: Any, path: str) -> int | str:
        if value == UNKNOWN:
            return UNKNOWN
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(path, f"expected an integer >= 0 or 'unknown', got {value!r}")
        return value

    def relpath(self, value: Any, path: str, *, allow_dirs: bool) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(path, f"expected a relative file name, got {value!r}")
        p = PurePosixPath(value)
        bad = (value.startswith(("/", "\\")) or "\\" in value or ":" in value
               or any(part in ("..", ".", "") for part in value.split("/")))
        if bad or (not allow_dirs and len(p.parts) != 1) or not _NAME.match(p.parts[0]):
            kind = "a relative path without '..'" if allow_dirs else "a plain file name (no directories)"
            raise self.fail(path, f"expected {kind}, got {value!r}")
        return value


def _members(chk: _Checker, value: Any, where: str) -> tuple[MemberEntry, ...]:
    if not isinstance(value, list) or not value:
        raise chk.fail(where, f"expected a non-empty list, got {value!r}")
    out = []
    for i, m in enumerate(value):
        w = f"{where}[{i}]"
        chk.keys(m, w, _MEMBER_REQUIRED, ())
        sha = chk.sha(m["sha256"], f"{w}.sha256")
        if sha == UNKNOWN:
            raise chk.fail(f"{w}.sha256", "member entries exist to record known hashes; 'unknown' not allowed")
        out.append(MemberEntry(chk.relpath(m["name"], f"{w}.name", allow_dirs=True), sha,
                               chk.size(m["size_bytes"], f"{w}.size_bytes")))
    return tuple(out)


def _file(chk: _Checker, obj: Any, where: str) -> FileEntry:
    chk.keys(obj, where, _FILE_REQUIRED, _FILE_OPTIONAL)
    name = chk.relpath(obj["name"], f"{where}.name", allow_dirs=False)
    url = chk.url(obj["url"], f"{where}.url")
    sha = chk.sha(obj["sha256"], f"{where}.sha256")
    reason = chk.text(obj, "sha256_reason", where, required=False)
    if sha == UNKNOWN and reason is None:
        raise chk.fail(f"{where}.sha256_reason", "required when sha256 is 'unknown' (say why, never guess)")
    if sha != UNKNOWN and reason is not None:
        raise chk.fail(f"{where}.sha256_reason", "only allowed when sha256 is 'unknown'")
    access = obj.get("access", "direct")
    if access not in ("direct", "manual"):
        raise chk.fail(f"{where}.access", f"expected 'direct' or 'manual', got {access!r}")
    instructions = chk.text(obj, "instructions", where, required=access == "manual")
    extract = obj.get("extract", False)
    if not isinstance(extract, bool):
        raise chk.fail(f"{where}.extract", f"expected true or false, got {extract!r}")
    directory = obj.get("directory", False)
    if not isinstance(directory, bool):
        raise chk.fail(f"{where}.directory", f"expected true or false, got {directory!r}")
    if directory and (access != "manual" or sha != UNKNOWN or extract):
        raise chk.fail(f"{where}.directory", "a folder entry needs access 'manual', sha256 'unknown' and no 'extract'")
    members: tuple[MemberEntry, ...] = ()
    provenance = None
    if "members" in obj:
        if not extract:
            raise chk.fail(f"{where}.members", "only allowed for archives ('extract': true)")
        members = _members(chk, obj["members"], f"{where}.members")
        provenance = chk.text(obj, "members_provenance", where, required=True)
    elif "members_provenance" in obj:
        raise chk.fail(f"{where}.members_provenance", "only allowed together with 'members'")
    return FileEntry(name=name, url=url, sha256=sha, size_bytes=chk.size(obj["size_bytes"], f"{where}.size_bytes"),
                     sha256_reason=reason, access=access, instructions=instructions, extract=extract,
                     directory=directory, members=members, members_provenance=provenance)


def _loader(chk: _Checker, obj: dict) -> tuple[str | None, str, str | None]:
    """``(loader, status, status_note)``: a planned card has a note and no loader; any other has a loader."""
    status = obj.get("status", "available")
    if status not in STATUSES:
        raise chk.fail("status", f"expected one of {', '.join(STATUSES)}, got {status!r}")
    if status == "planned":
        if "loader" in obj:
            raise chk.fail("loader", "a planned card must not name a loader (none exists yet); remove it, or set "
                                     "status 'available' once the loader is written")
        return None, status, chk.text(obj, "status_note", "")
    if "status_note" in obj:
        raise chk.fail("status_note", "only allowed with status 'planned'")
    if "loader" not in obj:
        raise chk.fail("loader", "required field is missing (or mark the card status 'planned' with a status_note)")
    loader = chk.text(obj, "loader", "")
    if not _LOADER.match(loader):
        raise chk.fail("loader", f"expected a dotted path 'package.module:function', got {loader!r}")
    return loader, status, None


def validate_card(obj: Any, source: str | Path = "<memory>") -> DatasetCard:
    """Validate a parsed card and return a :class:`DatasetCard`.

    Raises :class:`CardError` whose message starts with ``source`` and names the field, e.g.
    ``ETTh1.json: field 'files[0].sha256': expected 64 lowercase hex digits or the literal
    'unknown', got 'abc'``.
    """
    chk = _Checker(Path(source).name if isinstance(source, Path) else str(source))
    chk.keys(obj, "", _CARD_REQUIRED, _CARD_OPTIONAL)
    if obj["schema_version"] != SCHEMA_VERSION:
        raise chk.fail("schema_version", f"expected {SCHEMA_VERSION}, got {obj['schema_version']!r}")
    name = chk.text(obj, "name", "")
    if not _NAME.match(name):
        raise chk.fail("name", f"expected letters, digits and _.+- only, got {name!r}")
    if isinstance(source, Path) and source.stem.lower() != name.lower():
        raise chk.fail("name", f"card file must be named {name}.json, found {source.name}")
    domain = chk.text(obj, "domain", "")
    if domain not in DOMAINS:
        raise chk.fail("domain", f"expected one of {', '.join(DOMAINS)}, got {domain!r}")
    loader, status, status_note = _loader(chk, obj)
    urls = obj["urls"]
    if not isinstance(urls, list):
        raise chk.fail("urls", f"expected a list of URLs, got {urls!r}")
    urls_t = tuple(chk.url(u, f"urls[{i}]") for i, u in enumerate(urls))
    files = obj["files"]
    if not isinstance(files, list):
        raise chk.fail("files", f"expected a list of file entries, got {files!r}")
    files_t = tuple(_file(chk, f, f"files[{i}]") for i, f in enumerate(files))
    names = [f.name for f in files_t]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise chk.fail("files", f"duplicate file name {dup[0]!r}")
    bundled = None
    if "bundled" in obj:
        b = obj["bundled"]
        chk.keys(b, "bundled", _BUNDLED_REQUIRED, ())
        bundled = BundledInfo(*(chk.text(b, k, "bundled") for k in _BUNDLED_REQUIRED))
        if not _LOADER.match(bundled.helper):
            raise chk.fail("bundled.helper", f"expected 'package.module:function', got {bundled.helper!r}")
    if not files_t and bundled is None:
        raise chk.fail("files", "must list at least one file (only bundled cards may have none)")
    return DatasetCard(
        name=name, domain=domain, description=chk.text(obj, "description", ""),
        homepage=chk.url(obj["homepage"], "homepage"), urls=urls_t,
        license=chk.text(obj, "license", ""), citation=chk.text(obj, "citation", ""), loader=loader,
        files=files_t, size_bytes=chk.size(obj.get("size_bytes", UNKNOWN), "size_bytes"),
        size_note=chk.text(obj, "size_note", "", required=False),
        access_note=chk.text(obj, "access_note", "", required=False),
        notes=chk.text(obj, "notes", "", required=False), bundled=bundled, status=status,
        status_note=status_note, source=str(source), raw=obj,
    )
