"""cell-eval on GIM's predictions: its per-perturbation ``mse`` and ``pearson_delta`` against their closed forms on
the same AnnData, its ``mse`` against our ``R2_means`` (both from the mean profiles), and data it cannot read."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import pearsonr

from scigen.core.errors import InvalidInputError
from scigen.singlecell.gim.metrics import r2_means
from scigen.singlecell.gim.synthetic import synthetic_screen
from scigen.singlecell.gim.system import GIM

pytest.importorskip("cell_eval")

FAST = {"width": 16, "depth": 1, "train": {"max_steps": 3, "batch_size": 8, "progress": False, "logger": None}}


def _expression_screen(k=4, n_genes=15, seed=0):
    """The synthetic screen's k variables embedded linearly in n_genes around gene means 12-14, so that every
    value is >= 0 as cell-eval requires of (log-normalised) expression; PCA of rank k as GIM's representation."""
    import anndata
    import scanpy as sc

    ad = synthetic_screen(k, n_functions=6, n_ood_functions=2, cells=20, n_control=200, seed=seed)
    rng = np.random.default_rng(seed)
    genes = np.asarray(ad.X, np.float64) @ (0.3 * rng.standard_normal((k, n_genes))) + rng.uniform(12, 14, n_genes)
    g = anndata.AnnData(X=genes, obs=ad.obs.copy(), obsm={"perturbation_features": ad.obsm["perturbation_features"]})
    g.var_names = [f"gene{j}" for j in range(n_genes)]
    sc.pp.pca(g, n_comps=k, svd_solver="full")
    assert genes.min() >= 0
    return g


@pytest.fixture(scope="module")
def fitted():
    g = _expression_screen()
    return GIM(**FAST, use_rep="X_pca").fit(g), g


def test_cell_eval_equals_closed_forms_and_our_r2_of_the_means(fitted):
    from scigen.singlecell.gim.celleval import cell_eval_inputs, cell_eval_scores

    model, g = fitted
    pred, real = cell_eval_inputs(model, g, n_samples=30, seed=1)
    scores, table = cell_eval_scores(model, g, n_samples=30, seed=1, per_perturbation=True)
    ctrl = real.X[real.obs["target"].to_numpy() == "control"].astype(np.float64).mean(0)
    rows = {r["perturbation"]: r for r in table.iter_rows(named=True)}
    held = (g.obs["split"] != "train") & (g.obs["compound"] != "control")
    assert set(rows) == {f"{p}@{d:g}" for p, d in zip(g.obs["compound"][held], g.obs["dose"][held], strict=True)}
    for label, r in rows.items():
        xp = pred.X[pred.obs["target"].to_numpy() == label].astype(np.float64)
        xr = real.X[real.obs["target"].to_numpy() == label].astype(np.float64)
        mp, mr = xp.mean(0), xr.mean(0)
        assert len(xp) == 30
        assert r["mse"] == pytest.approx(np.mean((mp - mr) ** 2), rel=1e-4)
        assert r["pearson_delta"] == pytest.approx(pearsonr(mp - ctrl, mr - ctrl).statistic, rel=1e-4, abs=1e-5)
        # our R2_means (gene space) from cell-eval's mse: 1 - d·mse / Σ_j (m_j - m̄)²
        assert r2_means(xr, xp) == pytest.approx(1 - len(mr) * r["mse"] / np.sum((mr - mr.mean()) ** 2), rel=1e-3)
    assert scores["cell_eval/mse"] == pytest.approx(np.mean([r["mse"] for r in rows.values()]), rel=1e-6)
    assert 0 <= scores["cell_eval/discrimination_score_l1"] <= 1


def test_evaluate_reports_cell_eval_beside_ours_and_refuses_negative_data(fitted):
    model, g = fitted
    scores = model.evaluate(g, n_samples=20, seed=0)
    assert {"W2", "R2_means", "cell_eval/mse", "cell_eval/pearson_delta"} <= set(scores)
    assert not any(k.startswith("cell_eval/") for k in model.evaluate(g, n_samples=20, seed=0, cell_eval=False))
    raw = synthetic_screen(4, n_functions=6, n_ood_functions=2, cells=20, n_control=200, seed=0)  # standardised SCM
    m2 = GIM(**FAST).fit(raw)
    assert not any(k.startswith("cell_eval/") for k in m2.evaluate(raw, n_samples=10, seed=0))  # skipped by default
    with pytest.raises(InvalidInputError, match="all values >= 0"):
        m2.evaluate(raw, n_samples=10, seed=0, cell_eval=True)
