"""Layering (DESIGN §2): scigen.datasets imports only the standard library, numpy, pooch, platformdirs,
typer/rich (CLI) — nothing else of scigen — plus scanpy lazily inside the bundled helper."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import scigen.datasets

SRC = Path(scigen.datasets.__file__).parent
ALLOWED = {"numpy", "pooch", "platformdirs", "typer", "rich"}
LAZY_OPTIONAL = {"scanpy"}  # imported inside a function, with a MissingPackageError when absent


def _imports(path: Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, node
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, node


def test_datasets_imports_nothing_of_ours_and_no_heavy_dependency():
    bad = []
    files = sorted(SRC.rglob("*.py"))
    assert len(files) >= 8
    for path in files:
        top_level = {id(n) for n in ast.parse(path.read_text()).body}
        for mod, node in _imports(path):
            root = mod.split(".")[0]
            if mod.startswith("scigen."):
                if not mod.startswith("scigen.datasets"):
                    bad.append(f"{path.name}: {mod}")
            elif root in sys.stdlib_module_names or root == "__future__" or root in ALLOWED:
                continue
            elif root in LAZY_OPTIONAL and id(node) not in top_level:
                continue
            else:
                bad.append(f"{path.name}: {mod}")
    assert bad == []
