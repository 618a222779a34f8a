"""SBGD's objective and samplers against closed forms: the inter-block likelihood is the binomial
one (scipy) with its MLE at Σm / Σn_i n_j; the SBM edge sampler draws edges at the model's density;
a training step's activation memory grows linearly in N for fixed b and quadratically for the
full-graph baseline; sampling is reproducible by seed and honours the requested sizes."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import torch
from scipy import optimize, special, stats

from scigen.core.errors import InvalidInputError, NotTrainedError
from scigen.graphs.data import sbm_graphs
from scigen.graphs.sbgd import SBGD
from scigen.graphs.sbgd.memory import training_step_bytes
from scigen.graphs.sbgd.model import InterBlockNet
from scigen.graphs.sbgd.objective import inter_block_nll
from scigen.graphs.sbgd.sampling import assemble_graphs

TINY = {"train": {"progress": False, "batch_size": 4}, "steps": 4}


def test_inter_block_nll_is_the_binomial_likelihood_per_node_pair():
    count, possible = torch.tensor([3.0, 0.0, 10.0]), torch.tensor([20.0, 15.0, 40.0])
    logits = torch.tensor([-1.0, -3.0, 0.5])
    p = torch.sigmoid(logits).numpy()
    logpmf = stats.binom.logpmf(count.numpy(), possible.numpy(), p) - np.log(special.comb(possible, count))
    assert float(inter_block_nll(logits, count, possible)) == pytest.approx(-logpmf.sum() / possible.sum().item(),
                                                                           rel=1e-6)
    # one shared density: the minimiser is the pooled MLE sum(m) / sum(n_i n_j)
    best = optimize.minimize_scalar(lambda z: float(inter_block_nll(torch.full((3,), z, dtype=torch.float64),
                                                                    count.double(), possible.double())))
    assert special.expit(best.x) == pytest.approx(13 / 75, rel=1e-5)
    assert float(inter_block_nll(torch.zeros(0), torch.zeros(0), torch.zeros(0))) == 0.0


def test_the_sbm_sampler_draws_inter_block_edges_at_the_model_density():
    net = InterBlockNet(1, 8)
    with torch.no_grad():
        for p in net.parameters():
            p.zero_()
        net.pair[-1].bias.fill_(math.log(0.1 / 0.9))  # p_ij = 0.1 for every pair
    plans = [[10, 12, 9, 11]] * 50
    k = sum(len(p) for p in plans)
    adj = torch.zeros(k, 12, 12)
    mask = torch.zeros(k, 12, dtype=torch.bool)
    for r, s in enumerate(s for p in plans for s in p):
        mask[r, :s] = True
    graphs = assemble_graphs(net, plans, adj, torch.zeros(k, 12, dtype=torch.long), mask, torch.full((k,), 0.25),
                             ["NODE"], typed=False, generator=torch.Generator().manual_seed(0))
    pairs = 50 * sum(a * b for i, a in enumerate(plans[0]) for b in plans[0][i + 1:])
    edges = sum(g.number_of_edges() for g in graphs)
    lo, hi = stats.binom.ppf([0.0005, 0.9995], pairs, 0.1)
    assert lo <= edges <= hi and all(g.number_of_nodes() == 42 for g in graphs)


def _sbm(n: int) -> list[nx.Graph]:
    k = n // 16
    return sbm_graphs(1, min_blocks=k, max_blocks=k, min_size=16, max_size=16, p_in=0.5, p_out=0.01, seed=0)


def test_training_step_memory_is_linear_in_n_for_fixed_b_and_quadratic_for_the_full_graph():
    block = [training_step_bytes(SBGD(SBGD.Config.preset("tiny", block_size=16, partition="metis")), _sbm(n))
             for n in (64, 128, 256)]
    full = [training_step_bytes(SBGD(SBGD.Config.preset("tiny", full_graph=True)), _sbm(n)) for n in (64, 128, 256)]
    for a, b in zip(block, block[1:], strict=False):
        assert 1.6 < b / a < 2.5  # ~2x per doubling of N
    for a, b in zip(full, full[1:], strict=False):
        assert 3.2 < b / a < 4.5  # ~4x per doubling of N
    assert full[-1] > 8 * block[-1]


@pytest.fixture(scope="module")
def trained():
    data = sbm_graphs(12, min_blocks=2, max_blocks=2, min_size=6, max_size=8, p_in=0.6, p_out=0.05, seed=0)
    return SBGD(SBGD.Config.preset("tiny", **TINY)).fit(data, max_steps=2, logger=None), data


def test_sampling_is_reproducible_by_seed_and_honours_sizes(trained):
    model, _ = trained
    a, b, c = model.sample(3, seed=5), model.sample(3, seed=5), model.sample(3, seed=6)
    assert [sorted(g.edges) for g in a] == [sorted(g.edges) for g in b] != [sorted(g.edges) for g in c]
    big = model.sample(2, seed=0, n_nodes=[40, 33])
    assert [g.number_of_nodes() for g in big] == [40, 33]
    assert all(nx.number_of_selfloops(g) == 0 for g in big)
    pyg = model.sample(2, seed=0, n_nodes=20, output="pyg")
    assert [d.num_nodes for d in pyg] == [20, 20] and pyg[0].edge_index.shape[0] == 2


def test_bad_requests_are_named(trained):
    model, data = trained
    with pytest.raises(NotTrainedError, match="untrained"):
        SBGD(SBGD.Config.preset("tiny")).sample(2)
    smallest = min(s for s, h in enumerate(model.metadata["block_histogram"]) if h)
    with pytest.raises(InvalidInputError, match="below one block"):
        model.sample(1, n_nodes=smallest - 1)
    with pytest.raises(InvalidInputError, match="n_nodes"):
        model.sample(2, n_nodes=[10])
    with pytest.raises(InvalidInputError, match="unknown sampler method 'magic'"):
        model.sample(1, method="magic")
    typed = nx.path_graph(5)
    nx.set_edge_attributes(typed, "DOUBLE", "type")
    with pytest.raises(InvalidInputError, match="untyped edges"):
        SBGD(SBGD.Config.preset("tiny")).fit([typed], max_steps=1)
    loop = nx.path_graph(5)
    loop.add_edge(2, 2)
    with pytest.raises(InvalidInputError, match="self-loops"):
        model.fit([loop], max_steps=1)
    with pytest.raises(InvalidInputError, match="no nodes"):
        model.fit([nx.Graph()], max_steps=1)
    with pytest.raises(InvalidInputError, match="empty"):
        model.fit([], max_steps=1)


@pytest.mark.parametrize("scaling", ["none", "per_block_count"])
def test_per_block_count_scaling_holds_inter_block_edges_per_node_at_the_training_value(scaling):
    """Equal blocks of ``n`` nodes, one shared density ``p``: a plain SBM has ``p (k − 1) n / 2``
    inter-block edges per node (binomial over ``C(k, 2) n²`` pairs); the ``per_block_count`` rule
    (``k_ref = clip(k, 4, 4)``, ``p · (k_ref − 1)/(k − 1)``) keeps it at ``p (k_ref − 1) n / 2``."""
    from scigen.graphs.sbgd.sampling import inter_block_scale

    net = InterBlockNet(1, 8)
    with torch.no_grad():
        for w in net.parameters():
            w.zero_()
        net.pair[-1].bias.fill_(math.log(0.05 / 0.95))  # p_ij = 0.05 for every pair
    p, n, reps, k_range = 0.05, 10, 8, (4, 4)
    for k in (2, 4, 8, 16, 32):
        plans = [[n] * k] * reps
        rows = k * reps
        adj, mask = torch.zeros(rows, n, n), torch.ones(rows, n, dtype=torch.bool)
        graphs = assemble_graphs(net, plans, adj, torch.zeros(rows, n, dtype=torch.long), mask,
                                 torch.full((rows,), 1.0 / k), ["NODE"], typed=False,
                                 generator=torch.Generator().manual_seed(k),
                                 k_range=k_range if scaling == "per_block_count" else None)
        k_ref = min(max(k, 4), 4) if scaling == "per_block_count" else k
        q = p * (k_ref - 1) / (k - 1)
        assert inter_block_scale(k, k_range if scaling == "per_block_count" else None) == (k_ref, (k_ref - 1) / (k - 1))
        pairs = reps * math.comb(k, 2) * n * n
        edges = sum(g.number_of_edges() for g in graphs)
        lo, hi = stats.binom.ppf([0.0005, 0.9995], pairs, q)
        assert lo <= edges <= hi, (k, edges, lo, hi)
        per_node = 2 * edges / (reps * k * n)  # inter-block degree; closed form p_eff (k − 1) n
        expected = p * (k_ref - 1) * n
        assert per_node == pytest.approx(expected, rel=0.35 if k > 2 else 0.6)
    assert inter_block_scale(1, k_range) == (1, 1.0) and inter_block_scale(3, (2, 5)) == (3, 1.0)


def test_inter_block_scaling_is_checked_and_records_the_training_block_counts(trained):
    model, _ = trained
    lo, hi = model.metadata["block_counts"]
    assert 1 <= lo <= hi
    with pytest.raises(InvalidInputError, match="inter_block_scaling"):
        model.sample(1, n_nodes=20, inter_block_scaling="bogus")


def test_graphs_reduction_is_the_mean_over_graphs_of_each_graphs_own_loss(trained):
    """``loss_reduction="graphs"`` (the per-example loss DDP reproduces): on a batch of graphs with different block
    counts it is the mean of the loss each graph has alone (same per-sample streams), unlike the block mean."""
    from scigen.core import streams
    from scigen.graphs.sbgd.data import collate
    from scigen.graphs.sbgd.objective import sbgd_loss

    model, _ = trained
    graphs = sbm_graphs(3, min_blocks=1, max_blocks=3, min_size=6, max_size=14, p_in=0.6, p_out=0.05, seed=3)
    ds = model.prepare_data(graphs, role="val_data")
    items, keys = [ds[k] for k in range(3)], [4, 11, 7]
    assert len({it["x"].shape[0] for it in items}) > 1  # graphs of different block counts
    proc, net = model.process.bind(model.network), model.network

    def loss(idx, reduction):
        with torch.no_grad(), streams.sample_streams(streams.SampleStreams(0, [keys[k] for k in idx])):
            return float(sbgd_loss(proc, net, collate([items[k] for k in idx]), 1.0, reduction))

    alone = [loss([k], "blocks") for k in range(3)]
    assert loss([0, 1, 2], "graphs") == pytest.approx(sum(alone) / 3, rel=1e-5)
    assert loss([0, 1, 2], "blocks") != pytest.approx(sum(alone) / 3, rel=1e-3)
