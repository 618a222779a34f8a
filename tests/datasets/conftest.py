"""Fixtures for the scigen.datasets tests: an isolated cache, a replaceable catalog, a local HTTP server.

No test touches the network: downloads go to a server on 127.0.0.1 started here.
"""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest

import scigen.datasets.registry as registry
from scigen.datasets.schema import validate_card


@pytest.fixture
def data_home(tmp_path, monkeypatch) -> Path:
    """SCIGEN_DATA pointing at an empty temporary cache; offline mode off."""
    root = tmp_path / "cache"
    monkeypatch.setenv("SCIGEN_DATA", str(root))
    monkeypatch.delenv("SCIGEN_OFFLINE", raising=False)
    return root


def make_card(name: str, files: list[dict], **extra) -> dict:
    """A minimal valid card dict with the given file entries."""
    card = {
        "schema_version": 1, "name": name, "domain": "timeseries", "description": "test data",
        "homepage": "https://example.org/", "urls": [], "license": "CC0-1.0", "citation": "Test, 2026.",
        "loader": "scigen.timeseries.data:load_test", "files": files,
    }
    card.update(extra)
    return card


@pytest.fixture
def use_cards(monkeypatch):
    """Replace the shipped catalog by the given card dicts for the duration of a test."""

    def install(*cards: dict) -> None:
        parsed = {c["name"]: validate_card(c, f"{c['name']}.json") for c in cards}
        monkeypatch.setattr(registry, "_shipped", lambda: parsed)

    return install


class _Handler(http.server.SimpleHTTPRequestHandler):
    hits: list[str]

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        self.server.hits.append(self.path)  # type: ignore[attr-defined]
        super().do_GET()


@pytest.fixture
def http_root(tmp_path):
    """(directory served, base URL, list of requested paths) for a server on 127.0.0.1."""
    root = tmp_path / "served"
    root.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(root)))
    server.hits = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}", server.hits  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def card_dict():
    """The :func:`make_card` factory (conftest modules are not importable under --import-mode=importlib)."""
    return make_card
