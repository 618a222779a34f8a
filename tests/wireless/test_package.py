"""The package's lazy public names: none is shadowed by a submodule of the same name (importing
``scigen.wireless.observe`` once made ``from scigen.wireless import observe`` return the module), and
importing the package loads no torch."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import scigen.wireless as pkg


def test_no_public_name_is_also_a_submodule():
    subs = {m.name for m in pkgutil.iter_modules(pkg.__path__)}
    assert not subs & set(pkg._LAZY), subs & set(pkg._LAZY)
    for name in pkg._LAZY:
        assert callable(getattr(pkg, name)), name


def test_package_import_is_light():
    code = "import scigen.wireless, sys; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out
