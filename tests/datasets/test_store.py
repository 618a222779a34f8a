"""Cache location, fetch through pooch (local HTTP server only), verify, path and the missing-data message."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from scigen.datasets import (
    ChecksumError,
    DataNotAvailableError,
    cache_dir,
    dataset_dir,
    fetch,
    path,
    verify,
)

TU_LOCAL = Path("/work/shared/data/tu")
CONTENT = b"date,OT\n2016-07-01 00:00:00,30.5\n2016-07-01 01:00:00,27.8\n"
SHA = hashlib.sha256(CONTENT).hexdigest()


def _entry(name, url, sha=None, **kw):
    e = {"name": name, "url": url, "size_bytes": "unknown"}
    e.update({"sha256": sha} if sha else {"sha256": "unknown", "sha256_reason": "not yet verified (test)"})
    e.update(kw)
    return e


# --------------------------------------------------------------------------------- cache location

def test_scigen_data_env_var_sets_the_cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv("SCIGEN_DATA", str(tmp_path / "here"))
    assert cache_dir() == tmp_path / "here"
    assert dataset_dir("etth1") == tmp_path / "here" / "ETTh1"
    assert not (tmp_path / "here").exists()  # looking up never creates directories


def test_default_cache_root_is_the_platform_user_cache(monkeypatch):
    import platformdirs

    monkeypatch.delenv("SCIGEN_DATA", raising=False)
    assert cache_dir() == Path(platformdirs.user_cache_dir("scigen"))
    monkeypatch.setenv("SCIGEN_DATA", "   ")  # blank counts as unset
    assert cache_dir() == Path(platformdirs.user_cache_dir("scigen"))


# --------------------------------------------------------------------------- missing / offline

def test_missing_data_message_names_the_fetch_command_and_the_directory(data_home):
    with pytest.raises(DataNotAvailableError) as ei:
        path("etth1")
    msg = str(ei.value)
    assert "scigen data fetch ETTh1" in msg
    assert str(data_home / "ETTh1") in msg
    assert "ETTh1.csv" in msg and "https://raw.githubusercontent.com/zhouhaoyi/ETDataset" in msg
    assert "SCIGEN_DATA" in msg
    assert isinstance(ei.value, FileNotFoundError)  # callers may catch the builtin


def test_offline_fetch_never_touches_the_network(data_home, http_root, use_cards, card_dict, monkeypatch):
    root, base, hits = http_root
    (root / "x.csv").write_bytes(CONTENT)
    use_cards(card_dict("Toy", [_entry("x.csv", f"{base}/x.csv", SHA)]))
    with pytest.raises(DataNotAvailableError) as ei:
        fetch("toy", offline=True)
    assert "offline" in str(ei.value) and "scigen data fetch Toy" in str(ei.value)
    assert str(data_home / "Toy") in str(ei.value)
    monkeypatch.setenv("SCIGEN_OFFLINE", "1")
    with pytest.raises(DataNotAvailableError):
        fetch("toy")
    assert hits == []


def test_manual_files_explain_how_to_get_them(data_home, use_cards, card_dict):
    use_cards(card_dict("Kag", [_entry("k.zip", "https://www.kaggle.com/competitions/x/data", access="manual",
                                       instructions="kaggle competitions download -c x", extract=True)]))
    with pytest.raises(DataNotAvailableError) as ei:
        fetch("kag")
    msg = str(ei.value)
    assert "manual download" in msg and "kaggle competitions download -c x" in msg
    assert str(data_home / "Kag") in msg and "k.zip" in msg


# ----------------------------------------------------------------------------------------- fetch

def test_fetch_downloads_and_verifies_a_known_hash(data_home, http_root, use_cards, card_dict):
    root, base, hits = http_root
    (root / "x.csv").write_bytes(CONTENT)
    use_cards(card_dict("Toy", [_entry("x.csv", f"{base}/x.csv", SHA)]))
    d = fetch("toy")
    assert d == data_home / "Toy" and (d / "x.csv").read_bytes() == CONTENT
    assert path("TOY") == d
    fetch("toy")  # cached: no second request
    assert hits == ["/x.csv"]
    rep = verify("toy")
    assert rep.passed and [c.status for c in rep.checks] == ["ok"]


def test_fetch_rejects_a_download_whose_hash_differs(data_home, http_root, use_cards, card_dict):
    root, base, _ = http_root
    (root / "x.csv").write_bytes(CONTENT + b"tampered\n")
    use_cards(card_dict("Toy", [_entry("x.csv", f"{base}/x.csv", SHA)]))
    with pytest.raises(ChecksumError):
        fetch("toy")
    assert not (data_home / "Toy" / "x.csv").exists()  # the bad download is not left in the cache


def test_fetch_records_and_prints_the_hash_when_the_card_does_not_know_it(data_home, http_root, use_cards,
                                                                            card_dict, capsys):
    root, base, _ = http_root
    (root / "x.csv").write_bytes(CONTENT)
    use_cards(card_dict("Toy", [_entry("x.csv", f"{base}/x.csv")]))
    fetch("toy")
    assert SHA in capsys.readouterr().err
    record = json.loads((data_home / "Toy" / ".scigen-hashes.json").read_text())
    assert record["files"]["x.csv"]["sha256"] == SHA and record["files"]["x.csv"]["size_bytes"] == len(CONTENT)
    rep = verify("toy")
    assert [c.status for c in rep.checks] == ["unverified"]  # unknown is never reported as passed
    assert rep.ok and not rep.passed and rep.checks[0].observed == SHA


def test_failed_download_gives_instructions(data_home, http_root, use_cards, card_dict):
    _, base, _ = http_root
    use_cards(card_dict("Toy", [_entry("x.csv", f"{base}/missing.csv", SHA)]))
    with pytest.raises(DataNotAvailableError) as ei:
        fetch("toy")
    assert "download failed" in str(ei.value) and "scigen data fetch Toy" in str(ei.value)


def test_fetch_extracts_archives_and_force_downloads_again(data_home, http_root, use_cards, card_dict, tmp_path):
    root, base, hits = http_root
    with zipfile.ZipFile(root / "pack.zip", "w") as zf:
        zf.writestr("Pack/a.txt", CONTENT)
    zsha = hashlib.sha256((root / "pack.zip").read_bytes()).hexdigest()
    use_cards(card_dict("Pack", [_entry("pack.zip", f"{base}/pack.zip", zsha, extract=True,
                                        members=[{"name": "Pack/a.txt", "sha256": SHA, "size_bytes": len(CONTENT)}],
                                        members_provenance="written by the test")]))
    d = fetch("pack")
    assert (d / "Pack" / "a.txt").read_bytes() == CONTENT
    rep = verify("pack")
    assert [(c.name, c.status) for c in rep.checks] == [("pack.zip", "ok"), ("Pack/a.txt", "ok")]
    fetch("pack", force=True)
    assert hits == ["/pack.zip", "/pack.zip"]


# ---------------------------------------------------------------------------------------- verify

def test_verify_reports_ok_mismatch_and_missing_on_local_files(data_home, use_cards, card_dict):
    other = b"something else"
    use_cards(card_dict("Loc", [_entry("a.csv", "https://example.org/a.csv", SHA),
                                _entry("b.csv", "https://example.org/b.csv", hashlib.sha256(other).hexdigest()),
                                _entry("c.csv", "https://example.org/c.csv", SHA)]))
    d = data_home / "Loc"
    d.mkdir(parents=True)
    (d / "a.csv").write_bytes(CONTENT)
    (d / "b.csv").write_bytes(other + b"!")  # one byte off
    rep = verify("loc")
    assert [(c.name, c.status) for c in rep.checks] == [("a.csv", "ok"), ("b.csv", "mismatch"), ("c.csv", "missing")]
    assert rep.checks[1].observed == hashlib.sha256(other + b"!").hexdigest()
    assert not rep.ok and not rep.passed
    with pytest.raises(ChecksumError, match=r"does not match the card.*scigen data fetch Loc --force"):
        fetch("loc", offline=True)  # a cached file with a wrong hash is an error, not a silent reuse


def test_verify_record_detects_later_changes(data_home, use_cards, card_dict):
    use_cards(card_dict("Loc", [_entry("a.csv", "https://example.org/a.csv")]))
    d = data_home / "Loc"
    d.mkdir(parents=True)
    (d / "a.csv").write_bytes(CONTENT)
    rep = verify("loc", record=True)
    assert rep.checks[0].status == "unverified" and rep.record_path == d / ".scigen-hashes.json"
    assert "matches the local record" in verify("loc").checks[0].note
    (d / "a.csv").write_bytes(CONTENT + b"x")
    changed = verify("loc").checks[0]
    assert changed.status == "mismatch" and changed.expected == SHA and changed.expected_from == "local record"


@pytest.mark.skipif(not (TU_LOCAL / "COX2").is_dir(), reason="local TU copy of COX2 not present")
def test_real_cox2_card_placed_zip_is_extracted_and_members_verify(data_home):
    # Build the archive a user would place by hand, from the real local COX2 files.
    d = data_home / "COX2"
    d.mkdir(parents=True)
    with zipfile.ZipFile(d / "COX2.zip", "w") as zf:
        for p in sorted((TU_LOCAL / "COX2").iterdir()):
            zf.write(p, f"COX2/{p.name}")
    assert path("cox2") == d
    assert (d / "COX2" / "COX2_A.txt").read_bytes() == (TU_LOCAL / "COX2" / "COX2_A.txt").read_bytes()
    rep = verify("COX2")
    statuses = {c.name: c.status for c in rep.checks}
    assert statuses.pop("COX2.zip") == "unverified"  # the zip's own hash is unknown
    assert set(statuses.values()) == {"ok"} and len(statuses) == 5
    (d / "COX2" / "COX2_graph_labels.txt").write_text("1\n")
    assert {c.name: c.status for c in verify("COX2").checks}["COX2/COX2_graph_labels.txt"] == "mismatch"
