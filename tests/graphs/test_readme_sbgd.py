"""The README's SBGD example runs as written: sizes beyond training, PyG output, save/load by seed."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

HEADING = "## SBGD"


def test_readme_sbgd_example_is_found(readme_example):
    code = readme_example("graphs", HEADING)
    assert "SBGD.Config.preset" in code and "n_nodes=100" in code
    compile(code, "README.md", "exec")


@pytest.mark.slow  # trains 300 steps: ~1 min on a quiet core
def test_readme_sbgd_example_runs(tmp_path, monkeypatch, readme_example):
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(readme_example("graphs", HEADING), "README.md", "exec"), {"__name__": "__readme__"})  # noqa: S102
    assert re.search(r"generated sizes: \[100, 100, 100, 100\]", out.getvalue()), out.getvalue()
    assert (tmp_path / "sbgd_run").is_dir()
