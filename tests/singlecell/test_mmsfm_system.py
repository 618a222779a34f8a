"""MMSFM end to end: learnability on Gaussian marginals (observed and held out), round trips, the AnnData
keys as scanpy spells them, bad inputs, plots, demo."""

import anndata
import numpy as np
import pandas as pd
import pytest
import torch

from scigen.core.errors import InvalidInputError, NotTrainedError
from scigen.core.metrics import w2
from scigen.singlecell import MMSFM
from scigen.singlecell.io import read_rep

TIMES = (0.0, 1.0, 2.0, 4.0)


def mean_at(t):
    return np.array([2.0 * t, np.sin(t)])


def gaussians(n, seed):
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(mean_at(t), 0.5, (n, 2)) for t in TIMES]).astype(np.float32)
    obs = pd.DataFrame({"day": np.repeat(TIMES, n)}, index=[f"c{i}" for i in range(len(X))])
    return anndata.AnnData(X=X, obs=obs, var=pd.DataFrame(index=["gene_a", "gene_b"]))


@pytest.fixture(scope="module")
def trained():
    ad = gaussians(200, 0)
    before = ad.copy()
    model = MMSFM(k=2, sigma=0.1, time_key="day", train={"batch_size": 64, "max_steps": 400}).fit(ad, holdout=[2.0])
    return model, ad, before


def test_learned_marginals_are_close_in_w2(trained):
    model, _, _ = trained
    truth = gaussians(300, 1)
    untrained = MMSFM(k=2, sigma=0.1, time_key="day").fit(gaussians(200, 0), holdout=[2.0], max_steps=1)
    for t in (2.0, 4.0):  # held out, observed
        x_true = torch.as_tensor(truth.X[truth.obs["day"].to_numpy() == t], dtype=torch.float64)
        gen = model.sample(300, times=[t], seed=0)
        d = float(w2(torch.as_tensor(gen.X, dtype=torch.float64), x_true))
        d0 = float(w2(torch.as_tensor(untrained.sample(300, times=[t]).X, dtype=torch.float64), x_true))
        shift = float(np.linalg.norm(mean_at(t) - mean_at(0.0)))  # W2 of not moving at all
        assert d < 0.25 * shift and d < 0.5 * d0, (t, d, d0, shift)
    scores = model.evaluate(truth)
    assert set(scores) >= {"W1@2", "W2_squared@2", "MMD_G@2", "MMD_M@2", "energy@2", "W1"}
    assert scores["W2_squared@2"] >= 0 and scores["W1@2"] < 0.25 * 4


def test_fit_does_not_touch_input_and_sample_is_annotated(trained):
    model, ad, before = trained
    np.testing.assert_array_equal(ad.X, before.X)
    assert list(ad.obs.columns) == ["day"] and list(ad.obs_names) == list(before.obs_names)
    out = model.sample(5, times=[4.0, 0.0, 1.5, 6.0], method="rk4")
    assert out.n_obs == 20 and list(out.var_names) == ["gene_a", "gene_b"]
    assert sorted(set(out.obs["day"])) == [0.0, 1.5, 4.0, 6.0]
    assert set(out.obs["mmsfm_traj_id"]) == set(range(5))
    assert out.uns["mmsfm"]["system"] == "singlecell/mmsfm" and out.uns["mmsfm"]["holdout_times"] == [2.0]
    first = out.X[out.obs["day"].to_numpy() == 0.0]
    src = read_rep(ad[ad.obs["day"] == 0.0], "X")
    assert all(np.any(np.all(np.isclose(src, row, atol=1e-5), axis=1)) for row in first)  # starts at real cells


def test_ode_methods_agree_and_sde_runs(trained):
    model, _, _ = trained
    a = model.sample(50, times=[1.0, 4.0], method="dopri5").X
    b = model.sample(50, times=[1.0, 4.0], method="rk4").X
    np.testing.assert_allclose(a, b, atol=1e-2)  # rk4 (100 steps) vs dopri5 (tol 1e-5)
    coarse = model.sample(50, times=[1.0, 4.0], method="euler", steps=5).X
    fine = model.sample(50, times=[1.0, 4.0], method="euler", steps=400).X
    assert np.abs(fine - a).max() < np.abs(coarse - a).max()  # Euler converges to the adaptive solution
    c = model.sample(50, times=[1.0, 4.0], method="euler_maruyama", seed=1).X
    assert np.isfinite(c).all() and not np.allclose(a, c)
    np.testing.assert_array_equal(c, model.sample(50, times=[1.0, 4.0], method="euler_maruyama", seed=1).X)
    with pytest.raises(InvalidInputError, match="now called 'euler_maruyama'"):
        model.sample(5, method="sde")


