"""The README's NsDiff example runs as written and beats the Gaussian N(train mean, train var) baseline."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

HEADING = "## Example"


def test_readme_example_is_found_and_uses_the_vocabulary(readme_example):
    code = readme_example("timeseries", HEADING)
    assert 'preset("tiny")' in code and "n_samples=" in code and "demo_config" not in code
    compile(code, "README.md", "exec")


@pytest.mark.slow  # trains the tiny preset (150 steps): about a minute on a quiet core
def test_readme_example_runs(tmp_path, monkeypatch, readme_example):
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    scope = {"__name__": "__readme__"}
    with contextlib.redirect_stdout(out):
        exec(compile(readme_example("timeseries", HEADING), "README.md", "exec"), scope)  # noqa: S102
    assert scope["fc"].shape == (200, 12, 3)
    crps = float(re.search(r"'CRPS': ([\d.]+)", out.getvalue()).group(1))
    assert crps < 0.9  # N(0, 1) in standardised units scores about 0.93-0.95 here
    assert (tmp_path / "forecast.png").stat().st_size > 1000
