"""Each distribution imports with only itself and its declared dependencies (issue #2).

Every module of every distribution is imported in a fresh interpreter in which any import made by
scigen's own code of a module outside the declared dependency closure fails (see isolation_probe).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from repo_layout import FOLDERS  # noqa: E402

PROBE = Path(__file__).with_name("isolation_probe.py")


@pytest.mark.parametrize("name", sorted(FOLDERS))
def test_imports_only_declared_dependencies(name):
    if importlib.util.find_spec(f"scigen.{name}") is None:
        pytest.skip(f"scigen.{name} is not installed in this environment")
    proc = subprocess.run([sys.executable, str(PROBE), name], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"undeclared imports in scigen.{name}:\n{proc.stdout}\n{proc.stderr[-3000:]}"


def test_probe_detects_an_undeclared_import(tmp_path):
    """The probe must fail when our code imports something undeclared (here: pandas from kernels)."""
    if importlib.util.find_spec("scigen.kernels") is None:
        pytest.skip("scigen.kernels is not installed in this environment")
    pkg = FOLDERS["kernels"] / "src" / "scigen" / "kernels" / "_probe_violation.py"
    pkg.write_text("import pandas  # deliberately undeclared\n")
    try:
        proc = subprocess.run([sys.executable, str(PROBE), "kernels"], capture_output=True, text=True, timeout=300)
    finally:
        pkg.unlink()
    assert proc.returncode == 1
    assert "pandas" in proc.stdout
