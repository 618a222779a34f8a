"""AnnData in/out, bad inputs, offline data, preprocessing inverse."""

import anndata
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from scigen.core.errors import InvalidInputError
from scigen.singlecell.data import (
    gaussian_checkerboard_moons,
    krumsiek11_time_course,
    s_gaussians,
    synthetic,
)
from scigen.singlecell.data.synthetic import S_MEANS
from scigen.singlecell.io import read_snapshots, to_anndata, write_h5ad
from scigen.singlecell.preprocess import pca_to_genes, preprocess


def _toy(n=20, times=(2.0, 3.0, 7.0), d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.poisson(2.0, (n * len(times), d)).astype(np.float32)
    obs = pd.DataFrame({"day": np.repeat(times, n), "donor": ["a", "b"] * (n * len(times) // 2)},
                       index=[f"c{i}" for i in range(n * len(times))])
    ad = anndata.AnnData(X=X, obs=obs, var=pd.DataFrame(index=[f"g{i}" for i in range(d)]))
    ad.layers["counts"] = sp.csr_matrix(X)
    ad.obsm["X_emb"] = X[:, :2] * 2
    return ad


@pytest.mark.parametrize("rep,expect", [({}, lambda a: a.X), ({"use_rep": "X"}, lambda a: a.X),
                                        ({"layer": "counts"}, lambda a: a.layers["counts"].toarray()),
                                        ({"use_rep": "X_emb"}, lambda a: a.obsm["X_emb"])])
def test_read_snapshots_representations_without_mutation(rep, expect):
    ad = _toy()
    before = ad.copy()
    s = read_snapshots(ad, "day", **rep)
    assert s.times == [2.0, 3.0, 7.0]
    full = expect(ad)
    for t, x, names in zip(s.times, s.data, s.obs_names, strict=True):
        rows = np.flatnonzero(ad.obs["day"].to_numpy() == t)
        np.testing.assert_array_equal(x.numpy(), full[rows])
        assert names == list(ad.obs_names[rows])
    assert s.features == (["X_emb_0", "X_emb_1"] if rep.get("use_rep") == "X_emb" else list(ad.var_names))
    assert (s.layer, s.use_rep) == (rep.get("layer"), None if rep.get("use_rep") == "X" else rep.get("use_rep"))
    np.testing.assert_array_equal(ad.X, before.X)
    assert list(ad.obs.columns) == list(before.obs.columns) and set(ad.obsm) == set(before.obsm)


def test_sparse_x_and_backed_file(tmp_path):
    ad = _toy()
    ad.X = sp.csr_matrix(ad.X)
    dense = read_snapshots(_toy(), "day", "X")
    s = read_snapshots(ad, "day", "X")
    path = tmp_path / "cells.h5ad"
    write_h5ad(ad, path)
    backed = anndata.read_h5ad(path, backed="r")
    b = read_snapshots(backed, "day", "X")
    for x, y, z in zip(dense.data, s.data, b.data, strict=True):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
        np.testing.assert_array_equal(x.numpy(), z.numpy())
    s2 = read_snapshots(ad, "day", "X", condition={"donor": "a"})
    assert sum(len(x) for x in s2.data) == ad.n_obs // 2


def test_to_anndata_round_trip_names_and_provenance():
    feats = ["g0", "g1"]
    out = to_anndata(np.ones((3, 2)), obs={"day": [1.0, 2.0, 3.0]}, use_rep="X", features=feats,
                     provenance={"system": "singlecell/mmsfm", "x": np.float32(1.5)}, uns_key="mmsfm")
    assert list(out.var_names) == feats and list(out.obs["day"]) == [1.0, 2.0, 3.0]
    assert out.uns["mmsfm"] == {"system": "singlecell/mmsfm", "x": 1.5}
    emb = to_anndata(np.ones((3, 2)), obs={"day": [1, 2, 3]}, use_rep="X_pca", features=["a", "b"],
                     provenance={}, uns_key="mmsfm")
    assert emb.obsm["X_pca"].shape == (3, 2) and emb.n_vars == 0
    lay = to_anndata(np.full((3, 2), 2.0), obs={"day": [1, 2, 3]}, use_rep=None, layer="counts", features=feats,
                     provenance={}, uns_key="mmsfm")
    np.testing.assert_array_equal(lay.layers["counts"], np.full((3, 2), 2.0))
    assert list(lay.var_names) == feats


def test_bad_inputs_name_the_key_or_time():
    ad = _toy()
    with pytest.raises(KeyError, match="'hour'"):
        read_snapshots(ad, "hour", "X")
    with pytest.raises(KeyError, match="X_umap"):
        read_snapshots(ad, "day", "X_umap")
    with pytest.raises(InvalidInputError, match=r"layer='spliced' is not in adata.layers \(layers: \['counts'\]"):
        read_snapshots(ad, "day", layer="spliced")
    with pytest.raises(InvalidInputError, match="not an obsm key.*pass layer='counts'"):
        read_snapshots(ad, "day", "counts")  # scanpy's use_rep never names a layer
    with pytest.raises(InvalidInputError, match="layer='counts'.*as scanpy"):
        read_snapshots(ad, "day", "layer:counts")  # the old spelling points at the new one
    with pytest.raises(InvalidInputError, match="not both"):
        read_snapshots(ad, "day", "X_emb", layer="counts")
    with pytest.raises(InvalidInputError, match="at least 2"):
        read_snapshots(ad[ad.obs["day"] == 2.0], "day", "X")
    bad = ad.copy()
    bad.obs["day"] = ["d2"] * bad.n_obs
    with pytest.raises(InvalidInputError, match="numeric.*'d2'"):
        read_snapshots(bad, "day", "X")
    bad.obs["day"] = np.where(np.arange(bad.n_obs) == 3, np.nan, 2.0)
    with pytest.raises(InvalidInputError, match="NaN"):
        read_snapshots(bad, "day", "X")
    with pytest.raises(InvalidInputError, match="day=2 has 20 cell"):
        read_snapshots(ad, "day", "X", min_cells=64)
    with pytest.raises(TypeError, match="AnnData"):
        read_snapshots(np.zeros((3, 3)), "day", "X")


def test_synthetic_marginals_match_their_laws():
    ad = s_gaussians(4000, seed=3)
    X = ad.X.astype(np.float64)
    for i, mu in enumerate(S_MEANS):
        x = X[ad.obs["marginal"].to_numpy() == i]
        np.testing.assert_allclose(x.mean(0), mu, atol=0.05)
        np.testing.assert_allclose(x.var(0), 0.5, rtol=0.08)
    np.testing.assert_array_equal(s_gaussians(10, seed=1).X, s_gaussians(10, seed=1).X)
    gcm = gaussian_checkerboard_moons(2000, times=(0, 1, 5))
    assert sorted(set(gcm.obs["time"])) == [0.0, 1.0, 5.0]
    board = gcm.X[gcm.obs["marginal"].to_numpy() == 1]
    assert np.all((np.floor(board[:, 0]) + np.floor(board[:, 1])) % 2 == 0)  # only one colour of the board
    with pytest.raises(InvalidInputError, match="unknown synthetic"):
        synthetic("spiral")
    with pytest.raises(InvalidInputError, match="strictly increasing"):
        s_gaussians(10, times=[0, 1, 1, 2, 3, 4, 5])


def test_krumsiek11_is_binned_to_irregular_times():
    ad = krumsiek11_time_course((0.0, 20.0, 70.0), half_width=3)
    assert sorted(set(ad.obs["time"])) == [0.0, 20.0, 70.0]
    assert np.all(np.abs(ad.obs["sim_step"] - ad.obs["time"]) <= 3) and ad.n_vars == 11


def test_pca_inverse_is_the_orthogonal_projection():
    rng = np.random.default_rng(0)
    ad = anndata.AnnData(sp.csr_matrix(rng.poisson(1.0, (60, 30)).astype(np.float32)))
    before = ad.X.copy()
    pp = preprocess(ad, n_top_genes=20, n_comps=5)
    assert (ad.X != before).nnz == 0 and ad.n_vars == 30  # input untouched
    Xl = pp.X.toarray() if sp.issparse(pp.X) else np.asarray(pp.X)
    m = Xl.mean(0)
    _, _, vt = np.linalg.svd(Xl - m, full_matrices=False)
    proj = (Xl - m) @ vt[:5].T @ vt[:5] + m
    np.testing.assert_allclose(pca_to_genes(pp.obsm["X_pca"], pp), proj, atol=1e-5)
    np.testing.assert_allclose(pca_to_genes(pp.obsm["X_pca"], pp, to="normalized"), np.clip(np.expm1(proj), 0, None),
                               rtol=1e-5, atol=1e-4)
    with pytest.raises(InvalidInputError, match=r"\[n, 5\]"):
        pca_to_genes(np.zeros((2, 3)), pp)
