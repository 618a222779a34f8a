"""``Config.preset("paper")`` is the paper, in every installed system (issue 32, item 2).

Each system ships ``paper_preset.json`` beside its config (:mod:`scigen.core.system.paper_table`): one
row per setting with the paper's value and its source, the default, whether the setting is a switch of
ours, and the recorded measurement that justifies a default other than the paper's. These tests read
the preset and the defaults against that table, require every switch of the config to be listed, and
require the package README to carry the table as rendered from the JSON (so neither can drift).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from scigen.core.system.paper_table import check_preset, leaf_values, load, readme_block, required_settings
from scigen.core.system.registry import discover

SYSTEMS = sorted((spec for table in discover()[0].values() for spec in table.values()
                  if isinstance(spec.target, str) and spec.domain != "core"),  # core/toy is the engine's test double
                 key=lambda s: (s.domain, s.name))
IDS = [f"{s.domain}/{s.name}" for s in SYSTEMS]


def test_every_paper_system_is_walked():
    assert len(SYSTEMS) == 13, IDS  # twelve papers + the EDM baseline


@pytest.mark.parametrize("spec", SYSTEMS, ids=IDS)
def test_paper_preset_and_defaults_match_the_table(spec):
    problems = check_preset(spec.load())
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("spec", SYSTEMS, ids=IDS)
def test_table_values_are_the_config_values(spec):
    # the same comparison as check_preset, spelled out: a direct read of both configs
    cls = spec.load()
    paper, default = leaf_values(cls.Config.preset("paper")), leaf_values(cls.Config())
    for row in load(cls)["rows"]:
        assert paper[row["setting"]] == row["paper"], row["setting"]
        assert default[row["setting"]] == row["default"], row["setting"]
        if row["default"] != row["paper"]:
            assert (row["why_default_differs"] or "").strip(), row["setting"]
    assert required_settings(cls.Config) <= {r["setting"] for r in load(cls)["rows"]}


@pytest.mark.parametrize("spec", SYSTEMS, ids=IDS)
def test_readme_carries_the_rendered_table(spec):
    cls = spec.load()
    readme = Path(sys.modules[cls.__module__].__file__).parents[4] / "README.md"
    assert readme_block(cls) in readme.read_text(), (
        f"{readme} does not hold the rendered paper table of {spec.domain}/{spec.name}: "
        "run `python -m scigen.core.system.paper_table`")


def test_check_preset_reports_a_wrong_paper_value(tmp_path, monkeypatch):
    # the checker itself can fail: a table whose paper value disagrees with the preset is reported
    import json

    from scigen.core.system import paper_table

    cls = SYSTEMS[0].load()
    table = load(cls)
    required = required_settings(cls.Config)
    first = next(i for i, r in enumerate(table["rows"]) if r["setting"] in required)
    table["rows"].insert(0, table["rows"].pop(first))
    row = table["rows"][0]
    row["paper"] = ["not", "the", "value"]
    table["rows"].append(dict(row))
    path = tmp_path / "paper_preset.json"
    path.write_text(json.dumps(table))
    monkeypatch.setattr(paper_table, "table_path", lambda _cls: path)
    problems = check_preset(cls)
    assert any("preset('paper') has" in p for p in problems)
    assert any("listed twice" in p for p in problems)
    table["rows"] = table["rows"][1:-1]  # a required setting left out
    path.write_text(json.dumps(table))
    assert f"{row['setting']}: required by the table rule but not listed" in check_preset(cls)
