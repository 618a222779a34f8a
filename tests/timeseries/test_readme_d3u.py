"""The README's D3U example (wrapping a user nn.Module) runs as written."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

HEADING = "## D3U example"


def test_d3u_readme_example_wraps_a_user_module(readme_example):
    code = readme_example("timeseries", HEADING)
    assert "forecaster=MyForecaster()" in code and 'preset("tiny")' in code and "n_samples=" in code
    compile(code, "README.md", "exec")


@pytest.mark.slow  # trains the tiny preset (200 steps) and evaluates: ~30 s on a quiet core
def test_d3u_readme_example_runs(tmp_path, monkeypatch, readme_example):
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    scope = {"__name__": "__readme__"}
    with contextlib.redirect_stdout(out):
        exec(compile(readme_example("timeseries", HEADING), "README.md", "exec"), scope)  # noqa: S102
    assert scope["fc"].shape == (100, 12, 3)
    assert scope["model"].config.forecaster == "custom"
    crps = float(re.search(r"'CRPS': ([\d.]+)", out.getvalue()).group(1))
    assert crps < 0.9  # N(0, 1) in standardised units scores about 0.93-0.95 here
    assert (tmp_path / "d3u_forecast.png").stat().st_size > 1000
