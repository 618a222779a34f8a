"""AGDiff's parts against references: edge BCE vs scikit-learn's log loss, packing vs networkx, AUC/F1
vs scikit-learn and a hand count, the normal-class rule on COX2, the CV protocol, the synthetic set."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.graphs.agdiff.graphs import anomaly_labels, label_by_class, node_vocab, pack, unpack
from scigen.graphs.agdiff.metrics import detection_scores
from scigen.graphs.agdiff.objective import edge_bce, pair_mask
from scigen.graphs.agdiff.synthetic import synthetic_anomaly_graphs

TU = Path("/work/shared/data/tu")


def _typed(g: nx.Graph, types="ab") -> nx.Graph:
    for v in g.nodes:
        g.nodes[v]["type"] = types[v % len(types)]
    return g


def test_pack_matches_networkx_adjacency_and_one_hot_types():
    graphs = [_typed(nx.cycle_graph(5)), _typed(nx.path_graph(3), "b"), _typed(nx.complete_graph(4), "ca")]
    vocab = node_vocab(graphs)
    assert vocab == ["a", "b", "c"]
    x, adj, mask = unpack(pack(graphs, vocab), len(vocab))
    assert x.shape == (3, 5, 3) and adj.shape == (3, 5, 5)
    for k, g in enumerate(graphs):
        n = g.number_of_nodes()
        np.testing.assert_array_equal(adj[k, :n, :n].numpy(), nx.to_numpy_array(g, nodelist=list(g.nodes)))
        assert float(adj[k, n:].abs().sum() + adj[k, :, n:].abs().sum()) == 0
        assert mask[k].tolist() == [True] * n + [False] * (5 - n)
        assert [vocab[i] for i in x[k, :n].argmax(1).tolist()] == [g.nodes[v]["type"] for v in g.nodes]
        assert torch.all(x[k, :n].sum(1) == 1)


def test_graphs_without_the_trained_node_features_are_refused():
    with pytest.raises(InvalidInputError, match=r"(?s)not trained on.*data\[0\]: node types \['NODE'\]"):
        pack([nx.path_graph(4)], ["a", "b"])


def test_edge_bce_with_every_non_edge_is_sklearn_log_loss():
    from sklearn.metrics import log_loss

    torch.manual_seed(0)
    g = nx.gnp_random_graph(7, 0.3, seed=1)
    adj = torch.tensor(nx.to_numpy_array(g), dtype=torch.float32).unsqueeze(0)
    mask = torch.ones(1, 7, dtype=torch.bool)
    logits = torch.randn(1, 7, 7)
    got = float(edge_bce(logits, adj, mask, neg_ratio=1e6))  # rate clamps at 1: all pairs count
    pairs = pair_mask(mask)[0]
    ref = log_loss(adj[0][pairs].numpy(), torch.sigmoid(logits[0][pairs]).numpy(), labels=[0, 1])
    assert got == pytest.approx(ref, rel=1e-5)


def test_edge_bce_samples_about_neg_ratio_negatives_per_edge():
    torch.manual_seed(0)
    n = 40
    adj = torch.zeros(1, n, n)
    idx = torch.arange(n - 1)
    adj[0, idx, idx + 1] = adj[0, idx + 1, idx] = 1.0
    mask = torch.ones(1, n, dtype=torch.bool)
    # logits 0 on edges (loss log 2), +10 on non-edges: loss = (E log2 + Nneg·(10 + log1p(e^-10))) / (E + Nneg)
    logits = torch.full((1, n, n), 10.0)
    logits[adj > 0] = 0.0
    losses = torch.stack([edge_bce(logits, adj, mask, neg_ratio=2.0) for _ in range(400)])
    e = float(adj.sum())
    neg_loss = 10.0 + float(np.log1p(np.exp(-10.0)))
    # solve the mean loss for the mean share of negatives: share = (L − log2) / (neg_loss − log2)
    share = (float(losses.mean()) - np.log(2)) / (neg_loss - np.log(2))
    assert share == pytest.approx(2 * e / (3 * e), abs=0.02)


def test_auc_and_top_k_f1_against_sklearn_and_a_hand_count():
    from sklearn.metrics import roc_auc_score

    y = np.array([0, 0, 0, 1, 1])
    s = np.array([0.1, 0.4, 0.35, 0.8, 0.3])
    got = detection_scores(y, s)
    assert got["auc"] == pytest.approx(roc_auc_score(y, s))
    # top-2 flags graphs 3 and 1: anomaly class P = R = 1/2; normal class P = R = 2/3
    assert got["f1_anomaly"] == pytest.approx(0.5)
    assert got["f1"] == pytest.approx((0.5 + 2 / 3) / 2)
    # scores > 0.32 flag graphs 1, 2, 3: P = 1/3, R = 1/2, F1 = 2PR/(P + R) = 0.4
    assert detection_scores(y, s, threshold=0.32)["f1_anomaly"] == pytest.approx(0.4)


def test_a_test_set_with_one_class_is_refused():
    with pytest.raises(InvalidInputError, match="only normal graphs"):
        detection_scores(np.zeros(4), np.arange(4.0))


@pytest.mark.skipif(not (TU / "COX2").is_dir(), reason="team TU copy absent")
def test_majority_class_is_normal_on_cox2():
    from scigen.graphs.data import load_tu

    tu = load_tu("COX2", root=TU)
    graphs = label_by_class(tu.graphs)
    raw = np.loadtxt(TU / "COX2" / "COX2_graph_labels.txt", dtype=int)
    values, counts = np.unique(raw, return_counts=True)
    majority = values[counts.argmax()]
    np.testing.assert_array_equal(anomaly_labels(graphs), (raw != majority).astype(int))
    assert anomaly_labels(graphs).sum() == counts.min() == 102  # 365 inactive normal, 102 active anomalous


def test_cross_validate_trains_on_normal_graphs_only_and_tests_every_graph_once():
    from scigen.graphs.agdiff.protocol import cross_validate

    graphs = synthetic_anomaly_graphs(40, 10, seed=3)
    seen_train, seen_test = [], []

    class EdgeCount:  # score = number of edges (rewired/motif anomalies change it)
        def fit(self, gs):
            seen_train.append([g.graph["anomaly"] for g in gs])
            return self

        def score(self, gs):
            seen_test.extend(id(g) for g in gs)
            return np.array([g.number_of_edges() for g in gs], dtype=float)

    res = cross_validate(graphs, {"edges": EdgeCount}, folds=5, seed=0)["edges"]
    assert len(res["folds"]) == 5 and all(sum(a) == 0 and len(a) == 32 for a in seen_train)
    assert sorted(seen_test) == sorted(id(g) for g in graphs)
    assert all(f["n_anomaly"] == 2 for f in res["folds"])  # stratified: 10 anomalies over 5 folds
    assert res["auc_mean"] == pytest.approx(np.mean([f["auc"] for f in res["folds"]]))


def test_synthetic_set_counts_and_planted_anomalies():
    graphs = synthetic_anomaly_graphs(30, 9, seed=0)
    y = anomaly_labels(graphs)
    assert len(graphs) == 39 and y.sum() == 9
    kinds = [g.graph["kind"] for g in graphs]
    assert {k: kinds.count(k) for k in set(kinds)} == {"normal": 30, "rewired": 3, "feature": 3, "motif": 3}
    for g in graphs:
        half = g.number_of_nodes() // 2
        mismatched = sum(g.nodes[v]["type"] != ("A" if v < half else "B") for v in g)
        assert (mismatched > 0) == (g.graph["kind"] == "feature")
        if g.graph["kind"] == "motif":
            assert max(nx.node_clique_number(g).values()) >= 4


def test_plot_roc_draws_into_a_given_ax(tmp_path):
    import matplotlib.pyplot as plt

    from scigen.graphs.agdiff.plot import plot_roc

    fig, ax = plt.subplots()
    y = np.array([0, 0, 1, 1])
    got = plot_roc(y, {"a": np.array([0.1, 0.2, 0.8, 0.9]), "b": np.array([0.5, 0.1, 0.2, 0.9])}, ax=ax)
    assert got is fig and len(ax.lines) == 3
    assert "AUC 1.000" in ax.get_legend().get_texts()[0].get_text()
    plot_roc(y, {"a": np.array([0.1, 0.2, 0.8, 0.9])}, tmp_path / "roc.png")
    assert (tmp_path / "roc.png").stat().st_size > 0
    plt.close("all")


class _ZeroEps(torch.nn.Module):
    """An ε-network that predicts 0: deterministic DDIM then maps ``z_s`` to ``z_s / α(s)`` exactly."""

    def forward(self, z, t, *, c, nodes):
        return torch.zeros_like(z)


@pytest.mark.parametrize("start_t", [0.2, 0.5])
def test_pseudo_latents_start_from_z0_noised_to_start_t(start_t):
    """With ε̂ = 0 every DDIM step keeps x̂0 = z_s/α(s), so the chain returns z0 + (σ(s)/α(s))·ε with
    s the first grid time at or below ``start_t`` and ε the first draw of the generator."""
    from types import SimpleNamespace

    from scigen.graphs.agdiff.config import AGDiffConfig
    from scigen.graphs.agdiff.objective import make_process
    from scigen.graphs.agdiff.sampling import pseudo_latents

    config = AGDiffConfig.preset("tiny", start_t=start_t)
    process = make_process(config)
    net = SimpleNamespace(denoiser=_ZeroEps())
    z0 = torch.randn(3, 5, 4)
    mask = torch.ones(3, 5, dtype=torch.bool)
    mask[0, 3:] = False
    out = pseudo_latents(net, process, z0, torch.zeros_like(z0), mask, config, generator=torch.Generator().manual_seed(7))
    eps = torch.randn(z0.shape, generator=torch.Generator().manual_seed(7))
    full = process.times(max(config.generate_steps, int(np.ceil(config.generate_steps / start_t))))
    s = full[full <= start_t + 1e-9][0]
    assert float(s) <= start_t and float(s) > start_t - 1.5 / (len(full) - 1)
    ratio = float(process.path.sigma(s) / process.path.alpha(s))
    m = mask.unsqueeze(-1).float()
    torch.testing.assert_close(out, (z0 + ratio * eps) * m, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("field,value", [("generate_condition_noise", 2.0), ("start_t_max", 1.0), ("start_levels", 4),
                                         ("clip_latents", 3.0), ("pseudo_edges", "soft")])
def test_switches_removed_after_their_sweeps_still_load_from_old_configs(field, value):
    """The swept-and-dropped switches (``agdiff_sweep.md``): a saved config that sets one still loads, with a
    DeprecationWarning naming the field, and the value is ignored."""
    from scigen.graphs.agdiff.config import AGDiffConfig

    with pytest.warns(DeprecationWarning, match=rf"AGDiffConfig\.{field} was removed"):
        config = AGDiffConfig.preset("tiny", **{field: value})
    assert field not in config.model_dump()
    assert config == AGDiffConfig.preset("tiny")


def test_condition_noise_override_sets_the_std_of_eta():
    """eq. 10 ``c = sigmoid(W(z0 + η) + b)``: ``noise=0`` gives ``sigmoid(W z0 + b)``; ``noise=s`` draws η·s."""
    from scigen.graphs.agdiff.model import Condition

    cond = Condition(4, noise=1.0)
    z0 = torch.randn(2, 3, 4)
    torch.testing.assert_close(cond(z0, noise=0.0), torch.sigmoid(cond.linear(z0)))
    eta = torch.randn(z0.shape, generator=torch.Generator().manual_seed(5))
    got = cond(z0, generator=torch.Generator().manual_seed(5), noise=3.0)
    torch.testing.assert_close(got, torch.sigmoid(cond.linear(z0 + 3.0 * eta)))


def test_node_types_fix_the_feature_columns_and_refuse_types_outside_them():
    from scigen.graphs.agdiff import AGDiff

    graphs = [_typed(nx.path_graph(4), "ab") for _ in range(4)]
    model = AGDiff(AGDiff.Config.preset("tiny", node_types=("a", "b", "c")))
    rows = model.prepare_data(graphs, role="data")
    assert model.vocab == ["a", "b", "c"] and rows.shape[-1] == 3 + 4 + 1  # F + N + 1
    with pytest.raises(InvalidInputError, match=r"\['z'\].*not in config.node_types"):
        AGDiff(AGDiff.Config.preset("tiny", node_types=("a", "b"))).prepare_data(
            [_typed(nx.path_graph(3), "az")], role="data")


def test_top_k_f1_of_tied_scores_is_chance_even_when_labels_are_sorted():
    y = np.array([0] * 100 + [1] * 100)  # TU files list graphs by class
    res = detection_scores(y, np.ones(200))  # a saturated detector: every score ties
    assert res["auc"] == 0.5 and 0.35 < res["f1"] < 0.65  # position tie-breaking would give 0.0 here


@pytest.mark.parametrize("reduction", ["nodes", "graphs"])
def test_loss_reduction_graphs_makes_each_objective_a_mean_of_per_graph_terms(reduction):
    """``loss_reduction="graphs"``: the gradient of a batch of 4 graphs is the mean of the gradients of its two
    halves (what data-parallel training averages), draws keyed by graph (per-sample streams); the default
    whole-batch node mean is not (graphs of different sizes weigh by their node counts)."""
    from scigen.core.streams import SampleStreams, sample_streams
    from scigen.graphs.agdiff import AGDiff
    from scigen.graphs.agdiff.objective import joint_loss, make_process, vgae_loss

    torch.manual_seed(0)
    model = AGDiff(AGDiff.Config.preset("tiny", loss_reduction=reduction))
    rows = model.prepare_data(synthetic_anomaly_graphs(20, 0, seed=0), role="data").double()
    net = model.network.double()
    idx = torch.tensor([5, 17, 1, 3])
    sizes = unpack(rows[idx], net.n_features)[2].sum(1)
    assert len(set(sizes.tolist())) > 1  # graphs of different sizes: the two reductions differ
    for loss_fn in (vgae_loss(model.config), joint_loss(model.config, make_process(model.config))):
        def grads(sel, loss_fn=loss_fn):
            net.zero_grad()
            with sample_streams(SampleStreams(7, idx[sel])):
                loss_fn(net, rows[idx[sel]]).backward()
            return torch.cat([p.grad.flatten() for p in net.parameters() if p.grad is not None])

        union, halves = grads(slice(0, 4)), (grads(slice(0, 2)) + grads(slice(2, 4))) / 2
        close = torch.allclose(union, halves, rtol=1e-9, atol=1e-12)
        assert close == (reduction == "graphs"), f"{reduction}: max diff {float((union - halves).abs().max()):.2e}"
