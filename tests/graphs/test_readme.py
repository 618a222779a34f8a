"""The README's G2PT generation + fine-tuning example runs as written (and fine-tuning helps)."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

HEADING = "## Example"


def test_readme_example_is_found(readme_example):
    code = readme_example("graphs", HEADING)
    assert "model.finetune(" in code and "model.sample(" in code
    compile(code, "README.md", "exec")


@pytest.mark.slow  # trains for 300 + 80 + 50 steps: ~1 min on a quiet core
def test_readme_example_runs(tmp_path, monkeypatch, readme_example):
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(readme_example("graphs", HEADING), "README.md", "exec"), {"__name__": "__readme__"})  # noqa: S102
    before, after = map(float, re.search(r"mean reward ([\d.]+) -> ([\d.]+)", out.getvalue()).groups())
    assert after > before
    assert (tmp_path / "g2pt_run").is_dir()
