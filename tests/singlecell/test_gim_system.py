"""GIM as a system: the synthetic screen, graph recovery with known interventions, AnnData round trip,
both backends and priors, learnability against an untrained model and (slow) against the baselines."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from scigen.core.train import fit as core_fit
from scigen.singlecell.gim.baselines import ConditionalGaussian
from scigen.singlecell.gim.metrics import auroc, score_contexts
from scigen.singlecell.gim.model import CausalModel
from scigen.singlecell.gim.scm import gaussian_loglik, notears_h, shd
from scigen.singlecell.gim.synthetic import OOD_PARTIAL_DOSES, TRAIN_DOSES, hill, synthetic_screen
from scigen.singlecell.gim.system import GIM
from scigen.singlecell.io import read_h5ad_file, write_h5ad

FAST = {"width": 16, "depth": 1, "train": {"max_steps": 3, "batch_size": 8, "progress": False, "logger": None}}


def _small(seed=0):
    return synthetic_screen(6, n_functions=6, n_ood_functions=2, cells=20, n_control=200, seed=seed)


def test_synthetic_screen_has_the_papers_split_sizes_and_is_seeded():
    ad = synthetic_screen(10, seed=3)
    obs = ad.obs
    ctx = obs.groupby(["split", "compound", "dose"], observed=True).size()
    assert (obs["compound"] == "control").sum() == 800
    assert len(ctx["train"]) == 1 + 40 * 4 and set(ctx["train"].drop("control", level=0)) == {50}
    assert len(ctx["ood_partial"]) == 40 * 5 and len(ctx["ood_full"]) == 20 * 4
    assert sorted(obs.loc[obs["split"] == "ood_partial", "dose"].unique()) == list(OOD_PARTIAL_DOSES)
    assert sorted(obs.loc[obs["split"] == "ood_full", "dose"].unique()) == list(TRAIN_DOSES)
    truth = ad.uns["gim_truth"]
    assert notears_h(torch.as_tensor(truth["W"])).item() == pytest.approx(0, abs=1e-12)
    assert set(truth["targets"].sum(1)) <= {1.0, 2.0}
    again = synthetic_screen(10, seed=3)
    assert np.array_equal(ad.X, again.X) and not np.array_equal(ad.X, synthetic_screen(10, seed=4).X)
    # the shift of a target at dose c is its Hill response: the context mean minus the control mean
    f, c = 0, 2.0
    tgt = np.flatnonzero(truth["targets"][f])
    src = [j for j in tgt if not np.abs(truth["W"][:, j]).any()]  # a root target: its shift is exact
    if src:
        j = src[0]
        cells = ad.X[(obs["compound"] == "f00").to_numpy() & (obs["dose"] == c).to_numpy(), j]
        ctrl = ad.X[(obs["compound"] == "control").to_numpy(), j]
        expect = hill(c, truth["emax"][f, j], truth["ec50"][f], truth["hill_n"][f])
        assert cells.mean() - ctrl.mean() == pytest.approx(expect, abs=4 * truth["noise_scale"][j] / np.sqrt(50))


def test_scm_recovers_the_graph_with_known_targets_and_parameters():
    """Exact likelihood + NOTEARS penalty with the true interventions given: the graph comes back."""
    ad = synthetic_screen(6, n_functions=20, n_ood_functions=1, cells=50, n_control=800, expected_degree=1.0, seed=1)
    truth = ad.uns["gim_truth"]
    tr = ad[ad.obs["split"] == "train"]
    keys = list(dict.fromkeys(zip(tr.obs["compound"], tr.obs["dose"], strict=True)))
    stats, shifts = [], []
    for comp, c in keys:
        x = torch.as_tensor(tr.X[((tr.obs["compound"] == comp) & (tr.obs["dose"] == c)).to_numpy()], dtype=torch.float64)
        stats.append((len(x), x.sum(0), x.T @ x))
        f = list(truth["compounds"]).index(comp) if comp != "control" else None
        shifts.append(np.zeros(6) if f is None else hill(c, truth["emax"][f], truth["ec50"][f], truth["hill_n"][f])
                      * truth["targets"][f])
    n = torch.tensor([s[0] for s in stats], dtype=torch.float64)
    s1, s2 = torch.stack([s[1] for s in stats]), torch.stack([s[2] for s in stats])
    shift = torch.as_tensor(np.stack(shifts))

    def loss(m, idx):
        idx = idx.long()
        ll = gaussian_loglik(m.w, m.b, m.log_sigma, n[idx], s1[idx], s2[idx], shift[idx], torch.zeros_like(shift[idx]))
        h = notears_h(m.w)
        return -ll.sum() / n[idx].sum() + 0.01 * m.w.abs().sum() + 2.0 * (h + 0.5 * h * h)

    model = CausalModel(6).double()
    res = core_fit(model, loss, torch.arange(len(keys)), max_steps=600, batch_size=len(keys), lr=0.03,
                   logger=None, progress=False)
    w_true = torch.as_tensor(truth["W"])
    est = res.module.w.detach()
    assert int((w_true != 0).sum()) >= 4
    assert shd(est, w_true, 0.2) <= 1 < shd(torch.zeros(6, 6), w_true)
    assert np.abs(est.numpy() - truth["W"]).max() < 0.25


def test_predict_is_anndata_with_provenance_and_round_trips(tmp_path):
    ad = _small()
    model = GIM(**FAST).fit(ad)
    cond = model.example_condition(ad)[0]
    pred = model.sample(cond, n_samples=7, seed=3)
    assert pred.n_obs == 7 and list(pred.var_names) == list(ad.var_names)
    assert set(pred.obs["compound"]) == {cond.index[0]} and np.allclose(pred.obs["dose"], cond["dose"].iloc[0])
    prov = pred.uns["gim"]
    assert prov["system"] == "singlecell/gim" and prov["mode"] == "map" and len(prov["target_probabilities"][0]) == 6
    write_h5ad(pred, tmp_path / "p.h5ad")
    back = read_h5ad_file(tmp_path / "p.h5ad")
    assert np.allclose(back.X, pred.X) and back.uns["gim"]["seed"] == 3
    model.save(tmp_path / "run")
    again = GIM.load(tmp_path / "run")
    assert np.allclose(again.sample(cond, n_samples=7, seed=3).X, pred.X)
    assert not np.allclose(model.sample(cond, n_samples=7, seed=4).X, pred.X)
    tab = again.intervention_targets(cond)
    assert tab.shape == (1, 6) and ((tab.values >= 0) & (tab.values <= 1)).all()
    assert again.graph().shape == (6, 6) and np.allclose(np.diag(again.graph().values), 0)
    # an AnnData as conditions: its perturbed contexts, in PCA space too
    assert model.sample(ad[ad.obs["split"] == "ood_full"], n_samples=2).n_obs == 2 * 2 * 4


def test_pca_space_and_onehot_features():
    ad = _small()
    ad.obsm["X_pca"] = (ad.X - ad.X.mean(0)) @ np.linalg.svd(ad.X - ad.X.mean(0), full_matrices=False)[2][:4].T
    model = GIM(**FAST, use_rep="X_pca", features_key=None).fit(ad)
    pred = model.sample(model.example_condition(ad)[0].iloc[:, :1], n_samples=5)
    assert pred.obsm["X_pca"].shape == (5, 4)
    scores = model.evaluate(ad[ad.obs["split"] != "ood_full"])
    assert np.isfinite(scores["W2@ood_partial"])


@pytest.mark.parametrize("over", [{"backend": "stationary_sde", "max_cells_per_context": 16},
                                  {"training": "map"}, {"target_prior": "categorical"},
                                  {"noise_intervention": True, "hill": False},
                                  {"training": "map", "use_head": False}, {"training": "map", "em_warmup": 0.5},
                                  {"training": "map", "noise_intervention": True, "target_prior": "categorical"},
                                  {"training": "map", "backend": "stationary_sde", "max_cells_per_context": 16}])
def test_variants_train_and_predict(over):
    ad = _small()
    model = GIM(**{**FAST, **over}).fit(ad)
    assert np.isfinite(model.history.final_loss)
    cond = model.example_condition(ad)[0]
    for mode in ("map", "mixture"):
        assert np.isfinite(model.sample(cond, n_samples=4, intervention=mode).X).all()
    probs = model.intervention_targets(cond).values
    if over.get("target_prior") == "categorical":
        assert probs.sum() == pytest.approx(1.0, abs=1e-5)


def test_training_learns_targets_and_shifts_beyond_an_untrained_model():
    """Averaged over three data seeds: one seed alone is not reliable at this budget (measured with the
    default MC training, 500 steps, seeds 0-4: target AUROC 0.880 / 0.746 / 0.899 / 0.945 / 0.919; at 250
    steps seed 0 gave 0.843, seed 1 0.703). An untrained head ranks targets at chance."""
    cfg = {"width": 32, "train": {"max_steps": 500, "progress": False, "logger": None}}
    before, after = [], []
    for seed in (0, 1, 2):
        ad = synthetic_screen(6, n_functions=10, n_ood_functions=4, cells=40, n_control=400, seed=seed)
        untrained = GIM(**{**cfg, "train": {**cfg["train"], "max_steps": 1, "lr": 1e-9}}).fit(ad)
        before.append(untrained.evaluate(ad))
        after.append(GIM(**cfg).fit(ad).evaluate(ad))

    def mean(runs, key):
        return float(np.mean([r[f"{key}@ood_partial"] for r in runs]))

    assert mean(after, "target_AUROC") > 0.8 > mean(before, "target_AUROC") + 0.2
    assert mean(after, "W2") < 0.8 * mean(before, "W2")
    assert mean(after, "R2_means") > mean(before, "R2_means") + 0.2


SLOW_SEEDS = (0, 1, 2)


@pytest.fixture(scope="module")
def papers_screen_scores():
    """GIM (defaults: MC, Hill head, MAP prediction) and the unstructured baseline on the full screen,
    1200 steps each, data and training seeds 0, 1, 2 (``benchmarks/singlecell/bench_gim.py --seeds 3``
    holds the table). One seed is not enough: the committed single-seed table of an earlier environment
    had GIM behind the baseline on seed 0 (MMD 0.116 vs 0.082), this environment has it ahead
    (0.075 vs 0.082); the seed mean is what the tests assert."""
    gims, bases = [], []
    for seed in SLOW_SEEDS:
        ad = synthetic_screen(10, seed=seed)
        model = GIM(train={"max_steps": 1200, "seed": seed, "progress": False, "logger": None}).fit(ad)
        ev = model.eval_contexts(ad)
        pred, probs = model.predict_contexts(ev, n_samples=200, seed=seed)
        gim = score_contexts(pred, ev, probs)
        gim["SHD"] = shd(model.network.causal.w.detach(), torch.as_tensor(np.asarray(ad.uns["gim_truth"]["W"])), 0.2)
        base = ConditionalGaussian().fit(model, ad, max_steps=1200, seed=seed)
        split = np.asarray(ev["split"])
        bres = score_contexts(base.predict(ev["features"], ev["doses"], 200, seed=seed), ev)
        bres["target_AUROC@ood_partial"] = auroc(base.target_scores(ev["features"], ev["doses"])[split == "ood_partial"],
                                                 ev["truth"][split == "ood_partial"])
        gims.append(gim)
        bases.append(bres)
    return gims, bases


def _seed_mean(runs, key):
    return float(np.mean([float(r[key]) for r in runs]))


@pytest.mark.slow
def test_gim_names_targets_better_than_the_unstructured_baseline_and_recovers_the_graph(papers_screen_scores):
    """Measured (seeds 0, 1, 2): target AUROC 0.976 / 0.861 / 0.966 vs the baseline's 0.883 / 0.795 / 0.891;
    SHD 0 / 13 / 4 (seed 1's graph is not recovered by any GIM variant; 10 true edges)."""
    gims, bases = papers_screen_scores
    key = "target_AUROC@ood_partial"
    assert _seed_mean(gims, key) > max(0.9, _seed_mean(bases, key) + 0.05)
    assert sorted(float(g["SHD"]) for g in gims)[1] <= 4  # the median seed


@pytest.mark.slow
def test_gim_predicts_new_doses_closer_than_the_unstructured_baseline(papers_screen_scores):
    """Seed means (measured: MMD 0.076 vs 0.084, energy 0.155 vs 0.174, W2 2.653 vs 2.679, R² of means
    0.473 vs 0.199; each seed alone also favoured GIM on all four)."""
    gims, bases = papers_screen_scores
    for m in ("MMD", "energy", "W2"):
        assert _seed_mean(gims, f"{m}@ood_partial") < _seed_mean(bases, f"{m}@ood_partial"), m
    assert _seed_mean(gims, "R2_means@ood_partial") > _seed_mean(bases, "R2_means@ood_partial")
