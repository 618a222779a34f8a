"""Run as ``python isolation_probe.py <name>``: import every module of ``scigen.<name>`` while any
import *made by scigen's own code* of a module outside the distribution's declared dependency
closure fails. Prints the offending imports and exits 1 if there were any.

This is the in-process equivalent of installing the distribution alone in a fresh environment
(tox does that for real); it is fast enough for the default test run.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import pkgutil
import re
import sys
from pathlib import Path

from packaging.requirements import Requirement

NAME = sys.argv[1]
DIST = "scigen-core" if NAME == "core" else f"scigen-{NAME}"
SRC_MARK = f"{Path('src') / 'scigen'}"


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(dist: str) -> set[str]:
    seen: set[str] = set()
    todo = [dist]
    while todo:
        d = norm(todo.pop())
        if d in seen:
            continue
        seen.add(d)
        try:
            reqs = md.requires(d) or []
        except md.PackageNotFoundError:
            continue
        for r in reqs:
            req = Requirement(r)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            todo.append(req.name)
    return seen


DEPS = closure(DIST)
ALLOWED_TOP = {top for top, dists in md.packages_distributions().items() if any(norm(x) in DEPS for x in dists)}
ALLOWED_SCIGEN = {d[len("scigen-"):] for d in DEPS if d.startswith("scigen-")}
violations: list[str] = []


def importer_is_ours() -> str | None:
    frame = sys._getframe(2)
    while frame is not None:
        fn = frame.f_code.co_filename
        if "importlib" not in fn and not fn.startswith("<frozen"):
            return fn if SRC_MARK in fn else None
        frame = frame.f_back
    return None


class Blocker:
    def find_spec(self, fullname, path=None, target=None):
        parts = fullname.split(".")
        top = parts[0]
        if top in sys.stdlib_module_names or top in sys.builtin_module_names or top == "__main__":
            return None
        if top == "scigen":
            if len(parts) == 1 or parts[1] in ALLOWED_SCIGEN:
                return None
        elif top in ALLOWED_TOP:
            return None
        who = importer_is_ours()
        if who is None:
            return None
        violations.append(f"{who} imports {fullname!r}, which {DIST} does not declare")
        raise ModuleNotFoundError(f"{fullname} is not a declared dependency of {DIST}")


sys.meta_path.insert(0, Blocker())
pkg = importlib.import_module(f"scigen.{NAME}")
for info in pkgutil.walk_packages(pkg.__path__, prefix=f"scigen.{NAME}."):
    if info.name.endswith("__main__"):
        continue
    try:
        importlib.import_module(info.name)
    except ModuleNotFoundError:
        pass  # recorded in violations when it was ours
for v in sorted(set(violations)):
    print(v)
sys.exit(1 if violations else 0)