def test_fit_never_changes_the_config_and_reads_scanpy_keys():
    ad = gaussians(40, 0)
    ad.layers["counts"] = ad.X * 3.0
    ad.obsm["X_emb"] = ad.X[:, ::-1] + 1.0
    model = MMSFM(k=1, train={"batch_size": 16})
    before = model.config.model_dump()
    model.fit(ad, time_key="day", layer="counts", holdout=[2.0], max_steps=2)
    assert model.config.model_dump() == before
    assert model.metadata["layer"] == "counts" and model.metadata["holdout_times"] == [2.0]
    gen = model.sample(4, times=[1.0], seed=0)
    assert gen.layers["counts"].shape == (4, 2) and gen.uns["mmsfm"]["layer"] == "counts"
    np.testing.assert_array_equal(np.asarray(gen.X), gen.layers["counts"])
    src = read_rep(ad[ad.obs["day"] == 0.0], layer="counts")
    first = model.sample(4, times=[0.0], seed=0).layers["counts"]
    assert all(np.any(np.all(np.isclose(src, row, atol=1e-4), axis=1)) for row in first)  # from the layer's cells
    emb = MMSFM(k=1, train={"batch_size": 16}).fit(ad, time_key="day", use_rep="X_emb", max_steps=2)
    assert emb.sample(3, times=[4.0]).obsm["X_emb"].shape == (3, 2)
    with pytest.raises(InvalidInputError, match="layer='counts'"):
        MMSFM(k=1).fit(ad, time_key="day", use_rep="layer:counts", max_steps=1)
    with pytest.raises(InvalidInputError, match="not both"):
        MMSFM(layer="counts", use_rep="X_emb")


def test_save_load_sample_round_trip(trained, tmp_path):
    model, _, _ = trained
    model.save(tmp_path / "run")
    back = MMSFM.load(tmp_path / "run", device="cpu")
    np.testing.assert_allclose(back.sample(20, times=[2.0]).X, model.sample(20, times=[2.0]).X, atol=1e-6)
    assert back.history.steps == model.history.steps == 400 and back.history.final_loss == model.history.final_loss
    assert all(v.device == back.device for v in back.buffers.values())
    path = back.write_samples(back.sample_for_cli(10, 0), tmp_path / "gen.h5ad")
    assert anndata.read_h5ad(path).n_obs == 10 * len(TIMES)


def test_bad_inputs(trained):
    model, ad, _ = trained
    with pytest.raises(InvalidInputError, match="2 features.*expects 3|3 features"):
        model.evaluate(anndata.AnnData(np.zeros((8, 3), np.float32), obs=pd.DataFrame({"day": [0.0, 1.0] * 4})))
    with pytest.raises(InvalidInputError, match=r"\[n, 2\]"):
        model.sample(5, source=np.zeros((5, 3)))
    with pytest.raises(InvalidInputError, match=">= the first observed time 0"):
        model.sample(5, times=[-1.0])
    with pytest.raises(InvalidInputError, match="first time point"):
        MMSFM(time_key="day").fit(ad, holdout=[0.0], max_steps=1)
    with pytest.raises(KeyError, match="not an observed time"):
        MMSFM(time_key="day").fit(ad, holdout=[3.0], max_steps=1)
    with pytest.raises(InvalidInputError, match="k=3 needs at least 4 training time points"):
        MMSFM(time_key="day", k=3).fit(ad, holdout=[2.0], max_steps=1)
    with pytest.raises(InvalidInputError, match="fewer than the 500 needed"):
        MMSFM(time_key="day", train={"batch_size": 500}).fit(ad, max_steps=1)
    with pytest.raises(InvalidInputError, match="fewer than the 300 needed"):
        MMSFM(time_key="day").fit(ad, max_steps=1, batch_size=300)  # a per-call option counts too
    with pytest.raises(NotTrainedError, match="untrained"):
        MMSFM().sample(3)
    with pytest.raises(InvalidInputError, match="n_samples"):
        model.sample(0)
    with pytest.raises(InvalidInputError, match="val_data"):
        MMSFM(time_key="day").fit(ad, val_data=ad, max_steps=1)
    with pytest.raises(InvalidInputError, match="MMSFMConfig.spline"):
        MMSFM(spline="quadratic")


