"""The README's nowcasting example runs as written and writes its forecast and figure."""

from __future__ import annotations

import contextlib
import io

import pytest

HEADING = "## Example"


def test_readme_example_is_found_and_uses_the_vocabulary(readme_example):
    code = readme_example("weather", HEADING)
    assert 'preset("tiny")' in code and "n_samples=" in code and "seed=" in code
    compile(code, "README.md", "exec")


@pytest.mark.slow  # trains the tiny preset for 120 steps
def test_readme_example_runs(tmp_path, monkeypatch, readme_example):
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)
    scope = {"__name__": "__readme__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(readme_example("weather", HEADING), "README.md", "exec"), scope)  # noqa: S102
    assert scope["fc"].dims == ("member", "lead_time", "y", "x") and scope["fc"].shape == (4, 20, 32, 32)
    s = scope["scores"]
    assert s["stage1/CRPS"] < s["persistence/CRPS"]
    assert (tmp_path / "forecast.nc").stat().st_size > 1000 and (tmp_path / "strip.png").stat().st_size > 1000
    plt.close("all")
