"""DESIGN.md §2: kernels and datasets import nothing of ours, core only kernels, a domain never
another domain. Every import statement (also inside functions) and every literal handed to
``importlib.import_module`` is checked, in every source file of every distribution."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from repo_layout import ALLOWED, FOLDERS, ROOT, source_files  # noqa: E402


def scigen_imports(path: Path) -> list[tuple[int, str]]:
    """(line, second-level package) of every ``scigen.<pkg>`` import in ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            if node.module == "scigen":
                names = [f"scigen.{a.name}" for a in node.names]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
              == "import_module" and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            names = [node.args[0].value]
        for name in names:
            parts = name.split(".")
            if parts[0] == "scigen" and len(parts) > 1:
                found.append((node.lineno, parts[1]))
    return found


@pytest.mark.parametrize("name", sorted(FOLDERS))
def test_distribution_respects_layering(name):
    violations = []
    for path in source_files(name):
        for line, target in scigen_imports(path):
            if target != name and target not in ALLOWED[name]:
                violations.append(f"{path.relative_to(ROOT)}:{line} imports scigen.{target}")
    assert not violations, "layering violations (DESIGN.md §2):\n" + "\n".join(violations)


def test_checker_catches_a_violation(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from scigen.graphs import x\n    import importlib\n"
                   "    importlib.import_module('scigen.core.paths')\n")
    assert scigen_imports(bad) == [(2, "graphs"), (4, "core")]


def test_no_namespace_init_anywhere():
    """PEP 420: a stray scigen/__init__.py would shadow every other distribution."""
    strays = [p for f in FOLDERS.values() for p in [f / "src" / "scigen" / "__init__.py"] if p.exists()]
    assert not strays, f"remove namespace __init__.py files: {strays}"
