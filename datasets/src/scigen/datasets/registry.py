"""The dataset catalog: the validated cards shipped as package data."""

from __future__ import annotations

import difflib
import functools
import json
from pathlib import Path

from scigen.datasets.errors import CardError, UnknownDatasetError
from scigen.datasets.schema import DatasetCard, validate_card

__all__ = ["cards_dir", "load_card", "load_cards", "catalog", "list_datasets", "card"]


def cards_dir() -> Path:
    """The directory of the shipped cards (``scigen/datasets/cards``)."""
    return Path(__file__).resolve().parent / "cards"


def load_card(path: str | Path) -> DatasetCard:
    """Read and validate one card file; errors name the file and the field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CardError(f"{path}: cannot read card: {exc}") from exc
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CardError(f"{path.name}: not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}") from exc
    return validate_card(obj, path)


def load_cards(directory: str | Path) -> dict[str, DatasetCard]:
    """Load every ``*.json`` card in ``directory``, sorted by name; names must be unique (case-insensitive)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CardError(f"{directory}: card directory does not exist")
    out: dict[str, DatasetCard] = {}
    seen: dict[str, str] = {}
    for path in sorted(directory.glob("*.json")):
        c = load_card(path)
        key = c.name.lower()
        if key in seen:
            raise CardError(f"{path.name}: field 'name': {c.name!r} duplicates the card in {seen[key]}")
        seen[key] = path.name
        out[c.name] = c
    return dict(sorted(out.items(), key=lambda kv: kv[0].lower()))


@functools.lru_cache(maxsize=1)
def _shipped() -> dict[str, DatasetCard]:
    return load_cards(cards_dir())


def catalog() -> dict[str, DatasetCard]:
    """All shipped cards, ``{name: DatasetCard}``, sorted case-insensitively by name."""
    return dict(_shipped())


def list_datasets(domain: str | None = None) -> list[DatasetCard]:
    """The shipped cards, optionally only those of one ``domain`` (e.g. ``"timeseries"``)."""
    cards = list(_shipped().values())
    if domain is None:
        return cards
    domains = sorted({c.domain for c in cards})
    if domain not in domains:
        raise ValueError(f"domain: unknown domain {domain!r}; the catalog has {', '.join(domains)}")
    return [c for c in cards if c.domain == domain]


def card(name: str) -> DatasetCard:
    """The card called ``name`` (case-insensitive).

    Raises :class:`UnknownDatasetError` listing close names (``difflib``) when there is none.
    """
    if not isinstance(name, str):
        raise TypeError(f"name: expected a dataset name (str), got {type(name).__name__}")
    if not name.strip():
        raise UnknownDatasetError(f"name: expected a non-empty dataset name, got {name!r} "
                                  "(`scigen data list` shows them all)")
    cards = _shipped()
    by_lower = {k.lower(): v for k, v in cards.items()}
    hit = by_lower.get(name.lower())
    if hit is not None:
        return hit
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=5, cutoff=0.5)
    hint = f"; did you mean: {', '.join(by_lower[c].name for c in close)}?" if close else ""
    raise UnknownDatasetError(
        f"unknown dataset {name!r}{hint} (`scigen data list` shows all {len(cards)} datasets)")
