"""Docs that run (issue 32, item 7): every README example whose as-written run is ``slow`` also runs in the
default suite with training capped (``capped_training``: a few optimiser steps per fit), and every module
docstring example (a literal block introduced by a line ending in ``Example::``) runs the same way. An
example whose calls fail is a failing test; the examples' quality claims stay in the slow as-written tests."""

from __future__ import annotations

import ast
import contextlib
import io
import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: README examples whose as-written run is a slow test (package, heading)
README_EXAMPLES = [("graphs", "## Example"), ("graphs", "## AGDiff example"), ("graphs", "## SBGD"),
                   ("placement", "## Example"), ("singlecell", "### Example (Inverse Flow)"),
                   ("timeseries", "## Example"), ("timeseries", "## D3U example"), ("weather", "## Example")]


def _exec(code: str, where: str, tmp_path, monkeypatch) -> dict:
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    scope = {"__name__": "__example__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, where, "exec"), scope)  # noqa: S102
    return scope


@pytest.mark.parametrize(("package", "heading"), README_EXAMPLES, ids=[f"{p}:{h}" for p, h in README_EXAMPLES])
def test_readme_example_runs_with_capped_training(package, heading, readme_example, capped_training, tmp_path,
                                                  monkeypatch):
    _exec(readme_example(package, heading), f"{package}/README.md {heading}", tmp_path, monkeypatch)


def docstring_examples() -> list[tuple[str, str]]:
    """``(module file, code)`` of every ``Example::`` block in a module docstring of the source tree."""
    found = []
    for path in sorted(ROOT.glob("*/src/scigen/**/*.py")) + sorted(ROOT.glob("packages/*/src/scigen/**/*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text()), clean=False) or ""
        for m in re.finditer(r"Example::\n\n((?:(?:    .*)?\n)+)", doc + "\n"):
            found.append((str(path.relative_to(ROOT)), textwrap.dedent(m.group(1))))
    return found


EXAMPLES = docstring_examples()


def test_the_module_examples_are_found():
    where = {w for w, _ in EXAMPLES}
    # the systems' module docstrings and the engine's binding each show one runnable example
    for expected in ("gim/system.py", "inverseflow/system.py", "mmsfm/system.py", "core/generative/__init__.py",
                     "datasets/__init__.py"):
        assert any(w.endswith(expected) for w in where), (expected, sorted(where))


@pytest.mark.parametrize(("where", "code"), EXAMPLES, ids=[w for w, _ in EXAMPLES])
def test_module_docstring_example_runs(where, code, capped_training, tmp_path, monkeypatch):
    _exec(code, where, tmp_path, monkeypatch)
