"""Hostile inputs to the dataset catalog (API and `scigen data`): each gives a named, one-line error."""

from __future__ import annotations

import zipfile

import pytest

from scigen.datasets import store
from scigen.datasets.archive import safe_extract
from scigen.datasets.errors import (
    ArchiveError,
    CacheDirError,
    DataNotAvailableError,
    DatasetError,
    UnknownDatasetError,
)
from scigen.datasets.registry import card

from .helpers import assert_one_line_error, cli


def test_api_errors_are_named(tmp_path, monkeypatch):
    with pytest.raises(UnknownDatasetError, match="non-empty dataset name"):
        card("")
    with pytest.raises(UnknownDatasetError, match="did you mean: MUTAG"):
        card("MUTAGG")
    with pytest.raises(TypeError, match="expected a dataset name"):
        card(3)
    afile = tmp_path / "afile"
    afile.write_text("x")
    monkeypatch.setenv("SCIGEN_DATA", str(afile))
    with pytest.raises(CacheDirError, match="SCIGEN_DATA=.*afile is not a directory"):
        store.path("MUTAG")
    monkeypatch.setenv("SCIGEN_DATA", str(tmp_path / "cache"))
    with pytest.raises(DataNotAvailableError, match="MUTAG.zip"):
        store.path("MUTAG")
    junk = tmp_path / "junk.zip"
    junk.write_text("not an archive")
    with pytest.raises(ArchiveError, match="junk.zip is neither a zip nor a tar"):
        safe_extract(junk, tmp_path / "out")
    good = tmp_path / "good.zip"
    with zipfile.ZipFile(good, "w") as zf:
        zf.writestr("a.txt", "hello" * 1000)
    truncated = tmp_path / "truncated.zip"
    truncated.write_bytes(good.read_bytes()[:-30])
    with pytest.raises(DatasetError, match="truncated.zip"):
        safe_extract(truncated, tmp_path / "out2")


def test_cli_errors_are_one_line(tmp_path, monkeypatch):
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert_one_line_error(cli("data", "info", ""), "non-empty dataset name")
    assert_one_line_error(cli("data", "info", "run[/2024]"), "run[/2024]")
    assert_one_line_error(cli("data", "list", "--domain", "astrology"), "astrology")
    monkeypatch.setenv("SCIGEN_DATA", str(afile))
    assert_one_line_error(cli("data", "path", "MUTAG"), "afile", "not a directory")
    cache = tmp_path / "cache"
    (cache / "MUTAG").mkdir(parents=True)
    (cache / "MUTAG" / "MUTAG.zip").write_text("junk")
    monkeypatch.setenv("SCIGEN_DATA", str(cache))
    res = cli("data", "fetch", "MUTAG", "--offline")
    assert res.exit_code == 2 and "Traceback" not in res.output and "MUTAG.zip" in res.output
