"""No import cycles among scigen's modules (issue 32): module A importing B while B imports A, directly or
around a longer circle, makes the import order matter and hides which module owns a piece.

Every import statement counts, module level or inside a function (a lazy import still closes the circle
when it runs), and every literal handed to ``importlib.import_module``; imports under
``if TYPE_CHECKING:`` do not (they never run). ``from package import name`` counts as importing the
submodule ``package.name`` when that is a module, else the package.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from repo_layout import FOLDERS  # noqa: E402

#: (importer, imported) edges allowed to close a circle, each with its reason and its end
ALLOWED_EDGES = {
    ("scigen.graphs.agdiff.baselines", "scigen.graphs.agdiff.ablation"):
        "the deprecated alias baselines.random_perturbation (moved to ablation in issue 32); remove next release",
}


def module_files(roots: list[Path]) -> dict[str, Path]:
    """``{dotted module name: file}`` of every ``.py`` under the ``src`` folders ``roots``."""
    out = {}
    for root in roots:
        for f in sorted(root.rglob("*.py")):
            parts = list(f.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = f
    return out


def _imported_names(tree: ast.AST, package: str) -> list[str]:
    names: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            names.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            names.extend(f"{base}\0{a.name}" for a in node.names)  # resolved against the modules below
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
              == "import_module" and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            names.append(node.args[0].value)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return names


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """``{module: modules it imports}`` among ``modules``."""
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        raw = _imported_names(ast.parse(path.read_text(), filename=str(path)), package)
        for target in raw:
            base, _, member = target.partition("\0")
            if member and f"{base}.{member}" in modules:  # ``from pkg import submodule``
                deps.add(f"{base}.{member}")
            elif base in modules:  # ``import mod`` / ``from mod import name``
                deps.add(base)
        deps.discard(name)
        deps -= {b for (a, b) in ALLOWED_EDGES if a == name}
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def connect(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10 * len(graph) + 100))
    try:
        for v in sorted(graph):
            if v not in index:
                connect(v)
    finally:
        sys.setrecursionlimit(old)
    return sorted(found)


def test_no_import_cycles_among_scigen_modules():
    modules = module_files([folder / "src" for folder in FOLDERS.values()])
    assert len(modules) > 300 and "scigen.core.system.base" in modules
    found = cycles(import_graph(modules))
    assert not found, "import cycles (break each by moving the shared piece down a layer):\n" + "\n".join(
        " -> ".join(c) for c in found)


def test_the_checker_finds_direct_lazy_and_long_circles_but_not_type_checking_ones(tmp_path):
    pkg = tmp_path / "src" / "scigen" / "demo"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from scigen.demo.b import f\n")
    (pkg / "b.py").write_text("def f():\n    from scigen.demo import a\n")  # lazy, still a circle
    (pkg / "c.py").write_text("from . import d\n")
    (pkg / "d.py").write_text("import importlib\nimportlib.import_module('scigen.demo.e')\n")
    (pkg / "e.py").write_text("from scigen.demo.c import x\n")
    (pkg / "f.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from scigen.demo import g\n")
    (pkg / "g.py").write_text("from scigen.demo import f\n")
    found = cycles(import_graph(module_files([tmp_path / "src"])))
    assert found == [["scigen.demo.a", "scigen.demo.b"], ["scigen.demo.c", "scigen.demo.d", "scigen.demo.e"]]
