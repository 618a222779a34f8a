"""Local Sphinx extension of the scigen site.

* ``{scigen-gallery}``: every demo figure of a ``scigen demo`` output folder (``SCIGEN_DEMO_DIR``), one
  figure per system with the demo's own note as caption and its headline metrics. The figures are
  copied under ``docs/_build/gallery/`` (inside the source dir, outside the documents) so that Sphinx
  collects them like any image.
* A check at the end of reading: every ``benchmarks/*/results/*.md`` is included by some page under
  ``docs/benchmarks/`` (a new result file that no page shows is a warning, hence an error under ``-W``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)
DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent


def demo_dir() -> Path:
    path = os.environ.get("SCIGEN_DEMO_DIR", "")
    return Path(path).resolve() if path else DOCS / "_build" / "demo"


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


class GalleryDirective(SphinxDirective):
    """One figure per demo system found in the demo output folder."""

    has_content = False

    def run(self):
        src = demo_dir()
        reports = sorted(src.glob("*/report.json"))
        if not reports:
            logger.warning("gallery: no */report.json under %s (set SCIGEN_DEMO_DIR to a scigen demo output)", src,
                           location=(self.env.docname, self.lineno))
            return []
        out_dir = DOCS / "_build" / "gallery"
        result = []
        for report_path in reports:
            system = report_path.parent.name
            report = json.loads(report_path.read_text())
            pngs = sorted(report_path.parent.glob("*.png"))
            if not pngs:
                logger.warning("gallery: %s has a report but no figure", system, location=(self.env.docname, self.lineno))
                continue
            section_id = nodes.make_id(f"gallery-{system}")
            section = nodes.section(ids=[section_id])
            section += nodes.title(text=system)
            quick = " (quick run)" if report.get("quick") else ""
            seconds = report.get("seconds")
            for png in pngs:
                target = out_dir / system / png.name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(png, target)
                uri = f"/_build/gallery/{system}/{png.name}"
                self.env.note_dependency(str(png))
                figure = nodes.figure(classes=["scigen-gallery"])
                figure += nodes.image(uri=uri, alt=f"{system}: {png.stem}", candidates={"*": uri})
                note = str(report.get("note") or png.stem)
                when = f" {seconds:.0f} s on {report.get('threads', 1)} thread(s){quick}." if seconds else ""
                figure += nodes.caption(text=note + when)
                section += figure
            metrics = report.get("metrics") or {}
            flat = {k: v for k, v in metrics.items() if isinstance(v, (int, float, str, bool))}
            if flat:
                items = nodes.bullet_list()
                for key, value in flat.items():
                    para = nodes.paragraph()
                    para += nodes.literal(text=key)
                    para += nodes.Text(f" = {_fmt(value)}")
                    items += nodes.list_item("", para)
                section += items
            result.append(section)
        return result


def check_benchmarks(app, env):
    """Every benchmark result page is shown by some docs/benchmarks page."""
    shown = set()
    for page in (DOCS / "benchmarks").glob("*.md"):
        for line in page.read_text().splitlines():
            if line.startswith("```{include}"):
                shown.add((page.parent / line.split("}", 1)[1].strip()).resolve())
    for result in sorted(ROOT.glob("benchmarks/*/results/*.md")):
        if result.resolve() not in shown:
            logger.warning("benchmark result %s is included by no page of docs/benchmarks/", result.relative_to(ROOT))


def resolve_short_names(app, env, node, contnode):
    """Resolve a Python reference that names a re-export or a short name.

    Docstrings write ``:class:`MoleculeSet``` or ``:func:`scigen.core.losses.denoising_loss``` (the public
    re-export); autodoc documents each object once, where it is defined. A target is resolved to the one
    documented object whose dotted name ends like it (preferring the role's object type, the target's
    package, then the referencing module's package); an existing but undocumented attribute links to its
    module or class. Anything else stays unresolved (a warning, hence an error).
    """
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "").lstrip("~.")
    if not target or "._" in target or target.startswith("_"):
        return None
    from sphinx.util.nodes import make_refnode

    domain = env.get_domain("py")
    objects = domain.objects
    parts = target.split(".")
    names: list[str] = []
    for k in range(len(parts), 0, -1):
        suffix = ".".join(parts[-k:])
        names = [n for n in objects if n == target or n.endswith("." + suffix)]
        if k < len(parts) and parts[0] == "scigen":
            names = [n for n in names if n.split(".")[:2] == parts[:2]]
        if names:
            break
    kinds = {"func": {"function"}, "meth": {"method", "classmethod", "staticmethod"},
             "class": {"class", "exception"}, "exc": {"exception", "class"}, "attr": {"attribute", "property"},
             "mod": {"module"}, "data": {"data", "attribute"}}.get(node.get("reftype"), set())
    for narrow in (lambda n: objects[n].objtype in kinds,
                   lambda n: n.startswith(".".join(parts[:-1]) + ".") if len(parts) > 1 else False):
        if len(names) > 1 and any(narrow(n) for n in names):
            names = [n for n in names if narrow(n)]
    if len(names) > 1:
        here = node.get("py:module") or ""
        best = max(len(os.path.commonprefix([n, here])) for n in names)
        names = [n for n in names if len(os.path.commonprefix([n, here])) == best]
    if len(names) == 1:
        entry = objects[names[0]]
        return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, names[0])
    # an existing but undocumented attribute (a constant, a custom op, an instance attribute)
    cls = node.get("py:class")
    module = _owning_module(target, node.get("py:module"), cls)
    if module is not None and module in domain.modules:
        entry = domain.modules[module]
        return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, target)
    owner = f"{node.get('py:module')}.{cls}" if cls else None
    if owner in objects and len(parts) == 1:
        entry = objects[owner]
        return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, target)
    return None


def _owning_module(target: str, here: str | None, cls: str | None) -> str | None:
    """The documented module that holds ``target`` (dotted from a module, or a name in ``here``)."""
    import importlib

    parts = target.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        name = ".".join(parts[:cut])
        try:
            obj = importlib.import_module(name)
        except Exception:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
            if obj is None:
                break
        if obj is not None:
            return name
    if here:
        try:
            obj = importlib.import_module(here)
        except Exception:
            return None
        for attr in ([cls] if cls else []) + parts:
            obj = getattr(obj, attr, None) if obj is not None else None
        if obj is not None or hasattr(importlib.import_module(here), parts[0]):
            return here
    return None


_RELATIVE_MOD = re.compile(r":mod:`(~?)\.([A-Za-z_][\w.]*)`")


def absolute_module_refs(app, what, name, obj, options, lines):
    """``:mod:`.config``` in a docstring means the sibling module of the package (as Python's relative
    import); Sphinx would search every module named ``config``. Rewrite it to the absolute name."""
    module = name if what == "module" else getattr(obj, "__module__", None) or name.rsplit(".", 1)[0]
    parent = module.rsplit(".", 1)[0]
    if what == "module" and getattr(obj, "__path__", None) is not None:
        parent = module  # a package: ``.x`` is its own sub-module
    for i, line in enumerate(lines):
        if ":mod:`" in line:
            lines[i] = _RELATIVE_MOD.sub(lambda m: f":mod:`{m.group(1)}{parent}.{m.group(2)}`", line)


def submodules_over_lazy_names(app):
    """A package's lazy name may equal its submodule's (``scigen.placement.macro_only`` the function and
    the module): whichever was bound last wins ``getattr(package, name)``, so autosummary would document
    the module's page as the function on some runs. For the build, every such attribute is the submodule
    (autodoc never documents a package's imported names here)."""
    import importlib
    import pkgutil

    import scigen

    for info in pkgutil.walk_packages(scigen.__path__, "scigen."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except Exception:  # an optional dependency missing: autodoc reports it
            continue
        parent_name, _, child = info.name.rpartition(".")
        parent = importlib.import_module(parent_name)
        if getattr(parent, child, None) is not module:
            setattr(parent, child, module)


def setup(app):
    app.connect("builder-inited", submodules_over_lazy_names, priority=100)
    app.connect("autodoc-process-docstring", absolute_module_refs)
    app.connect("missing-reference", resolve_short_names)
    app.add_directive("scigen-gallery", GalleryDirective)
    app.connect("env-updated", lambda app, env: check_benchmarks(app, env) or [])
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
