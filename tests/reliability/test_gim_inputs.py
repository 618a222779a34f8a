"""Hostile inputs to GIM (API and CLI): each gives one clear error naming the key and the value."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scigen.core.errors import InvalidInputError
from scigen.singlecell.gim.synthetic import synthetic_screen
from scigen.singlecell.gim.system import GIM
from scigen.singlecell.io import write_h5ad

from .helpers import assert_one_line_error, cli

TINY = {"width": 8, "depth": 1, "train": {"max_steps": 2, "batch_size": 4, "progress": False, "logger": None}}


def _data():
    return synthetic_screen(4, n_functions=3, n_ood_functions=1, cells=6, n_control=30, seed=0)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("gim")
    GIM(**TINY).fit(_data()).save(d / "run")
    return d


def test_missing_obs_keys_are_named():
    ad = _data()
    with pytest.raises(InvalidInputError, match="perturbation_key='drug'"):
        GIM(**TINY, perturbation_key="drug").fit(ad)
    del ad.obs["dose"]
    with pytest.raises(InvalidInputError, match="dose_key='dose'"):
        GIM(**TINY).fit(ad)


@pytest.mark.parametrize("bad", ["high", np.nan, -1.0])
def test_bad_doses_are_named(bad):
    ad = _data()
    ad.obs["dose"] = ad.obs["dose"].astype(object)
    ad.obs.iloc[40, ad.obs.columns.get_loc("dose")] = bad
    with pytest.raises(InvalidInputError, match=r"dose values must be finite numbers >= 0; found .*cell40"):
        GIM(**TINY).fit(ad)


def test_context_with_too_few_cells_and_no_control_are_named():
    with pytest.raises(InvalidInputError, match=r"context compound='f00', dose=0.5 has 6 cell\(s\)"):
        GIM(**TINY, min_cells=7).fit(_data())
    ad = _data()
    ad = ad[ad.obs["compound"] != "control"].copy()
    with pytest.raises(InvalidInputError, match="no control cells.*'control'"):
        GIM(**TINY).fit(ad)
    with pytest.raises(InvalidInputError, match="no cells"):
        GIM(**TINY).fit(_data()[:0].copy())


def test_singular_covariance_names_the_gene():
    ad = _data()
    ad.X[:, 2] = 1.5
    with pytest.raises(InvalidInputError, match=r"singular covariance: feature\(s\) \['g2'\]"):
        GIM(**TINY).fit(ad)


def test_feature_dimension_mismatch_between_train_and_predict(run_dir):
    model = GIM.load(run_dir / "run")
    good = model.example_condition(_data())[0]
    assert model.sample(good, n_samples=3).n_obs == 3
    with pytest.raises(InvalidInputError, match="conditions has 3 feature column"):
        model.sample(good.iloc[:, :4], n_samples=3)
    other = synthetic_screen(5, n_functions=3, n_ood_functions=1, cells=6, n_control=30, seed=0)
    with pytest.raises(InvalidInputError, match="features"):
        model.evaluate(other)
    with pytest.raises(InvalidInputError, match="intervention must be one of"):
        model.sample(good, n_samples=3, intervention="mean")
    with pytest.raises(InvalidInputError, match="no dose column 'dose'"):
        model.sample(good.drop(columns="dose"), n_samples=3)


def test_features_that_vary_within_a_perturbation_are_refused():
    ad = _data()
    ad.obsm["perturbation_features"][40, 0] += 1.0
    with pytest.raises(InvalidInputError, match="differs between cells of perturbation 'f00'"):
        GIM(**TINY).fit(ad)


def test_cli_predict_errors(run_dir, tmp_path):
    res = cli("singlecell", "gim", "generate", "--run", str(run_dir / "run"), "--conditions",
              str(tmp_path / "none.csv"), "--out", str(tmp_path / "p.h5ad"))
    assert_one_line_error(res, "none.csv", "no such file")
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"dose": ["x"]}, index=["f00"]).to_csv(bad)
    res = cli("singlecell", "gim", "generate", "--run", str(run_dir / "run"), "--conditions", str(bad),
              "--out", str(tmp_path / "p.h5ad"))
    assert_one_line_error(res, "dose", "'x'")
    good = tmp_path / "good.csv"
    GIM.load(run_dir / "run").example_condition(_data())[0].to_csv(good)
    res = cli("singlecell", "gim", "generate", "--run", str(run_dir / "run"), "--conditions", str(good),
              "--out", str(tmp_path / "p.h5ad"), "--n-samples", "5")
    assert res.exit_code == 0, res.output
    import anndata

    pred = anndata.read_h5ad(tmp_path / "p.h5ad")
    assert pred.n_obs == 5 and pred.uns["gim"]["mode"] == "map"
    old = cli("singlecell", "gim", "predict", "--run", str(run_dir / "run"), "--conditions", str(good),
              "--out", str(tmp_path / "old.h5ad"), "--n-cells", "4", "--mode", "mixture")  # the names before issue 32
    assert old.exit_code == 0, old.output
    assert "'predict' is deprecated" in old.output and "use 'generate'" in old.output
    assert "--n-cells is deprecated" in old.output and "use --n-samples" in old.output
    assert "--mode is deprecated" in old.output and "use --intervention" in old.output
    old_pred = anndata.read_h5ad(tmp_path / "old.h5ad")
    assert old_pred.n_obs == 4 and old_pred.uns["gim"]["mode"] == "mixture"
    res = cli("singlecell", "gim", "generate", "--run", str(run_dir / "run"), "--conditions", str(good),
              "--out", str(tmp_path / "p.h5ad"))
    assert_one_line_error(res, "already exists")
    write_h5ad(_data(), tmp_path / "cells.h5ad")
    res = cli("singlecell", "gim", "evaluate", "--run", str(run_dir / "run"), "--data", str(tmp_path / "cells.h5ad"))
    assert res.exit_code == 0 and "target_AUROC" in res.output, res.output
