"""ISPD2005 loader (offline): finds designs in a cache folder, names missing ones, and says how to fetch."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from scigen.core.errors import InvalidInputError
from scigen.datasets import DataNotAvailableError
from scigen.placement import generate_netlist, write_bookshelf
from scigen.placement.data import ispd2005_aux_files, load_ispd2005
from scigen.placement.synthetic import SynthConfig

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "placement" / "bench_placement.py"


def test_load_from_folder(tmp_path):
    nl = generate_netlist(3, SynthConfig.for_size(6))
    write_bookshelf(nl, tmp_path / "adaptec1", name="adaptec1")
    out = load_ispd2005(tmp_path, designs=["adaptec1"])
    assert list(out) == ["adaptec1"]
    np.testing.assert_array_equal(out["adaptec1"].lower_left, nl.lower_left)
    with pytest.raises(InvalidInputError, match="bigblue2"):
        ispd2005_aux_files(tmp_path, designs=["adaptec1", "bigblue2"])
    with pytest.raises(InvalidInputError, match="unknown ISPD2005 design"):
        ispd2005_aux_files(tmp_path, designs=["adaptec9"])


def test_uncached_dataset_says_how_to_fetch(tmp_path, monkeypatch):
    monkeypatch.setenv("SCIGEN_DATA", str(tmp_path))
    with pytest.raises(DataNotAvailableError, match="scigen data fetch ISPD2005"):
        load_ispd2005()


def test_benchmark_ispd_flag_stops_before_training(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SCIGEN_DATA", str(tmp_path / "cache"))
    spec = importlib.util.spec_from_file_location("bench_placement", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--ispd", "--out", str(tmp_path / "out")]) == 2
    assert "scigen data fetch ISPD2005" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
