"""AGDiff trained end to end: the VGAE reconstructs edges, the detector loss reaches the diffusion model,
pseudo-anomalies sit nearer the normal graphs than random perturbations yet apart from them (above
chance, less than random perturbations), and AGDiff's mean AUC above every baseline's on the subtle synthetic set (these train for
minutes: slow; measured on data seeds that are neither the reported nor the validation ones)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.graphs.agdiff import AGDiff
from scigen.graphs.agdiff.demo import split_normal
from scigen.graphs.agdiff.embedding import latent_embedding
from scigen.graphs.agdiff.graphs import anomaly_labels, pack, unpack
from scigen.graphs.agdiff.synthetic import synthetic_anomaly_graphs

QUIET = {"progress": False, "logger": None}


@pytest.fixture(scope="module")
def split():
    return split_normal(synthetic_anomaly_graphs(200, 45, seed=0), seed=0)


@pytest.fixture(scope="module")
def short_run(split):
    train, _ = split
    model = AGDiff(AGDiff.Config.preset("tiny", stage_shares={"vgae": 0.8}))
    return model.fit(train, max_steps=100, **QUIET)


def _edge_auc(model, graphs) -> float:
    from sklearn.metrics import roc_auc_score

    net = model.network
    x, adj, mask = unpack(pack(graphs, model.vocab), net.n_features)
    with torch.no_grad():
        mu, _ = net.vgae.encode(x, adj, mask)
        prob = torch.sigmoid(net.vgae.edge_logits(mu))
    pairs = mask.unsqueeze(-1) & mask.unsqueeze(-2) & ~torch.eye(mask.shape[1], dtype=torch.bool)
    return roc_auc_score(adj[pairs].numpy(), prob[pairs].numpy())


def test_vgae_reconstructs_held_out_edges_far_better_than_chance(short_run, split):
    _, test = split
    normal = [g for g in test if g.graph["anomaly"] == 0]
    assert _edge_auc(short_run, normal) > 0.85  # chance is 0.5


@pytest.mark.parametrize("generator_grad", [True, False])
def test_the_detector_loss_reaches_the_denoiser_and_the_condition(short_run, split, generator_grad):
    from scigen.graphs.agdiff.objective import joint_loss, make_process

    train, _ = split
    # L = L_cls only: through the chain (the paper's generator gradient) or detached (our default)
    config = short_run.config.model_copy(update={"diffusion_weight": 0.0, "generator_grad": generator_grad})
    net = short_run.network
    batch = pack(train[:8], short_run.vocab)
    net.zero_grad()
    net.vgae.requires_grad_(False)
    try:
        joint_loss(config, make_process(config))(net, batch).backward()
    finally:
        net.vgae.requires_grad_(True)
    for part in ("denoiser", "condition", "detector"):
        grads = [p.grad for p in getattr(net, part).parameters() if p.grad is not None]
        reached = bool(grads) and sum(float(g.abs().sum()) for g in grads) > 0
        assert reached == (generator_grad or part == "detector"), part
    net.zero_grad()


def test_samples_are_reproducible_by_seed_and_scores_survive_save_load(short_run, split, tmp_path):
    _, test = split
    a = short_run.sample(test[:6], n_samples=6, seed=3)
    b = short_run.sample(test[:6], n_samples=6, seed=3)
    c = short_run.sample(test[:6], n_samples=6, seed=4)
    key = [sorted(g.edges) for g in a]
    assert key == [sorted(g.edges) for g in b] and key != [sorted(g.edges) for g in c]
    assert [g.number_of_nodes() for g in a] == [g.number_of_nodes() for g in test[:6]]
    short_run.save(tmp_path / "run")
    again = AGDiff.load(tmp_path / "run")
    np.testing.assert_allclose(again.score(test), short_run.score(test), rtol=1e-6)
    assert len(again.sample(n_samples=3, seed=0)) == 3  # the run's own reference graphs


#: data seeds of the claims below: neither the reported benchmark seed (0) nor the validation seeds the
#: defaults were chosen on (1–3)
HELD_OUT_SEEDS = (4, 5, 6, 7)


@pytest.fixture(scope="module")
def held_out():
    """AGDiff-tiny (default settings, 400 steps) on the normal half of the synthetic set, data seed 4."""
    train, test = split_normal(synthetic_anomaly_graphs(200, 45, seed=HELD_OUT_SEEDS[0]), seed=0)
    normal = [g for g in test if g.graph["anomaly"] == 0]
    return train, normal, AGDiff(AGDiff.Config.preset("tiny")).fit(train, **QUIET)


def _nearest_normal_distance(model, graphs, reference) -> float:
    """Mean distance of each graph's embedding to its nearest normal training graph's."""
    e, ref = latent_embedding(model, graphs), latent_embedding(model, reference)
    return float(np.sqrt(((e[:, None] - ref[None]) ** 2).sum(-1)).min(1).mean())


@pytest.mark.slow  # trains the tiny preset (400 steps): about half a minute on a quiet core
def test_pseudo_anomalies_are_nearer_normal_than_random_perturbations(held_out):
    train, normal, model = held_out
    pseudo = model.sample(normal, seed=0)
    random_model = copy.copy(model)  # same weights, random-perturbation generator
    random_model.config = model.config.model_copy(update={"pseudo": "random"})
    rand = random_model.sample(normal, seed=0)
    assert (_nearest_normal_distance(model, pseudo, train)
            < 0.8 * _nearest_normal_distance(model, rand, train))  # measured 0.0075 vs 0.0127 (seed 4)


@pytest.mark.slow
def test_pseudo_anomalies_are_separable_from_normal_graphs_though_less_than_random_perturbations(held_out):
    """Near the boundary, not on it: the trained detector scores AGDiff's pseudo-anomalies above held-out
    normal graphs far beyond chance (one-sided Mann–Whitney U, the test behind the AUC), but less cleanly
    than random perturbations of the same graphs, which sit farther off (previous test).

    Measured (data seeds 4 / 5 / 6 / 7; the test runs 4): AUC 0.681 / 0.642 / 0.652 / 0.678, one-sided
    p 5e-6 / 3e-4 / 1e-4 / 7e-6, against 0.946 / 0.894 / 0.887 / 0.916 for random perturbations. Not a clean
    separation (AUC > 0.9 was the earlier, unmet reading of "separable"): ~13 % of the ``"shift"``
    pseudo-anomalies equal their source graph and the rest differ by a few node pairs."""
    from scipy.stats import mannwhitneyu
    from sklearn.metrics import roc_auc_score

    _, normal, model = held_out
    pseudo = model.sample(normal, seed=0)
    random_model = copy.copy(model)
    random_model.config = model.config.model_copy(update={"pseudo": "random"})
    rand = random_model.sample(normal, seed=0)
    s_normal, s_pseudo, s_rand = model.score(normal), model.score(pseudo), model.score(rand)
    auc = roc_auc_score([0] * len(normal) + [1] * len(pseudo), np.concatenate([s_normal, s_pseudo]))
    auc_rand = roc_auc_score([0] * len(normal) + [1] * len(rand), np.concatenate([s_normal, s_rand]))
    assert mannwhitneyu(s_pseudo, s_normal, alternative="greater").pvalue < 1e-3, auc
    assert 0.6 < auc < auc_rand, (auc, auc_rand)


@pytest.mark.slow  # 12 (data seed, training seed) pairs × AGDiff, two random-perturbation detectors, OCGIN, WL: ~3 min
def test_agdiff_mean_auc_exceeds_every_baseline_on_the_subtle_synthetic_set():
    """The issue's claim on the synthetic set, measured where single splits cannot resolve it.

    One split tests on 60 anomalies (an AUC standard error of ~0.02) and one training run moves the
    AUC by up to ~0.02, as much as the gap to the random-perturbation detector; so the claim is on the
    mean over held-out data seeds 4–7 × training seeds 0–2, each split testing 150 normal graphs and 240
    anomalies (``benchmarks/graphs/sweep_agdiff_seeds.py``, results in ``results/agdiff_sweep.md``).
    Measured: AGDiff 0.911, random perturbation with AGDiff's decoder 0.904 (paired difference
    +0.007 ± 0.004 SE; AGDiff ahead on 8 of 12 pairs: a small margin), with the paper decoder 0.889,
    WL + OCSVM 0.687, OCGIN 0.633. Per anomaly kind AGDiff leads on planted motifs (0.904 vs 0.853) and
    trails the random detector on rewired edges (0.852 vs 0.870) and flipped features (0.976 vs 0.989).
    """
    from scigen.graphs.agdiff.ablation import random_perturbation
    from scigen.graphs.agdiff.baselines import OCGIN, PAPER_DECODER, WLOneClass
    from scigen.graphs.agdiff.metrics import detection_scores
    from scigen.graphs.agdiff.synthetic import SUBTLE_STRENGTH

    auc: dict[str, list[float]] = {}
    for data_seed in HELD_OUT_SEEDS:
        train, test = split_normal(synthetic_anomaly_graphs(300, 240, seed=data_seed, strength=SUBTLE_STRENGTH),
                                   seed=0)
        y = anomaly_labels(test)
        for train_seed in (0, 1, 2):
            opts = {**QUIET, "seed": train_seed}
            detectors = {"AGDiff": AGDiff(AGDiff.Config.preset("tiny", train=opts)),
                         "random": random_perturbation("tiny", train=opts),
                         "random, paper decoder": random_perturbation("tiny", train=opts, **PAPER_DECODER),
                         "OCGIN": OCGIN(seed=train_seed)}
            if train_seed == 0:  # the WL kernel + one-class SVM has no training seed
                detectors["WL"] = WLOneClass()
            for name, det in detectors.items():
                auc.setdefault(name, []).append(detection_scores(y, det.fit(train).score(test))["auc"])
    mean = {k: float(np.mean(v)) for k, v in auc.items()}
    assert all(mean["AGDiff"] > v for k, v in mean.items() if k != "AGDiff"), mean


@pytest.mark.slow  # the quick demo: 200 training steps + the WL baseline
def test_quick_demo_writes_the_roc_figure_and_report(tmp_path):
    import json

    result = AGDiff.demo(tmp_path, quick=True, threads=1)
    report = json.loads((tmp_path / "report.json").read_text())
    assert (tmp_path / "agdiff_roc.png").stat().st_size > 0 and (tmp_path / "model").is_dir()
    assert report["system"] == "graphs/agdiff" and 0.5 < result.metrics["AUC"] <= 1.0


def test_prior_corrected_decoder_expects_the_real_edge_count_of_held_out_graphs(short_run, split):
    """decode(encode(G)): the expected edge count ``Σ_{i<j} sigmoid(z_i·z_j + log r)`` of a held-out normal
    graph matches its real count (the negative-sampling prior shift, ``objective.sampling_log_rate``),
    where the paper's uncorrected decoder at 0.5 roughly doubles it."""
    from scigen.graphs.agdiff.objective import pair_mask, sampling_log_rate

    train, test = split
    net = short_run.network
    _, a_train, m_train = unpack(pack(train, short_run.vocab), net.n_features)
    assert float(net.vgae.edge_offset) == pytest.approx(float(sampling_log_rate(a_train, m_train)), abs=1e-6)
    # the offset by hand: r = |E| / |non-edges| per graph (neg_ratio = 1, sparse graphs)
    e = np.array([g.number_of_edges() for g in train], float)
    n = np.array([g.number_of_nodes() for g in train], float)
    assert float(net.vgae.edge_offset) == pytest.approx(np.log(e / (n * (n - 1) / 2 - e)).mean(), rel=1e-5)
    normal = [g for g in test if g.graph["anomaly"] == 0]
    x, adj, mask = unpack(pack(normal, short_run.vocab), net.n_features)
    with torch.no_grad():
        mu, _ = net.vgae.encode(x, adj, mask)
        pairs = pair_mask(mask)
        expected = (torch.sigmoid(net.vgae.calibrated_edge_logits(mu)) * pairs).sum() / 2
        at_half = ((torch.sigmoid(net.vgae.edge_logits(mu)) > 0.5) & pairs).sum() / 2
    real = sum(g.number_of_edges() for g in normal)
    assert abs(float(expected) / real - 1) < 0.1, (float(expected), real)
    assert float(at_half) > 1.3 * real  # the root cause the correction removes


