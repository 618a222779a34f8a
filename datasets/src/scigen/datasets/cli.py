"""``scigen data ...``: list, describe, fetch, verify and locate catalog datasets.

Registered in the ``scigen.commands`` entry-point group as ``data``; the core CLI mounts it.
Errors print a message (no traceback) and exit with code 2; ``verify`` exits 1 when a file is
missing or does not match.
"""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from scigen.datasets import store
from scigen.datasets.errors import DatasetError
from scigen.datasets.registry import card as _card
from scigen.datasets.registry import list_datasets as _list_datasets

app = typer.Typer(name="data", help="Dataset catalog: list, info, fetch, verify, path.", no_args_is_help=True,
                  add_completion=False)

_out = Console(soft_wrap=True)
_err = Console(stderr=True, soft_wrap=True)


def _fail(exc: Exception) -> typer.Exit:
    _err.print(f"[bold red]error:[/] {escape(str(exc))}", markup=True, highlight=False)
    return typer.Exit(code=2)


def _size(v) -> str:
    if v == "unknown" or v is None:
        return "unknown"
    n = float(v)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(v)  # pragma: no cover


@app.command("list")
def list_cmd(domain: str = typer.Option(None, "--domain", "-d", help="Only this domain (e.g. timeseries).")) -> None:
    """List the datasets in the catalog."""
    try:
        cards = _list_datasets(domain)
    except (DatasetError, ValueError) as exc:
        raise _fail(exc) from None
    table = Table(title=f"scigen datasets ({len(cards)})")
    for col in ("name", "domain", "access", "files", "sha256"):
        table.add_column(col)
    for c in cards:
        if c.bundled is not None and not c.files:
            access, sha = f"bundled ({c.bundled.package})", "-"
        else:
            access = "manual" if c.manual else "direct"
            known = sum(f.sha256_known for f in c.files)
            sha = f"{known}/{len(c.files)} known"
        table.add_row(escape(c.name), c.domain, escape(access), str(len(c.files)), sha)
    _out.print(table)


@app.command("info")
def info_cmd(name: str = typer.Argument(..., help="Dataset name (case-insensitive).")) -> None:
    """Show a dataset's card: description, licence, citation, files and hashes."""
    try:
        c = _card(name)
    except DatasetError as exc:
        raise _fail(exc) from None
    p = lambda *a: _out.print(*a, markup=False, highlight=False)  # noqa: E731
    p(f"{c.name}  [{c.domain}]")
    p(c.description)
    p(f"homepage: {c.homepage}")
    for u in c.urls:
        p(f"url:      {u}")
    p(f"license:  {c.license}")
    p(f"citation: {c.citation}")
    p(f"loader:   planned - {c.status_note}" if c.planned else f"loader:   {c.loader}")
    if c.size_note:
        p(f"size:     {c.size_note}")
    if c.access_note:
        p(f"access:   {c.access_note}")
    if c.bundled is not None:
        p(f"bundled:  package {c.bundled.package} (install: {c.bundled.install}); helper {c.bundled.helper}")
    p(f"cache:    {store.cache_dir() / c.name}")
    if c.files:
        table = Table(title="files")
        for col in ("name", "access", "size", "sha256", "url"):
            table.add_column(col, overflow="fold")
        for f in c.files:
            table.add_row(escape(f.name + ("/" if f.directory else "")), f.access, _size(f.size_bytes), f.sha256,
                          escape(f.url))
        _out.print(table)
        for f in c.files:
            if not f.sha256_known:
                p(f"{f.name}: sha256 unknown - {f.sha256_reason}")
            if f.instructions:
                p(f"{f.name}: how to get it - {f.instructions}")
            if f.members:
                p(f"{f.name}: {len(f.members)} member hash(es) known ({f.members_provenance})")
    if c.notes:
        p(f"notes:    {c.notes}")


@app.command("fetch")
def fetch_cmd(name: str = typer.Argument(..., help="Dataset name."),
              force: bool = typer.Option(False, "--force", help="Re-download and re-extract."),
              offline: bool = typer.Option(False, "--offline", help="Never use the network.")) -> None:
    """Download a dataset into the cache (SCIGEN_DATA or the user cache dir) and verify it."""
    try:
        d = store.fetch(name, force=force, offline=offline or None, progress=True)
    except DatasetError as exc:
        raise _fail(exc) from None
    _out.print(str(d), markup=False, highlight=False)


@app.command("verify")
def verify_cmd(name: str = typer.Argument(..., help="Dataset name."),
               record: bool = typer.Option(False, "--record",
                                           help="Store observed hashes of files whose card hash is unknown."),
               as_json: bool = typer.Option(False, "--json", help="Print the report as JSON.")) -> None:
    """Check the cached files against the card's SHA-256 (unknown hashes are reported as unverified)."""
    try:
        rep = store.verify(name, record=record)
    except DatasetError as exc:
        raise _fail(exc) from None
    if as_json:
        _out.print(json.dumps({"dataset": rep.dataset, "directory": str(rep.directory), "passed": rep.passed,
                               "ok": rep.ok, "checks": [vars(ch) for ch in rep.checks]}, indent=2),
                   markup=False, highlight=False)
    else:
        table = Table(title=f"verify {rep.dataset}  ({rep.directory})")
        for col in ("file", "status", "expected", "observed", "note"):
            table.add_column(col, overflow="fold")
        colors = {"ok": "green", "unverified": "yellow", "mismatch": "red", "missing": "red"}
        for ch in rep.checks:
            exp = f"{ch.expected} ({ch.expected_from})" if ch.expected else "-"
            table.add_row(escape(ch.name), f"[{colors[ch.status]}]{ch.status.upper()}[/]", escape(exp), ch.observed or "-",
                          escape(ch.note))
        _out.print(table)
        summary = ", ".join(f"{rep.count(s)} {s}" for s in ("ok", "unverified", "mismatch", "missing") if rep.count(s))
        _out.print(f"summary: {summary or 'nothing to check'}", markup=False, highlight=False)
        if record and rep.record_path is not None:
            _out.print(f"recorded observed hashes in {rep.record_path}", markup=False, highlight=False)
    if not rep.ok:
        raise typer.Exit(code=1)


@app.command("path")
def path_cmd(name: str = typer.Argument(..., help="Dataset name.")) -> None:
    """Print the local directory of a dataset, or say how to get it (exit 2)."""
    try:
        d = store.path(name)
    except DatasetError as exc:
        raise _fail(exc) from None
    _out.print(str(d), markup=False, highlight=False)
