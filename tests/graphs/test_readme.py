"""The README's G2PT generation + fine-tuning example runs as written (and fine-tuning helps)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "packages" / "graphs" / "README.md"


def _example() -> str:
    text = README.read_text()
    section = text[text.index("## G2PT: generation and fine-tuning"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_example_is_found():
    code = _example()
    assert "model.finetune(" in code and "model.sample(" in code
    compile(code, "README.md", "exec")


@pytest.mark.slow  # trains for 300 + 80 + 50 steps: ~1 min on a quiet core
def test_readme_example_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(_example(), "README.md", "exec"), {"__name__": "__readme__"})  # noqa: S102
    before, after = map(float, re.search(r"mean reward ([\d.]+) -> ([\d.]+)", out.getvalue()).groups())
    assert after > before
    assert (tmp_path / "g2pt_run").is_dir()