def test_source_count_decoding_keeps_each_graphs_edges_and_recovers_them(short_run, split):
    from scigen.graphs.agdiff.sampling import decode_graphs, edge_counts

    _, test = split
    normal = [g for g in test if g.graph["anomaly"] == 0][:20]
    net = short_run.network
    x, adj, mask = unpack(pack(normal, short_run.vocab), net.n_features)
    with torch.no_grad():
        mu, _ = net.vgae.encode(x, adj, mask)
        _, hard = decode_graphs(net, mu, mask, mode="source_count", n_edges=edge_counts(adj, mask))
        prob = torch.sigmoid(net.vgae.calibrated_edge_logits(mu))
    for k, g in enumerate(normal):
        n, m = g.number_of_nodes(), g.number_of_edges()
        a = hard[k, :n, :n]
        assert torch.equal(a, a.T) and int(a.sum()) == 2 * m and not a.diagonal().any()
        iu = np.triu_indices(n, 1)  # the kept pairs are the m most probable ones (by hand)
        p = prob[k, :n, :n].numpy()[iu]
        kept = a.numpy()[iu] > 0.5
        assert p[kept].min() >= p[~kept].max() - 1e-6
    hit = float((hard * adj).sum() / adj.sum())  # share of the real edges decoded
    chance = float(adj.sum() / (mask.sum(1) * (mask.sum(1) - 1)).sum())
    assert hit > 2 * chance, (hit, chance)