def test_demo_quick(tmp_path):
    res = MMSFM.demo(tmp_path, quick=True)
    assert (tmp_path / "report.json").is_file() and (tmp_path / "trajectories.png").is_file()
    # the held-out t=2 mean is 4 away from both observed neighbours; the last mean is 12 from the start
    assert res.metrics["W1@2"] < 3.0 and res.metrics["W1@6"] < 3.0
    assert {"baseline_W1@2", "baseline_W2_squared@2"} <= set(res.metrics)


def test_pca_representation_samples_come_back_in_gene_space():
    from scigen.singlecell.preprocess import pca_to_genes, preprocess

    base = gaussians(80, 0)
    X = np.abs(np.concatenate([base.X, base.X**2, base.X + 3], 1))  # 6 non-negative "genes"
    ad = anndata.AnnData(X=X, obs=base.obs.copy(), var=pd.DataFrame(index=[f"g{i}" for i in range(6)]))
    pp = preprocess(ad, n_top_genes=None, n_comps=3, target_sum=None, log=False)
    model = MMSFM(k=2, time_key="day", use_rep="X_pca", train={"batch_size": 32}).fit(pp, max_steps=2)
    gen = model.sample(7, times=[1.0, 4.0])
    assert gen.obsm["X_pca"].shape == (14, 3) and list(gen.var_names) == list(pp.var_names)
    np.testing.assert_allclose(np.asarray(gen.X), pca_to_genes(gen.obsm["X_pca"], pp), atol=1e-5)


def test_plot_draws_into_a_given_axis_without_touching_the_backend(trained, tmp_path):
    import matplotlib
    import matplotlib.pyplot as plt

    from scigen.singlecell.mmsfm.plot import plot_trajectories

    model, ad, _ = trained
    backend = matplotlib.get_backend()
    fig, (left, right) = plt.subplots(1, 2)
    out = plot_trajectories(model.sample(5, times=[0.0, 2.0, 4.0]), ad, ax=right, time_key="day")
    assert out is fig and len(right.lines) == 5 and not left.lines
    assert matplotlib.get_backend() == backend and not list(tmp_path.iterdir())  # no path: nothing saved
    plot_trajectories(model.sample(3, times=[0.0, 4.0]), ad, tmp_path / "t.png", time_key="day")
    assert (tmp_path / "t.png").is_file()
    plt.close("all")


def test_presets_validate():
    from scigen.singlecell.mmsfm.config import MMSFMConfig

    assert MMSFMConfig.presets() == ["paper", "small", "tiny"]
    paper = MMSFMConfig.preset("paper")
    assert (paper.width, paper.depth, paper.train.lr, paper.train.batch_size) == (64, 2, 1e-4, 64)
    assert MMSFMConfig.preset("tiny", k=1).train.max_steps == 600


def test_rows_coupling_is_an_independent_coupling_of_the_index_tables_rows():
    """``coupling="rows"`` (what ``fit(rng="per_sample")`` uses for ``"independent"``) keeps row ``i`` of every
    minibatch as one trajectory; it is an independent coupling because fit's index table pairs independently
    permuted columns: the cells (a, b) of marginals 0 and 1 on a row are uniform on the n0·n1 pairs over seeds."""
    from scigen.singlecell.mmsfm.objective import couple_windows
    from scigen.singlecell.mmsfm.state import index_table

    xs = [torch.randn(5, 2) for _ in range(3)]
    traj, knots = couple_windows(xs, torch.tensor([0.0, 0.5, 1.0]), 1, coupling="rows")
    torch.testing.assert_close(traj, torch.cat([torch.stack(xs[:2], 1), torch.stack(xs[1:], 1)]), rtol=0, atol=0)
    torch.testing.assert_close(knots[:5], torch.tensor([[0.0, 0.5]]).expand(5, 2))
    with pytest.raises(InvalidInputError, match="one size"):
        couple_windows([xs[0], xs[1][:3]], torch.tensor([0.0, 1.0]), 1, coupling="rows")
    with pytest.raises(InvalidInputError, match="coupling"):
        couple_windows(xs, torch.tensor([0.0, 0.5, 1.0]), 1, coupling="nope")
    n = 4000
    counts = torch.zeros(3, 4)
    for seed in range(n):
        a, b = index_table([3, 4], seed)[0]
        counts[a, b] += 1
    p = 1 / 12
    assert torch.all((counts / n - p).abs() < 4 * (p * (1 - p) / n) ** 0.5)
