"""Start-up time of the ``scigen`` command: ``scigen list`` and ``--help`` versus a bare interpreter.

Issue 14 asks for ``scigen list`` and every ``--help`` under 0.5 s: the CLI must not import torch or a
domain package to list systems. This runs each command ``--repeat`` times in fresh processes and reports
the median wall time and its ratio to ``python -c pass`` (the named baseline, measured in the same run),
plus whether torch was imported (``-X importtime``). Writes ``results/cli_startup.{json,md}``.

    python benchmarks/core/bench_cli_startup.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = {
    "python -c pass (baseline)": [sys.executable, "-c", "pass"],
    "scigen list": [sys.executable, "-m", "scigen.core.cli", "list"],
    "scigen --help": [sys.executable, "-m", "scigen.core.cli", "--help"],
    "scigen placement --help": [sys.executable, "-m", "scigen.core.cli", "placement", "--help"],
    "scigen molecules unigem --help": [sys.executable, "-m", "scigen.core.cli", "molecules", "unigem", "--help"],
    "scigen data list": [sys.executable, "-m", "scigen.core.cli", "data", "list"],
}


def _time(cmd: list[str], repeat: int) -> tuple[float, bool]:
    walls = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False)
        walls.append(time.perf_counter() - t0)
    probe = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], capture_output=True, text=True, check=False)
    torch_loaded = any(line.split("|")[-1].strip() == "torch" for line in probe.stderr.splitlines())
    return statistics.median(walls), torch_loaded


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    a = ap.parse_args()
    rows = {name: _time(cmd, a.repeat) for name, cmd in COMMANDS.items()}
    base = rows["python -c pass (baseline)"][0]
    a.out.mkdir(parents=True, exist_ok=True)
    record = {name: {"median_s": w, "ratio_to_bare_python": w / base, "imports_torch": t} for name, (w, t) in rows.items()}
    (a.out / "cli_startup.json").write_text(json.dumps(record, indent=2) + "\n")
    lines = ["| command | median wall (s) | × bare python | imports torch | under 0.5 s |", "|---|---|---|---|---|"]
    for name, r in record.items():
        lines.append(f"| `{name}` | {r['median_s']:.3f} | {r['ratio_to_bare_python']:.1f} | {r['imports_torch']} | "
                     f"{'yes' if r['median_s'] < 0.5 else '**no**'} |")
    text = "\n".join(lines) + "\n"
    (a.out / "cli_startup.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