@pytest.mark.parametrize("edge_decode", ["threshold", "source_count"])
def test_edit_decoding_changes_only_the_pairs_and_nodes_whose_decode_moved(short_run, split, edge_decode):
    from scigen.graphs.agdiff.sampling import decode_graphs, edge_counts, pseudo_graphs

    _, test = split
    net = short_run.network
    config = short_run.config.model_copy(update={"pseudo_decode": "edit", "edge_decode": edge_decode})
    x, adj, mask = unpack(pack(test[:12], short_run.vocab), net.n_features)
    with torch.no_grad():
        mu, _ = net.vgae.encode(x, adj, mask)
        xs, a_same = pseudo_graphs(net, mu, mu, x, adj, mask, config)  # unperturbed: the source graph itself
        assert torch.equal(a_same, adj) and torch.equal(xs, x)
        z = mu + torch.randn(mu.shape, generator=torch.Generator().manual_seed(0)) * mask.unsqueeze(-1)
        xe, ae = pseudo_graphs(net, z, mu, x, adj, mask, config)
        n_edges = edge_counts(adj, mask)
        x0, a0 = decode_graphs(net, mu, mask, mode=edge_decode, n_edges=n_edges)
        xz, az = decode_graphs(net, z, mask, mode=edge_decode, n_edges=n_edges)
    moved = a0 != az
    assert moved.any() and torch.equal(ae[moved], az[moved]) and torch.equal(ae[~moved], adj[~moved])
    node_moved = x0.argmax(-1) != xz.argmax(-1)
    assert torch.equal(xe[node_moved], xz[node_moved]) and torch.equal(xe[~node_moved], x[~node_moved])


