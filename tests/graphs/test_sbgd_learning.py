"""SBGD learns SBM graphs (slow: trains for minutes on a CPU core).

* Learnability: after 800 steps of SBGD-tiny on the default SBM data, the spectral and 4-node-orbit
  MMD² to the test graphs are below those of a size/density-matched Erdős–Rényi baseline, and the
  mean clustering coefficient is closer to the test graphs' (ER has none of the community structure).
  Measured (2026-12-02): spectre 0.0127 vs ER 0.0248, orbit 0.024 vs 0.292, mean clustering 0.445 vs
  ER 0.210 (test 0.438). Degree and clustering-histogram MMD² are not asserted: a density-matched ER
  is already at the floor there (degree 0.0044 SBGD vs 0.0041 ER, clustering 0.0501 vs 0.0505).
* Size generalisation: at twice the largest training size, SBGD's mean degree and mean clustering
  are closer to held-out SBM graphs of that size (more communities of the same kind) than those of
  the full-graph baseline trained the same way. Measured (2026-12-02, N = 88): mean degree 8.36
  SBGD / 14.33 full-graph / 7.51 held-out, mean clustering 0.366 / 0.186 / 0.340; unchanged with
  ``inter_block_scaling='per_block_count'`` (2026-12-02), as N = 88 needs no block count outside training's.
* At N ≈ 100 (SBM graphs of 3–5 communities of 20–30 nodes, the benchmark's setting: METIS blocks of
  at most 32 nodes, 1000 steps), SBGD's clustering, 4-node-orbit and spectral MMD² are below 0.9× those
  of the Erdős–Rényi baseline. Measured (2026-12-03) with data seeds 1 / 11 / 21 (train; test seed + 1),
  SBGD/ER ratios: clustering 0.77 / 0.78 / 0.75, orbit 0.51 / 0.46 / 0.67, spectre 0.54 / 0.74 / 0.49
  (seed 11, asserted: 0.128 vs 0.163, 0.171 vs 0.371, 0.0160 vs 0.0215). Degree MMD² is not asserted:
  both are near the floor and a density-matched ER is lower there (0.0029 SBGD vs 0.0009 ER at seed 11).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from scigen.graphs.data import erdos_renyi_like, sbm_graphs, spectre_split
from scigen.graphs.metrics import graph_mmds, mmd_orbit, mmd_spectral
from scigen.graphs.sbgd import SBGD


def _clustering(graphs) -> float:
    return float(np.mean([nx.average_clustering(g) for g in graphs]))


def _degree(graphs) -> float:
    return float(np.mean([2 * g.number_of_edges() / g.number_of_nodes() for g in graphs]))


@pytest.fixture(scope="module")
def data():
    return spectre_split(SBGD.default_data())


def _fit(train, **fields):
    return SBGD(SBGD.Config.preset("tiny", train={"progress": False}, **fields)).fit(train, max_steps=800,
                                                                                      logger=None)


@pytest.mark.slow
def test_sbgd_beats_erdos_renyi_on_community_structure(data):
    train, _, test = data
    model = _fit(train)
    gen = model.sample(len(test), seed=1, n_nodes=[g.number_of_nodes() for g in test])
    er = erdos_renyi_like(train, len(test), seed=2)
    assert mmd_spectral(test, gen) < mmd_spectral(test, er)
    assert mmd_orbit(test, gen) < mmd_orbit(test, er)
    assert abs(_clustering(gen) - _clustering(test)) < abs(_clustering(er) - _clustering(test))


@pytest.mark.slow
def test_sbgd_generalises_to_twice_the_size_better_than_the_full_graph_baseline(data):
    train, _, _ = data
    n = 2 * max(g.number_of_nodes() for g in train)
    held = [g for g in sbm_graphs(60, min_blocks=5, max_blocks=8, min_size=8, max_size=16, p_in=0.5, p_out=0.02,
                                  seed=9) if abs(g.number_of_nodes() - n) <= 12][:8]
    errors = {}
    for name, fields in (("sbgd", {}), ("full", {"full_graph": True})):
        gen = _fit(train, **fields).sample(6, seed=3, n_nodes=n)
        errors[name] = (abs(_degree(gen) - _degree(held)), abs(_clustering(gen) - _clustering(held)))
    assert errors["sbgd"][0] < errors["full"][0] and errors["sbgd"][1] < errors["full"][1], errors


@pytest.mark.slow
def test_sbgd_at_n_100_beats_erdos_renyi_on_the_community_mmds():
    shape = {"min_blocks": 3, "max_blocks": 5, "min_size": 20, "max_size": 30, "p_in": 0.3, "p_out": 0.01}
    train, test = sbm_graphs(32, seed=11, **shape), sbm_graphs(16, seed=12, **shape)
    config = SBGD.Config.preset("tiny", block_size=32, partition="metis", steps=50,
                                train={"progress": False, "batch_size": 4})
    model = SBGD(config).fit(train, max_steps=1000, logger=None)
    gen = model.sample(len(test), seed=1, n_nodes=[g.number_of_nodes() for g in test])
    ours, er = graph_mmds(test, gen), graph_mmds(test, erdos_renyi_like(train, len(test), seed=2))
    for key in ("clustering", "orbit", "spectre"):
        assert ours[key] < 0.9 * er[key], (key, ours, er)
