"""Hostile inputs through the singlecell API and CLI (MMSFM on AnnData, the sci-Plex3 reader): each gives
a named error whose message names the file / field / value."""

from __future__ import annotations

import json
import pickle

import anndata
import numpy as np
import pandas as pd
import pytest

from scigen.core.errors import CheckpointError, InvalidInputError, NotTrainedError
from scigen.singlecell import MMSFM
from scigen.singlecell.data import three_gaussians
from scigen.singlecell.data.sciplex import load_sciplex3
from scigen.singlecell.io import MissingKeyError, NotAnnDataError, read_h5ad_file, write_h5ad

from .helpers import assert_one_line_error, cli

TINY = {"k": 1, "width": 16, "depth": 1, "train": {"max_steps": 2, "batch_size": 8, "progress": False}}
TIMES = (0.0, 1.0, 2.0)


def _cells(n: int = 30) -> anndata.AnnData:
    return three_gaussians(n, times=TIMES)  # obs["time"] = 0, 1, 2; 2 features in X


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A trained run, a good .h5ad and a zoo of broken ones (same folder)."""
    d = tmp_path_factory.mktemp("singlecell")
    good = d / "cells.h5ad"
    write_h5ad(_cells(), good)
    MMSFM(**TINY).fit(_cells()).save(d / "run")
    blob = good.read_bytes()
    (d / "empty.h5ad").write_bytes(b"")
    (d / "truncated.h5ad").write_bytes(blob[: len(blob) // 2])
    (d / "image.h5ad").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
    (d / "table.h5ad").write_text("gene_a,gene_b,time\n1.0,2.0,0\n")
    (d / "pickled.h5ad").write_bytes(pickle.dumps({"X": [[1.0, 2.0]]}))
    (d / "folder.h5ad").mkdir()
    (d / "cells.csv").write_text("gene_a,gene_b,time\n1.0,2.0,0\n")
    import h5py

    with h5py.File(d / "plain.h5ad", "w") as f:  # HDF5, but not an AnnData
        f["matrix"] = np.zeros((3, 2))
    write_h5ad(_cells()[:0].copy(), d / "nocells.h5ad")
    for name, edit in _BROKEN_DATA.items():
        write_h5ad(edit(_cells()), d / f"{name}.h5ad")
    return d


def _set(adata, **cols):
    for k, v in cols.items():
        adata.obs[k] = v
    return adata


def _nan(adata):
    adata.X[5, 1] = np.nan
    return adata


def _no_time(adata):
    del adata.obs["time"]
    return adata


def _dup(adata):
    adata.obs_names = ["cell"] * adata.n_obs
    return adata


_BROKEN_DATA = {  # AnnData files that read fine but cannot be trained on
    "notime": _no_time,
    "onetime": lambda a: _set(a, time=1.0),
    "wordtimes": lambda a: _set(a, time=[f"day {i % 3}" for i in range(a.n_obs)]),
    "nan": _nan,
    "dupnames": _dup,
}


# ------------------------------------------------------------------ Python API
@pytest.mark.parametrize(("name", "match"), [
    ("missing", r"missing\.h5ad: no such file"),
    ("folder", r"folder\.h5ad: is a directory"),
    ("empty", r"empty\.h5ad: the file is empty \(0 bytes\)"),
    ("truncated", r"truncated\.h5ad: cannot read as an AnnData .h5ad file: truncated"),
    ("image", r"image\.h5ad: .*not an HDF5 file; it looks like a PNG image"),
    ("table", r"table\.h5ad: .*not an HDF5 file; it looks like a text file \(CSV\)"),
    ("pickled", r"pickled\.h5ad: .*it looks like a Python pickle"),
    ("plain", r"plain\.h5ad: an HDF5 file but not an AnnData \(no 'obs' group"),
    ("nocells", r"nocells\.h5ad: holds no cells"),
])
def test_unreadable_h5ad_files(files, name, match):
    with pytest.raises(InvalidInputError, match=match):
        read_h5ad_file(files / f"{name}.h5ad")
    with pytest.raises(InvalidInputError, match=rf"{name}\.h5ad: "):  # the sci-Plex3 reader, same files
        load_sciplex3(files / f"{name}.h5ad")


def test_wrong_suffix(files):
    with pytest.raises(InvalidInputError, match=r"cells\.csv: expected an \.h5ad file, got suffix '\.csv'"):
        read_h5ad_file(files / "cells.csv")


@pytest.mark.parametrize(("name", "error", "match"), [
    ("notime", MissingKeyError, r"time_key='time' is not an obs column \(obs columns: \['marginal'\]\)"),
    ("onetime", InvalidInputError, r"obs\['time'\] has 1 distinct time point\(s\) \(\[1\.0\]\); MMSFM needs at least 2"),
    ("wordtimes", InvalidInputError, r"obs\['time'\] must be numeric, found the value 'day 0'"),
    ("nan", InvalidInputError, r"use_rep='X' has NaN/inf values at time point time=0"),
    ("dupnames", InvalidInputError, r"obs_names has 1 duplicated name\(s\), e\.g\. \['cell'\]; .*obs_names_make_unique"),
])
def test_untrainable_anndata(files, name, error, match):
    with pytest.raises(error, match=match):
        MMSFM(**TINY).fit(read_h5ad_file(files / f"{name}.h5ad"))


@pytest.mark.parametrize(("data", "options", "error", "match"), [
    (np.zeros((30, 2)), {}, NotAnnDataError, "adata must be an anndata.AnnData, got ndarray"),
    ("cells.h5ad", {}, InvalidInputError, r"cells\.h5ad: no such file \(expected an \.h5ad AnnData file\)"),
    (None, {"time_key": "day"}, MissingKeyError, r"time_key='day' is not an obs column"),
    (None, {"time_key": 3}, InvalidInputError, "time_key must be a str naming an obs column, got int"),
    (None, {"layer": "counts"}, MissingKeyError, r"layer='counts' is not in adata\.layers \(layers: \[\]\)"),
    (None, {"use_rep": "X_pca"}, MissingKeyError, r"use_rep='X_pca' is not an obsm key \(obsm: \[\]\)"),
    (None, {"use_rep": "X_pca", "layer": "counts"}, InvalidInputError, "give layer= or use_rep=, not both"),
    (None, {"holdout": [7.0]}, MissingKeyError, r"time 7\.0 is not an observed time point; observed: \[0\.0, 1\.0, 2\.0\]"),
    (None, {"holdout": ["day 1"]}, InvalidInputError, r"holdout must be a list of observed times.*'day 1'"),
    (None, {"holdout": [0.0]}, InvalidInputError, "holdout cannot contain the first time point 0"),
    (None, {"condition": {"donor": "d1"}}, MissingKeyError, "condition key 'donor' is not an obs column"),
    (None, {"batch_size": 500}, InvalidInputError, r"time point time=0 has 30 cell\(s\), fewer than the 500"),
    (None, {"batch_size": 0}, InvalidInputError, "batch_size"),
    (None, {"max_steps": 0}, InvalidInputError, "max_steps"),
    (None, {"max_steps": -3}, InvalidInputError, "max_steps"),
    (None, {"epochs": 3}, InvalidInputError, r"unknown training option\(s\) \['epochs'\]"),
    (None, {"val_data": "x"}, InvalidInputError, "MMSFM takes no val_data"),
])
def test_bad_fit_calls(data, options, error, match):
    with pytest.raises(error, match=match):
        MMSFM(**TINY).fit(_cells() if data is None else data, **options)


def test_empty_anndata_and_bad_config():
    with pytest.raises(InvalidInputError, match=r"adata has no cells \(n_obs == 0\)"):
        MMSFM(**TINY).fit(_cells()[:0].copy())
    for fields, match in [({"method": "sde"}, r"MMSFMConfig\.method: .*'euler_maruyama' \(got 'sde'\)"),
                          ({"colour": "red"}, r"MMSFMConfig\.colour: unknown field"),
                          ({"k": 0}, r"MMSFMConfig\.k"), ({"sigma": -1.0}, r"MMSFMConfig\.sigma"),
                          ({"width": -4}, r"MMSFMConfig\.width"), ({"steps": 0}, r"MMSFMConfig\.steps"),
                          ({"layer": "counts", "use_rep": "X_pca"}, "give layer= or use_rep=, not both")]:
        with pytest.raises(InvalidInputError, match=match):
            MMSFM(**fields)


def test_bad_sampling_and_evaluation_requests(files):
    model = MMSFM.load(files / "run")
    for n in (0, -1, 2.5, "10"):
        with pytest.raises(InvalidInputError, match="n_samples must be a positive int"):
            model.sample(n)
    with pytest.raises(InvalidInputError, match=r"method must be one of .*euler_maruyama, got 'sde' \(the SDE sampler "
                                                r"is now called 'euler_maruyama'\)"):
        model.sample(5, method="sde")
    with pytest.raises(InvalidInputError, match=r"times must be >= the first observed time 0 .*got -1"):
        model.sample(5, times=[-1.0, 1.0])
    for times in ([float("nan")], [], ["noon"], [1.0, float("inf")]):
        with pytest.raises(InvalidInputError, match="times must be a non-empty list of finite numbers"):
            model.sample(5, times=times)
    with pytest.warns(UserWarning, match="times up to 9 extrapolate past the last observed time 2"):
        assert model.sample(3, times=[1.0, 9.0], method="euler", steps=4).n_obs == 6
    with pytest.raises(InvalidInputError, match="steps must be a positive int"):
        model.sample(5, method="euler", steps=-2)
    with pytest.raises(InvalidInputError, match=r"source must be an AnnData or an array \[n, 2\].*\(4, 5\)"):
        model.sample(5, source=np.zeros((4, 5)))
    with pytest.raises(InvalidInputError, match="source has NaN/inf"):
        model.sample(5, source=np.full((4, 2), np.nan))
    with pytest.raises(NotTrainedError, match="untrained"):
        MMSFM(**TINY).sample(4)
    with pytest.raises(MissingKeyError, match=r"time 9\.0 is not an observed time point"):
        model.evaluate(_cells(), times=[9.0])
    with pytest.raises(InvalidInputError, match="n_samples must be a positive int, got 0"):
        model.evaluate(_cells(), n_samples=0)
    wide = anndata.AnnData(np.zeros((30, 3), np.float32), obs=pd.DataFrame({"time": list(TIMES) * 10},
                                                                           index=[f"c{i}" for i in range(30)]))
    with pytest.raises(InvalidInputError, match="adata has 3 features.*the model expects 2"):
        model.evaluate(wide)


def test_bad_saved_runs(tmp_path, files):
    with pytest.raises(CheckpointError, match="does not exist"):
        MMSFM.load(tmp_path / "norun")
    with pytest.raises(CheckpointError, match="got a file"):
        MMSFM.load(files / "cells.h5ad")
    with pytest.raises(CheckpointError, match="already exists"):
        MMSFM.load(files / "run").save(files / "run")


# ------------------------------------------------------------------ CLI
def _cfg(path, **fields) -> str:
    path.write_text(json.dumps({**TINY, "train": {"batch_size": 8}, **fields}))
    return str(path)


def test_cli_bad_inputs_are_one_line_errors(tmp_path, files):
    train = ["singlecell", "mmsfm", "train", "--max-steps", "1", "--out"]
    ok = _cfg(tmp_path / "ok.json")
    cases = [(["--data", str(files / f"{name}.h5ad"), "--config", ok], [f"{name}.h5ad", why]) for name, why in [
        ("missing", "no such file"), ("folder", "is a directory"), ("empty", "the file is empty"),
        ("truncated", "truncated"), ("image", "PNG image"), ("table", "text file (CSV)"),
        ("pickled", "pickle"), ("plain", "not an AnnData"), ("nocells", "holds no cells")]]
    cases += [(["--data", str(files / f"{name}.h5ad"), "--config", ok], needles) for name, needles in [
        ("notime", ["time_key='time' is not an obs column", "['marginal']"]),
        ("onetime", ["obs['time'] has 1 distinct time point", "[1.0]"]),
        ("wordtimes", ["obs['time'] must be numeric", "'day 0'"]),
        ("nan", ["use_rep='X' has NaN/inf values", "time=0"]),
        ("dupnames", ["adata.obs_names", "['cell']", "obs_names_make_unique"])]]
    cases += [(["--data", str(files / "cells.csv")], ["cells.csv", "expected an .h5ad file"])]
    good = ["--data", str(files / "cells.h5ad"), "--config"]
    cases += [(good + [_cfg(tmp_path / f"c{i}.json", **fields)], needles) for i, (fields, needles) in enumerate([
        ({"time_key": "day"}, ["time_key='day'", "['time', 'marginal']"]),
        ({"layer": "counts"}, ["layer='counts'", "adata.layers"]),
        ({"use_rep": "X_pca"}, ["use_rep='X_pca'", "obsm"]),
        ({"holdout": [7.0]}, ["time 7.0 is not an observed time point"]),
        ({"method": "sde"}, ["MMSFMConfig.method", "euler_maruyama", "'sde'"]),
        ({"colour": "red"}, ["MMSFMConfig.colour", "unknown field"]),
        ({"train": {"batch_size": 0}}, ["batch_size"]),
        ({"train": {"batch_size": 500}}, ["fewer than the 500 needed"]),
    ])]
    cases += [(good + [ok, "--max-steps", "0"], ["max_steps"]), (good + [ok, "--preset", "huge"], ["huge"])]
    for i, (args, needles) in enumerate(cases):
        assert_one_line_error(cli(*train, str(tmp_path / f"o{i}"), *args), *needles)
        assert not (tmp_path / f"o{i}").exists()
    run, gen = str(files / "run"), str(tmp_path / "gen.h5ad")
    for args, needles in [
        (["sample", "--run", run, "--out", gen, "--n-samples", "0"], ["--n-samples", "got 0"]),
        (["sample", "--run", run, "--out", gen, "--n-samples", "-1"], ["--n-samples", "got -1"]),
        (["sample", "--run", str(tmp_path / "norun"), "--out", gen], ["norun"]),
        (["sample", "--run", str(files / "cells.h5ad"), "--out", gen], ["cells.h5ad"]),
        (["evaluate", "--run", run, "--data", str(files / "truncated.h5ad")], ["truncated.h5ad", "truncated"]),
        (["evaluate", "--run", run, "--data", str(files / "image.h5ad")], ["image.h5ad", "PNG"]),
        (["evaluate", "--run", run, "--data", str(files / "notime.h5ad")], ["time_key='time'"]),
        (["evaluate", "--run", run], ["--data"]),
    ]:
        assert_one_line_error(cli("singlecell", "mmsfm", *args), *needles)
    assert not (tmp_path / "gen.h5ad").exists()


def test_kill_9_during_sample_leaves_no_file_under_the_final_name(tmp_path, files):
    """Killed the moment anything appears in the output folder (the write has begun), ``sample --out``
    leaves nothing under the final name: the .h5ad is written beside it and renamed into place. (A writer
    straight to ``x.h5ad`` fails this: the half-written file is there.)"""
    import os
    import signal
    import subprocess
    import sys
    import time

    folder = tmp_path / "gen"
    folder.mkdir()
    out = folder / "x.h5ad"
    n = 100_000
    cmd = [sys.executable, "-m", "scigen.core.cli", "singlecell", "mmsfm", "sample", "--run", str(files / "run"),
           "--out", str(out), "--n-samples", str(n)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not os.listdir(folder) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    seen = os.listdir(folder)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert seen, "the sampler wrote nothing (it failed or timed out before writing)"
    if out.exists():  # it finished between the poll and the kill: then the file must be whole
        assert anndata.read_h5ad(out).n_obs == n * len(TIMES)
