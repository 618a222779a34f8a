"""`scigen data list|info|fetch|verify|path` through typer's CliRunner (no network)."""

from __future__ import annotations

import hashlib
import json

import pytest
from typer.testing import CliRunner

from scigen.datasets.cli import app

CONTENT = b"a,b\n1,2\n"
SHA = hashlib.sha256(CONTENT).hexdigest()


@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, list(args), terminal_width=200)

    return invoke


def test_list_and_domain_filter(run):
    res = run("list")
    assert res.exit_code == 0
    for name in ("ETTh1", "QM9", "MUTAG", "SEVIR", "ISPD2005", "sciPlex3", "MOSES"):
        assert name in res.output
    res = run("list", "--domain", "graphs")
    assert res.exit_code == 0 and "MUTAG" in res.output and "ETTh1" not in res.output
    res = run("list", "--domain", "astronomy")
    assert res.exit_code == 2 and "unknown domain 'astronomy'" in res.output and "Traceback" not in res.output


def test_info_shows_the_card(run):
    res = run("info", "ettm2")
    assert res.exit_code == 0
    assert "ETTm2" in res.output and "CC BY-ND 4.0" in res.output and "Informer" in res.output
    assert "scigen.timeseries.data:load_ett" in res.output and "sha256 unknown" in res.output
    res = run("info", "ETTx1")
    assert res.exit_code == 2 and "did you mean" in res.output and "Traceback" not in res.output


def test_path_and_fetch_offline_explain_how_to_get_the_data(run, data_home):
    res = run("path", "MUTAG")
    assert res.exit_code == 2
    assert "scigen data fetch MUTAG" in res.output and str(data_home / "MUTAG") in res.output
    res = run("fetch", "MUTAG", "--offline")
    assert res.exit_code == 2 and "offline" in res.output


def test_fetch_verify_record_and_path_round_trip(run, data_home, http_root, use_cards, card_dict):
    root, base, _ = http_root
    (root / "t.csv").write_bytes(CONTENT)
    use_cards(card_dict("Toy", [{"name": "t.csv", "url": f"{base}/t.csv", "sha256": "unknown",
                                 "sha256_reason": "test", "size_bytes": "unknown"}]),)
    res = run("fetch", "toy")
    assert res.exit_code == 0 and str(data_home / "Toy") in res.output
    res = run("verify", "toy", "--record")
    assert res.exit_code == 0 and "UNVERIFIED" in res.output and "recorded observed hashes" in res.output
    res = run("verify", "toy", "--json")
    rep = json.loads(res.output)
    assert rep["passed"] is False and rep["ok"] is True and rep["checks"][0]["observed"] == SHA
    (data_home / "Toy" / "t.csv").write_bytes(CONTENT + b"3,4\n")
    res = run("verify", "toy")
    assert res.exit_code == 1 and "MISMATCH" in res.output
    res = run("path", "toy")
    assert res.exit_code == 0 and res.output.strip() == str(data_home / "Toy")


def test_verify_known_hash_pass_and_missing(run, data_home, use_cards, card_dict):
    use_cards(card_dict("Loc", [{"name": "a.csv", "url": "https://example.org/a.csv", "sha256": SHA,
                                 "size_bytes": len(CONTENT)}]))
    res = run("verify", "loc")
    assert res.exit_code == 1 and "MISSING" in res.output
    (data_home / "Loc").mkdir(parents=True)
    (data_home / "Loc" / "a.csv").write_bytes(CONTENT)
    res = run("verify", "loc")
    assert res.exit_code == 0 and "OK" in res.output and "1 ok" in res.output
