"""The placement README's main example runs as written and places legally."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

HEADING = "## Example"


def test_readme_example_is_found(readme_example):
    code = readme_example("placement", HEADING)
    compile(code, "placement/README.md", "exec")
    assert "model.sample(" in code and "model.place(" in code and 'preset("tiny")' in code


@pytest.mark.slow  # the tiny preset: 60 training steps, 2 x 4 placements (~30 s on a loaded core)
def test_readme_example_runs(readme_example, tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    code = readme_example("placement", HEADING)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})  # noqa: S102
    plt.close("all")
    hpwl, legality = map(float, re.search(r"HPWL ([\d.]+), legality ([\d.]+)", out.getvalue()).groups())
    assert legality >= 0.99 and hpwl > 0
    assert (tmp_path / "placed" / "design.aux").is_file() and (tmp_path / "placement.png").stat().st_size > 1000
    assert (tmp_path / "placer_run" / "scigen.json").is_file()
