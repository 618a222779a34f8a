"""A system's paper table: ``paper_preset.json`` beside its config, read, checked and rendered.

Every system ships a machine-readable copy of "what the paper says" next to its code
(``<package>/<system>/paper_preset.json``; a second system in the same folder, such as the EDM
baseline in ``unigem/``, uses ``paper_preset_<name>.json``)::

    {"system": "timeseries/nsdiff", "paper": "<citation>",
     "rows": [{"setting": "diffusion_steps", "paper": 20, "source": "official config ...",
               "default": 100, "ours": false, "why_default_differs": "<command + figures>"}]}

``setting`` is a dotted path into the config (``train.lr``); ``paper`` the value that reproduces the
paper (its text, or the official code's where the paper is silent — ``source`` says which);
``default`` the value of ``Config()``; ``ours`` marks a switch of ours that the paper does not have
(its ``paper`` value is the position that turns it off); ``why_default_differs`` quotes the recorded
measurement (command + figures) that justifies a default other than the paper's, ``null`` otherwise.

:func:`check_preset` compares the table with the code: ``Config.preset("paper")`` must hold every
row's ``paper`` value and ``Config()`` every row's ``default``; a row whose default differs from its
paper value needs a ``why_default_differs``; an ``ours`` row of a ``bool`` or optional field is off
(``False`` / ``None``) in the paper; and the table must list every *required* setting
(:func:`required_settings`):

* every leaf field whose default differs from the paper preset (so no difference goes unexplained);
* every switch of the config — a field typed ``bool``, ``Literal[...]`` or ``... | None`` outside the
  ``train`` section (every switch of ours is such a field, so none can be left out of the table);
* the optimisation recipe of the ``train`` section (:data:`RECIPE`).

Run-control fields of ``train`` (progress bars, loggers, checkpoint folders, devices) are never
required: they do not change what is trained. :func:`markdown` renders the table that each package
README carries between ``<!-- paper-preset: domain/name -->`` and ``<!-- /paper-preset -->``
(:func:`update_readme` rewrites those blocks; a test checks the README holds the rendered text).
"""

from __future__ import annotations

import json
import re
import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal

import pydantic

from scigen.core.errors import InvalidInputError

__all__ = ["RECIPE", "check_preset", "leaf_values", "load", "markdown", "readme_block", "required_settings",
           "table_path", "update_readme"]

#: the ``train`` fields that are part of a paper's recipe (required rows of every table)
RECIPE = ("train.max_steps", "train.batch_size", "train.lr", "train.optimizer", "train.ema_decay")


def table_path(system: type) -> Path:
    """Where the paper table of ``system`` (a System class) lives: beside the module that defines it."""
    folder = Path(sys.modules[system.__module__].__file__).parent
    name = "paper_preset.json" if folder.name == system.name else f"paper_preset_{system.name}.json"
    return folder / name


def load(system: type) -> dict[str, Any]:
    """The parsed paper table of ``system``; a missing or malformed file is an :class:`InvalidInputError`."""
    path = table_path(system)
    if not path.is_file():
        raise InvalidInputError(f"{system.__name__} has no paper table: {path} is missing")
    table = json.loads(path.read_text())
    for key in ("system", "paper", "rows"):
        if key not in table:
            raise InvalidInputError(f"{path}: missing key {key!r}")
    for i, row in enumerate(table["rows"]):
        missing = {"setting", "paper", "source", "default", "ours", "why_default_differs"} - set(row)
        if missing:
            raise InvalidInputError(f"{path}: row {i} ({row.get('setting')}) lacks {sorted(missing)}")
    return table


def leaf_values(config: pydantic.BaseModel, prefix: str = "") -> dict[str, Any]:
    """Every leaf field of ``config`` by dotted path, JSON-normalised (tuples as lists)."""
    out: dict[str, Any] = {}
    for name in type(config).model_fields:
        value = getattr(config, name)
        if isinstance(value, pydantic.BaseModel):
            out.update(leaf_values(value, f"{prefix}{name}."))
        else:
            out[f"{prefix}{name}"] = _normal(value)
    return out


def _normal(value: Any) -> Any:
    return json.loads(json.dumps(value, default=list))


def _is_switch(annotation: Any) -> bool:
    if annotation is bool:
        return True
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return True
    if origin in (typing.Union, types.UnionType):
        return type(None) in typing.get_args(annotation)
    return False


def required_settings(config_cls: type[pydantic.BaseModel]) -> set[str]:
    """The settings a paper table must list (see the module docstring for the rule)."""
    default, paper = leaf_values(config_cls()), leaf_values(config_cls.preset("paper"))
    need = {k for k in default if default[k] != paper[k]}
    need |= {name for name, info in config_cls.model_fields.items()
             if name != "train" and _is_switch(info.annotation)}
    need |= {k for k in RECIPE if k in default}
    return need


