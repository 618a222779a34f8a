"""The README's SBGM example runs as written: SBGM beats LS and OMP, samples transfer to 64 antennas."""

from __future__ import annotations

import ast
import contextlib
import io

HEADING = "## Example"


def test_readme_example_runs(tmp_path, monkeypatch, readme_example):
    code = readme_example("wireless", HEADING)
    assert 'preset("tiny")' in code and "n_samples=" in code
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    scope = {"__name__": "__readme__"}
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), scope)  # noqa: S102
    first = ast.literal_eval(out.getvalue().splitlines()[0])
    assert first["SBGM-CSGMM"] < first["OMP"] < first["LS"], first
    assert scope["wide"]["h"].shape == (5, 64, 1, 1)
    assert (tmp_path / "power_angle.png").stat().st_size > 1000

