"""Every card's loader exists and works: each ``"module:function"`` resolves with importlib; a card
marked ``planned`` names none; loaders whose data ships beside the checkout (``../shared/data``) or in
an installed wheel (molsets, qm9pack, scanpy) load it; the others, on an empty cache, raise the
catalog's "fetch it / place it here" message.

A loader of a domain package is skipped only when that package is not installed (scigen-datasets'
own tox env); with everything installed (CI, ``scripts/install.sh``) nothing here skips, except the
``../shared/data`` checks when that folder is absent.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

from scigen.datasets import DataNotAvailableError, catalog, load_card
from scigen.datasets.errors import CardError

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
CARDS = catalog()


def resolve(spec: str):
    """The function named by ``"package.module:function"``; skips when its domain package is absent."""
    module, _, func = spec.partition(":")
    dist = ".".join(module.split(".")[:2])  # scigen.<domain>
    if dist != "scigen.datasets" and importlib.util.find_spec(dist) is None:
        pytest.skip(f"{dist} is not installed")
    fn = getattr(importlib.import_module(module), func, None)
    assert callable(fn), f"{spec}: {module} has no function {func!r}"
    return fn


@pytest.mark.parametrize("name", sorted(CARDS))
def test_every_named_loader_exists(name):
    c = CARDS[name]
    if c.planned:
        assert c.loader is None and c.status_note and "no loader yet" in c.status_note
        return
    assert c.loader is not None
    if c.bundled is not None:
        resolve(c.bundled.helper)
    resolve(c.loader)


def test_no_card_is_planned_since_the_weather_loaders_exist():
    assert sorted(n for n, c in CARDS.items() if c.planned) == []
    assert CARDS["SEVIR"].loader == "scigen.weather.data:load_sevir"
    assert CARDS["MeteoNet"].loader == "scigen.weather.data:load_meteonet"


def test_a_planned_card_must_not_name_a_loader(tmp_path, card_dict):
    good = card_dict("Toy", [{"name": "a.csv", "url": "https://example.org/a", "sha256": "a" * 64, "size_bytes": 1}])
    cases = [
        (dict(good, status="planned", status_note="not yet"), "loader", "planned card must not name a loader"),
        ({k: v for k, v in good.items() if k != "loader"} | {"status": "planned"}, "status_note", "required"),
        (dict(good, status="soon"), "status", "expected one of available, planned"),
        (dict(good, status_note="why"), "status_note", "only allowed with status 'planned'"),
        ({k: v for k, v in good.items() if k != "loader"}, "loader", "required field is missing"),
    ]
    import json

    for obj, field, expected in cases:
        (tmp_path / "Toy.json").write_text(json.dumps(obj))
        with pytest.raises(CardError, match=rf"Toy\.json: field '{field}': .*{expected}"):
            load_card(tmp_path / "Toy.json")
    planned = {k: v for k, v in good.items() if k != "loader"} | {"status": "planned", "status_note": "later"}
    (tmp_path / "Toy.json").write_text(json.dumps(planned))
    c = load_card(tmp_path / "Toy.json")
    assert c.planned and c.loader is None and c.status_note == "later"


def test_cli_info_names_the_weather_loader():
    from typer.testing import CliRunner

    from scigen.datasets.cli import app

    res = CliRunner().invoke(app, ["info", "SEVIR"], terminal_width=200)
    assert res.exit_code == 0 and "loader:   scigen.weather.data:load_sevir" in res.output


# ----------------------------------------------------------------- data that ships or is bundled

def _leading_count(text: str) -> int:
    return int(re.match(r"([\d,]+) ", text).group(1).replace(",", ""))


TU_CARDS = sorted(n for n, c in CARDS.items() if c.loader == "scigen.graphs.data:load_tu")


@pytest.mark.parametrize("name", TU_CARDS)
def test_tu_loader_reads_shared_data_with_the_card_count(name):
    load_tu = resolve(CARDS[name].loader)
    if not (SHARED / "tu" / name).is_dir():
        pytest.skip(f"no copy of {name} in ../shared/data/tu")
    data = load_tu(name, root=SHARED / "tu")
    assert len(data) == _leading_count(CARDS[name].description)  # the card's description states the count


def test_moses_loads_from_the_molsets_wheel():
    fn = resolve(CARDS["MOSES"].loader)
    from scigen.datasets.bundled import moses_smiles

    mols = fn("train", limit=3, mmff=False)
    assert mols.smiles == moses_smiles("train", limit=3) and len(mols) == 3


def test_qm9pack_loads_from_the_qm9pack_wheel():
    mols = resolve(CARDS["QM9-qm9pack"].loader)("all", limit=3, cache=False)
    assert mols.names == ["gdb_1", "gdb_2", "gdb_3"]
    assert [z.tolist() for z in mols.atomic_numbers] == [[6, 1, 1, 1, 1], [7, 1, 1, 1], [8, 1, 1]]


def test_scanpy_bundled_sets_load():
    pbmc = resolve(CARDS["pbmc68k_reduced"].loader)()
    assert pbmc.shape == (700, 765)  # the card and scanpy's documentation
    kr = resolve(CARDS["krumsiek11"].loader)()
    assert kr.n_vars == 11 and kr.n_obs <= 640 and kr.obs["time"].nunique() == 6


# ------------------------------------------------------- data to fetch: the offline message at use

OFFLINE = {  # card -> the arguments its loader is called with, nothing but the catalog to go on
    **{n: (n,) for n in TU_CARDS}, "QM9": (), "sciPlex3": (), "GEOM-Drugs": (), "ISPD2005": (), "ETTh1": ("ETTh1",),
    "SEVIR": (), "MeteoNet": (),
}


@pytest.mark.parametrize("name", sorted(OFFLINE))
def test_loader_on_an_empty_cache_says_what_to_fetch(name, data_home, monkeypatch):
    monkeypatch.setenv("SCIGEN_OFFLINE", "1")
    fn = resolve(CARDS[name].loader)
    with pytest.raises(DataNotAvailableError) as ei:
        fn(*OFFLINE[name])
    msg = str(ei.value)
    assert str(data_home / name) in msg and all(f.name in msg for f in CARDS[name].files)
