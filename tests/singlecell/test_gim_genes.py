"""GIM's PCA → gene-space inverse (scigen.singlecell.gim.genes) against the closed form: cells of an
exactly rank-k expression matrix come back exactly from scanpy's PCA coordinates, and GIM's predicted
AnnData carries ``X = obsm["X_pca"] Vᵀ + μ`` with the genes as var_names."""

from __future__ import annotations

import numpy as np
import pytest

from scigen.core.errors import InvalidInputError
from scigen.singlecell.gim.genes import pca_inverse, pca_inverse_params
from scigen.singlecell.gim.synthetic import synthetic_screen
from scigen.singlecell.gim.system import GIM

FAST = {"width": 16, "depth": 1, "train": {"max_steps": 3, "batch_size": 8, "progress": False, "logger": None}}


def _gene_screen(k=4, n_genes=15, seed=0):
    """The synthetic screen's k variables embedded linearly in n_genes (exact rank k) + a gene mean."""
    import anndata
    import scanpy as sc

    ad = synthetic_screen(k, n_functions=6, n_ood_functions=2, cells=20, n_control=200, seed=seed)
    rng = np.random.default_rng(seed)
    load = rng.standard_normal((k, n_genes))
    genes = np.asarray(ad.X, np.float64) @ load + rng.uniform(1, 3, n_genes)
    g = anndata.AnnData(X=genes, obs=ad.obs.copy(), obsm={"perturbation_features": ad.obsm["perturbation_features"]})
    g.var_names = [f"gene{j}" for j in range(n_genes)]
    sc.pp.pca(g, n_comps=k, svd_solver="full")
    return g


def test_pca_round_trip_is_exact_on_a_rank_k_matrix():
    g = _gene_screen()
    params = pca_inverse_params(g, "X_pca")
    np.testing.assert_allclose(pca_inverse(g.obsm["X_pca"], params), g.X, atol=1e-8 * np.abs(g.X).max() + 1e-6)
    assert params["genes"] == list(g.var_names)
    assert pca_inverse_params(g, None) is None


def test_gim_predictions_in_pca_space_come_back_in_gene_space():
    g = _gene_screen()
    model = GIM(**FAST, use_rep="X_pca").fit(g)
    pred = model.sample(model.example_condition(g)[0], n_samples=6, seed=1)
    z = np.asarray(pred.obsm["X_pca"], np.float64)
    v = np.asarray(g.varm["PCs"], np.float64)
    expect = z @ v.T + np.asarray(g.X, np.float64).mean(0)
    assert list(pred.var_names) == list(g.var_names)
    np.testing.assert_allclose(np.asarray(pred.X, np.float64), expect, rtol=1e-4, atol=1e-4)


def test_pca_loadings_that_do_not_match_the_coordinates_are_refused():
    g = _gene_screen()
    g.obsm["X_pca"] = g.obsm["X_pca"][:, :3]
    with pytest.raises(InvalidInputError, match=r"varm\['PCs'\]"):
        pca_inverse_params(g, "X_pca")
    with pytest.raises(InvalidInputError, match="PCA coordinates"):
        pca_inverse(np.zeros((2, 5)), pca_inverse_params(_gene_screen(), "X_pca"))
