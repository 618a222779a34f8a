"""GIM on sci-Plex3 through the catalog loader, on a small scPerturb-layout .h5ad written here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import anndata
import numpy as np
import pandas as pd

from scigen.singlecell.data import load_sciplex3
from scigen.singlecell.gim.sciplex import GIM_SCIPLEX_SETTINGS, prepare_sciplex
from scigen.singlecell.gim.system import GIM

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "singlecell" / "bench_gim.py"


def _write_small_sciplex(tmp_path):
    """A 180-cell scPerturb-layout file: SAHA shifts the first three genes with log dose, Dex does nothing."""
    rng = np.random.default_rng(0)
    rows = [("control", np.nan)] * 60 + [(c, d) for c in ("Dex", "SAHA") for d in (0.01, 0.1, 1.0, 10.0)
                                         for _ in range(15)]
    base = rng.gamma(2.0, 2.0, size=12)
    x = np.stack([rng.poisson(base * (1 + (3 * (c == "SAHA") * np.log10(1 + 1000 * (0.0 if c == "control" else d)) * (np.arange(12) < 3))))
                  for c, d in rows]).astype(np.float32)
    obs = pd.DataFrame({"perturbation": [r[0] for r in rows], "dose_value": [r[1] for r in rows],
                        "dose_unit": ["uM" if r[0] != "control" else np.nan for r in rows],
                        "cell_line": "A549"}, index=[f"c{i}" for i in range(len(rows))])
    anndata.AnnData(X=x, obs=obs, var=pd.DataFrame(index=[f"G{i}" for i in range(12)])).write_h5ad(tmp_path / "s.h5ad")
    return rows


def test_gim_trains_on_sciplex_and_predicts_a_held_out_dose(tmp_path):
    rows = _write_small_sciplex(tmp_path)
    ad = prepare_sciplex(load_sciplex3(tmp_path / "s.h5ad"), n_comps=4, holdout_doses_nM=[1000.0])
    assert set(ad.obs["split"]) == {"train", "heldout_dose"} and ad.obsm["X_pca"].shape == (len(rows), 4)
    model = GIM(**GIM_SCIPLEX_SETTINGS, width=8, train={"max_steps": 20, "progress": False, "logger": None}).fit(ad)
    assert model.metadata["onehot"] == ["Dex", "SAHA"] and 1000.0 not in model.metadata["context_doses"]
    scores = model.evaluate(ad)
    assert np.isfinite(scores["W2@heldout_dose"]) and "target_AUROC" not in scores
    pred = model.sample(pd.DataFrame({"dose_nM": [1000.0]}, index=["SAHA"]), n_samples=10)
    assert pred.obsm["X_pca"].shape == (10, 4) and list(pred.obs["gim_compound"]) == ["SAHA"] * 10


def test_benchmark_scores_gim_and_the_baseline_on_the_held_out_sciplex_dose(tmp_path):
    _write_small_sciplex(tmp_path)
    spec = importlib.util.spec_from_file_location("bench_gim", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    res = bench.run_sciplex(20, 0, tmp_path / "s.h5ad", n_comps=4)
    assert set(res) == {"gim-mc (map)", "gim-mc (mixture)", "cond-gaussian"}
    for row in res.values():
        assert all(np.isfinite(row[f"{m}@heldout_dose"]) for m in ("MMD", "energy", "W2", "R2_means"))
    md = bench.sciplex_table(res, 20)
    assert md.count("\n| ") == 4  # header + three rows
