"""Sphinx configuration of the scigen documentation site (built by ``bash scripts/docs.sh``).

Offline: no intersphinx, no external link check. Tutorials are MyST-NB text notebooks executed at
build time with jupyter-cache under ``docs/_build/jupyter_cache`` (re-run only when a cell changed).
"""

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

project = "scigen"
author = "the scigen authors"
copyright = "2026, the scigen authors"
release = version = "0.1.0"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "scigen_docs",
]

exclude_patterns = ["_build", "_templates", "_snippets", "**.ipynb_checkpoints", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}
root_doc = "index"

# -- references: every internal reference must resolve (``-n`` in scripts/docs.sh) ------------------
nitpicky = True
# Names from other projects (no intersphinx offline) and type aliases autodoc cannot resolve.
nitpick_ignore_regex = [
    (r"py:.*", r"(torch|numpy|np|pandas|pd|xarray|xr|anndata|ad|networkx|nx|scipy|rdkit|Chem|matplotlib|"
     r"plt|lightning|pydantic|typer|torch_geometric|collections|typing|pathlib|os|io|re|enum|abc|dataclasses|"
     r"functools|contextlib|logging|json|types|importlib)(\..*)?"),
    (r"py:.*", r"(Tensor|ndarray|DataFrame|Series|AnnData|Graph|DiGraph|Path|Module|Figure|Axes|Callable|"
     r"Iterable|Iterator|Sequence|Mapping|Any|Literal|Optional|Union|BaseModel|Generator|ArrayLike|Mol|"
     r"Dataset|Data|Batch|DataArray|float|int|str|bool|None|dict|list|tuple|object|type|bytes)"),
    # napoleon reads prose after "Returns:" / "Raises:" as a type ("the default data", "too few cells")
    (r"py:(class|exc|obj|data)", r".*[ /;,'\"\[\]\->].*"),
    (r"py:.*", r".*\._[A-Za-z].*|_.*"),  # private names are not documented
    (r"py:class", r"[A-Z]|log_sigma|log_scale"),  # shape symbols ("[V] bool"), argument names read as types
]

# -- autodoc / autosummary -----------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autosummary_ignore_module_all = True
autodoc_typehints = "none"          # signatures show defaults; the docstrings say the types
autodoc_member_order = "bysource"
autodoc_inherit_docstrings = False  # no Lightning / torch docstrings on our overrides
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False,
                           "ignore-module-all": True}  # re-exports are documented once, where defined
napoleon_google_docstring = True
napoleon_numpy_docstring = True
napoleon_use_ivar = True  # "Attributes:" as fields, not a second description of each dataclass field
add_module_names = False
suppress_warnings = ["autosummary.import_cycle", "myst.header"]  # benchmark result files keep their own heading levels

# -- MyST / MyST-NB ------------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = os.environ.get("SCIGEN_DOCS_EXECUTE", "cache")
nb_execution_cache_path = str(DOCS / "_build" / "jupyter_cache")
nb_execution_timeout = 120
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True
nb_kernel_rgx_aliases = {".*": "python3"}

# -- HTML ----------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "scigen"
html_static_path = ["_static"]
html_favicon = "_static/favicon.svg"  # else the browser asks for /favicon.ico (a 404 in the console)
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 7,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_context = {"default_mode": "light"}
html_show_sourcelink = False
html_copy_source = False
nb_execution_in_temp = True   # tutorials write their runs and files into a temporary folder