def check_preset(system: type) -> list[str]:
    """Every disagreement between ``system``'s paper table and its config, one line each (empty: none)."""
    table, cfg_cls = load(system), system.Config
    default, paper = leaf_values(cfg_cls()), leaf_values(cfg_cls.preset("paper"))
    problems = []
    if table["system"] != f"{system.domain}/{system.name}":
        problems.append(f"table names {table['system']!r}, the class is {system.domain}/{system.name}")
    seen = set()
    for row in table["rows"]:
        key = row["setting"]
        if key in seen:
            problems.append(f"{key}: listed twice")
        seen.add(key)
        if key not in default:
            problems.append(f"{key}: no such config field")
            continue
        if paper[key] != row["paper"]:
            problems.append(f"{key}: preset('paper') has {paper[key]!r}, the table says the paper has {row['paper']!r}")
        if default[key] != row["default"]:
            problems.append(f"{key}: Config() has {default[key]!r}, the table says {row['default']!r}")
        if row["default"] != row["paper"] and not (row["why_default_differs"] or "").strip():
            problems.append(f"{key}: default {row['default']!r} differs from the paper's {row['paper']!r} "
                            "with no measurement in why_default_differs")
        if not str(row["source"]).strip():
            problems.append(f"{key}: no source")
        if row["ours"]:
            info = _field_info(cfg_cls, key)
            if info is not None and info.annotation is bool and row["paper"] is not False:
                problems.append(f"{key}: a switch of ours must be off (False) in the paper preset")
            elif info is not None and _is_switch(info.annotation) and info.annotation is not bool \
                    and typing.get_origin(info.annotation) is not Literal and row["paper"] is not None:
                problems.append(f"{key}: a switch of ours must be off (None) in the paper preset")
    for key in sorted(required_settings(cfg_cls) - seen):
        problems.append(f"{key}: required by the table rule but not listed")
    return problems


def _field_info(cfg_cls: type[pydantic.BaseModel], key: str):
    *sections, leaf = key.split(".")
    cls = cfg_cls
    for s in sections:
        cls = cls.model_fields[s].annotation
    return cls.model_fields.get(leaf)


def _cell(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else value
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(system: type) -> str:
    """The README table of ``system``'s paper preset (setting, paper value + source, default, why)."""
    table = load(system)
    lines = [f"Paper preset of `{table['system']}` — {table['paper']}. `Config.preset(\"paper\")` holds every "
             "*paper* value; *default* is `Config()` (machine-readable copy: "
             f"`{table_path(system).name}`, checked by `tests/integration/test_paper_presets.py`).", "",
             "| setting | paper | source | default | ours | why the default differs (measurement) |",
             "|---|---|---|---|---|---|"]
    for row in table["rows"]:
        same = row["default"] == row["paper"]
        lines.append("| " + " | ".join([
            f"`{row['setting']}`", f"`{_cell(row['paper'])}`", _cell(row["source"]),
            "same" if same else f"`{_cell(row['default'])}`", "ours" if row["ours"] else "",
            "" if same else _cell(row["why_default_differs"] or "")]) + " |")
    return "\n".join(lines)


def readme_block(system: type) -> str:
    """:func:`markdown` between the markers a README carries it in."""
    key = f"{system.domain}/{system.name}"
    return f"<!-- paper-preset: {key} -->\n{markdown(system)}\n<!-- /paper-preset -->"


def update_readme(path: str | Path, systems: list[type]) -> bool:
    """Rewrite each system's marked block in the README at ``path``; True when the file changed.
    A system whose markers are absent is an :class:`InvalidInputError` (add the two marker lines first)."""
    path = Path(path)
    text = old = path.read_text()
    for system in systems:
        key = f"{system.domain}/{system.name}"
        pattern = re.compile(rf"<!-- paper-preset: {re.escape(key)} -->.*?<!-- /paper-preset -->", re.S)
        if not pattern.search(text):
            raise InvalidInputError(f"{path} has no '<!-- paper-preset: {key} -->' block")
        text = pattern.sub(lambda _m, s=system: readme_block(s), text)
    if text != old:
        path.write_text(text)
    return text != old


if __name__ == "__main__":  # python -m scigen.core.system.paper_table: refresh every README's tables
    from scigen.core.system.registry import discover

    specs, _ = discover()
    for domain, systems in specs.items():
        if domain == "core":
            continue
        classes = [spec.load() for spec in systems.values()]
        readme = Path(sys.modules[classes[0].__module__].__file__).parents[4] / "README.md"
        print(readme, "changed" if update_readme(readme, classes) else "unchanged")
