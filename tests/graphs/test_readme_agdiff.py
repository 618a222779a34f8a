"""The README's AGDiff example runs as written and detects the planted anomalies."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

HEADING = "## AGDiff example"


def test_readme_agdiff_example_is_found(readme_example):
    code = readme_example("graphs", HEADING)
    assert "model.fit(" in code and "model.evaluate(" in code and "model.sample(" in code
    compile(code, "README.md", "exec")


@pytest.mark.slow  # trains the tiny preset for 400 steps: 1-2 min on a quiet core
def test_readme_agdiff_example_runs(tmp_path, monkeypatch, readme_example):
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(readme_example("graphs", HEADING), "README.md", "exec"), {"__name__": "__readme__"})  # noqa: S102
    auc = float(re.search(r"'auc': ([\d.]+)", out.getvalue()).group(1))
    assert auc > 0.7  # chance is 0.5
    assert (tmp_path / "agdiff_run").is_dir()
