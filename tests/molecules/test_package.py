"""Package structure: ``import scigen.molecules`` is lazy (no torch / RDKit: ``scigen list`` stays fast),
and the modules import in any order (the old ``io`` <-> ``structures`` cycle is gone)."""

import subprocess
import sys

import pytest


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_is_lazy():
    code = ("import sys, scigen.molecules as m; assert m.SYSTEMS['unigem'].endswith(':UniGEM'); "
            "print(sorted(k for k in ('torch', 'rdkit', 'pandas', 'scigen.molecules.io') if k in sys.modules))")
    assert _run(code) == "[]"
    # the lazy names resolve to the real objects
    assert _run("import scigen.molecules as m; from scigen.molecules.io import write_sdf; "
                "print(m.write_sdf is write_sdf, m.Molecule.__module__)") == "True scigen.molecules.structures"


@pytest.mark.parametrize("first", ["structures", "convert", "io", "metrics", "data.dataset"])
def test_modules_import_in_any_order_without_cycles(first):
    loaded = _run(f"import sys, scigen.molecules.{first}; print('scigen.molecules.io' in sys.modules)")
    if first == "structures":  # the Molecule record does not pull in the file readers
        assert loaded == "False"
