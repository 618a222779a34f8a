"""``scigen demo``: run every installed system's demo and summarise them in one table."""

from __future__ import annotations

import time
import traceback
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from scigen.core.cli.errors import debug_enabled
from scigen.core.errors import UnknownNameError
from scigen.core.system.registry import discover


def run_demos(*, domain: str | None, quick: bool, out: Path, console: Console, threads: int | None = 1) -> int:
    """Run the demos; return the exit status (0 when all succeeded, 1 otherwise)."""
    systems, problems = discover()
    for p in problems:
        console.print(f"[yellow]warning:[/] {p}")
    if domain is not None:
        if domain not in systems:
            valid = ", ".join(sorted(systems)) or "none installed"
            raise UnknownNameError(f"unknown domain {domain!r}; installed domains: {valid}")
        systems = {domain: systems[domain]}
    if not systems:
        console.print("No scigen system is registered yet: nothing to demo.")
        return 0
    table = Table(title="scigen demo")
    for col in ("system", "status", "seconds", "headline metrics", "report"):
        table.add_column(col, overflow="fold")  # wrap, never truncate (piped output is 80 columns wide)
    failed = 0
    for dom in sorted(systems):
        for name, spec in sorted(systems[dom].items()):
            target = out / f"{dom}-{name}"
            console.print(f"[bold]{dom}/{name}[/]: running demo{' (quick)' if quick else ''} ...")
            t0 = time.perf_counter()
            try:
                result = spec.load().demo(target, quick=quick, threads=threads)
            except Exception as exc:  # one failing demo must not hide the others
                failed += 1
                status, line = demo_failure(f"{dom}/{name}", exc)
                console.print(line, markup=False, highlight=False)
                if debug_enabled():
                    console.print(traceback.format_exc(), markup=False, highlight=False)
                table.add_row(f"{dom}/{name}", f"[red]{status}", f"{time.perf_counter() - t0:.1f}",
                              escape(str(exc)[:200]), "")
                continue
            shown = ", ".join(f"{k}={v:.4g}" if isinstance(v, (int, float)) else f"{k}={v}"
                              for k, v in list(result.metrics.items())[:4])
            table.add_row(f"{dom}/{name}", "[green]ok", f"{result.seconds:.1f}", escape(shown), escape(str(target)))
    console.print(table)
    return 1 if failed else 0


def demo_failure(key: str, exc: BaseException) -> tuple[str, str]:
    """The table status and the one line printed for a demo that raised ``exc``.

    A missing optional package or its bundled data (an ``ImportError``, e.g. the QM9 wheel) is
    ``unavailable`` and the line is the error's own message, which names the install command; any
    other error is ``failed``, with a pointer to ``scigen --debug demo`` for the traceback."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, ImportError):
        return "unavailable", f"{key} cannot run here: {text}"
    hint = "" if debug_enabled() else " (scigen --debug demo shows the traceback)"
    return "failed", f"{key} failed: {type(exc).__name__}: {text}{hint}"