def test_pseudo_anomalies_equal_to_their_source_still_count_as_pseudo_anomalies(short_run, split, monkeypatch):
    """Every pseudo-anomaly enters ``L_cls`` (the paper; ``drop_unchanged`` was swept, made no difference and was
    removed): with an unperturbed latent and ``pseudo_decode="shift"`` every pseudo-anomaly is its source graph,
    so ``L_cls`` is the real graphs' BCE against label 1 plus the same graphs' against label 0, halved."""
    import torch.nn.functional as F

    from scigen.graphs.agdiff import sampling
    from scigen.graphs.agdiff.objective import joint_loss, make_process

    train, _ = split
    monkeypatch.setattr(sampling, "pseudo_latents", lambda net, process, z0, *a, **k: z0)
    config = short_run.config.model_copy(update={"diffusion_weight": 0.0})
    net = short_run.network
    batch = pack(train[:8], short_run.vocab)
    with torch.no_grad():
        loss = float(joint_loss(config, make_process(config))(net, batch))
        real = net.detector(*unpack(batch, net.n_features))
    by_hand = 0.5 * float(F.binary_cross_entropy_with_logits(real, torch.ones_like(real)) +
                          F.binary_cross_entropy_with_logits(real, torch.zeros_like(real)))
    assert loss == pytest.approx(by_hand, rel=1e-5)


def test_pretrain_share_is_deprecated_for_stage_shares():
    """Issue 32: one budget name for every staged system; a saved config with the old name still loads."""
    from scigen.core.system import make_config

    with pytest.warns(DeprecationWarning, match=r"AGDiffConfig.pretrain_share is deprecated; use "
                                                r"stage_shares=\{'vgae': 0.25\}"):
        cfg = make_config(AGDiff.Config, {"pretrain_share": 0.25})
    assert cfg.stage_shares == {"vgae": 0.25} and AGDiff.Config().stage_shares == {"vgae": 0.4}
    with pytest.warns(DeprecationWarning):
        assert cfg.pretrain_share == 0.25
    with pytest.raises(InvalidInputError, match=r"stage_shares.*unknown stage\(s\) \['joint'\]"):
        AGDiff(stage_shares={"joint": 0.5})


def test_staged_fit_interrupted_in_the_joint_stage_resumes_bit_for_bit(split, tmp_path, crash_after):
    """The engine's stages (issue 32): a fit that crashed inside ``joint`` (``vgae`` finished) and is rerun with
    ``resume=True`` skips ``vgae`` and ends at the uninterrupted run's weights and losses exactly."""
    train, _ = split
    cfg = AGDiff.Config.preset("tiny", train={"checkpoint_every": 1})
    full = AGDiff(cfg).fit(train[:40], max_steps=10, **QUIET)
    with pytest.raises(RuntimeError, match="simulated crash"):
        # crash after 7 steps: step 3 of joint (vgae: 4 of 10 steps)
        AGDiff(cfg).fit(train[:40], max_steps=10, checkpoint_dir=str(tmp_path), callbacks=[crash_after(7)], **QUIET)
    resumed = AGDiff(cfg).fit(train[:40], max_steps=10, checkpoint_dir=str(tmp_path), resume=True, **QUIET)
    assert resumed.history.stages == full.history.stages == [("vgae", 0, 4), ("joint", 4, 10)]
    assert resumed.history.losses == full.history.losses
    for k, v in full.network.state_dict().items():
        assert torch.equal(resumed.network.state_dict()[k], v), k
