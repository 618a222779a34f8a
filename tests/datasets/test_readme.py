"""The datasets README's main example runs as written, offline, and prints what the shipped cards say."""

from __future__ import annotations

import ast
import contextlib
import io
import json
from pathlib import Path

CARDS = Path(__file__).resolve().parents[2] / "datasets" / "src" / "scigen" / "datasets" / "cards"


def test_readme_example_runs_offline(readme_example, data_home, monkeypatch):
    monkeypatch.setenv("SCIGEN_OFFLINE", "1")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(readme_example("datasets", "## Example"), "datasets/README.md", "exec"), {"__name__": "__readme__"})  # noqa: S102
    lines = out.getvalue().splitlines()
    cards = [json.loads(p.read_text()) for p in sorted(CARDS.glob("*.json"))]  # the JSON itself, not the registry
    graphs = {c["name"] for c in cards if c["domain"] == "graphs"}
    assert set(ast.literal_eval(lines[0])) == graphs and len(graphs) == 10
    etth1 = json.loads((CARDS / "ETTh1.json").read_text())["files"][0]
    assert lines[1] == f"{etth1['url']} {etth1['sha256']}" and etth1["url"].endswith("ETTh1.csv")
    message = "\n".join(lines[2:])  # the empty cache: the instructions, naming the command and the directory
    assert "scigen data fetch MUTAG" in message and str(data_home / "MUTAG") in message
