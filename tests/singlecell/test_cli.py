"""`scigen singlecell mmsfm train|sample|evaluate` on an .h5ad file."""

import json

import anndata
from typer.testing import CliRunner

from scigen.core.cli import build_app
from scigen.singlecell.data import three_gaussians
from scigen.singlecell.io import write_h5ad


def invoke(*args):
    return CliRunner().invoke(build_app(list(args)), list(args))


def test_cli_train_sample_evaluate(tmp_path):
    data = tmp_path / "cells.h5ad"
    write_h5ad(three_gaussians(80, times=(2.0, 3.0, 7.0)), data)
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"k": 1, "train": {"batch_size": 32}, "time_key": "time"}))
    r = invoke("singlecell", "mmsfm", "train", "--data", str(data), "--config", str(cfg), "--out",
               str(tmp_path / "run"), "--max-steps", "5")
    assert r.exit_code == 0, r.output
    r = invoke("singlecell", "mmsfm", "sample", "--run", str(tmp_path / "run"), "--out", str(tmp_path / "g.h5ad"),
               "--n-samples", "7")
    assert r.exit_code == 0, r.output
    gen = anndata.read_h5ad(tmp_path / "g.h5ad")
    assert gen.n_obs == 21 and sorted(set(gen.obs["time"])) == [2.0, 3.0, 7.0]
    r = invoke("singlecell", "mmsfm", "evaluate", "--run", str(tmp_path / "run"), "--data", str(data))
    assert r.exit_code == 0 and "W2_squared" in r.output, r.output
    r = invoke("singlecell", "mmsfm", "train", "--data", str(tmp_path / "missing.h5ad"), "--out", str(tmp_path / "x"))
    assert r.exit_code == 2 and "missing.h5ad" in r.output.replace("\n", "")
