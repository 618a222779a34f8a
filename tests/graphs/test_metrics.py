"""Graph metrics: orbit counts vs brute-force enumeration, Gaussian-TV MMD² (zero on itself, a hand
computation), validity checks, uniqueness / novelty / V.U.N."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from scigen.graphs.data import erdos_renyi_like, planar_graphs, sbm_graphs, tree_graphs
from scigen.graphs.metrics import (
    gaussian_tv_mmd2,
    graph_mmds,
    is_lobster_graph,
    is_planar_graph,
    is_sbm_graph,
    mmd_degree,
    novelty,
    orbit_counts,
    uniqueness,
    vun,
)

# graphlet templates with each node's orbit (ORCA numbering), matched by isomorphism
TEMPLATES = [
    (nx.path_graph(3), {0: 1, 1: 2, 2: 1}),
    (nx.complete_graph(3), {0: 3, 1: 3, 2: 3}),
    (nx.path_graph(4), {0: 4, 1: 5, 2: 5, 3: 4}),
    (nx.star_graph(3), {0: 7, 1: 6, 2: 6, 3: 6}),
    (nx.cycle_graph(4), {0: 8, 1: 8, 2: 8, 3: 8}),
    (nx.Graph([(0, 1), (1, 2), (0, 2), (2, 3)]), {3: 9, 0: 10, 1: 10, 2: 11}),
    (nx.Graph([(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)]), {1: 12, 3: 12, 0: 13, 2: 13}),
    (nx.complete_graph(4), {0: 14, 1: 14, 2: 14, 3: 14}),
]


def brute_force_orbits(g: nx.Graph) -> np.ndarray:
    nodes = list(g.nodes)
    idx = {v: i for i, v in enumerate(nodes)}
    out = np.zeros((len(nodes), 15), dtype=np.int64)
    out[:, 0] = [g.degree(v) for v in nodes]
    for k in (3, 4):
        for sub in itertools.combinations(nodes, k):
            h = g.subgraph(sub)
            if not nx.is_connected(h):
                continue
            for tmpl, orbit in TEMPLATES:
                if tmpl.number_of_nodes() != k:
                    continue
                gm = nx.algorithms.isomorphism.GraphMatcher(h, tmpl)
                if gm.is_isomorphic():
                    for v, t in gm.mapping.items():
                        out[idx[v], orbit[t]] += 1
                    break
            else:
                raise AssertionError("unclassified graphlet")
    return out


def _odd_graph() -> nx.Graph:
    # string labels, a self-loop (ignored), an isolated node, two components, a K4 and a diamond
    g = nx.relabel_nodes(nx.complete_graph(4), {i: f"k{i}" for i in range(4)})
    g.add_edges_from([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "a"), ("d", "d"), ("d", "e")])
    g.add_node("iso")
    return g


@pytest.mark.parametrize("g", [nx.gnp_random_graph(11, 0.4, seed=1), nx.gnp_random_graph(9, 0.7, seed=2),
                               nx.gnp_random_graph(12, 0.85, seed=5), nx.gnp_random_graph(14, 0.2, seed=6),
                               nx.petersen_graph(), nx.karate_club_graph().subgraph(range(14)).copy(),
                               planar_graphs(1, 13, seed=4)[0], _odd_graph()])
def test_orbit_counts_equal_brute_force(g):
    g_simple = g.copy()
    g_simple.remove_edges_from(nx.selfloop_edges(g_simple))
    want = brute_force_orbits(g_simple)
    np.testing.assert_array_equal(orbit_counts(g), want)


def test_orbit_counts_fast_enough():
    # 40 planar 64-node graphs (the SPECTRE test set size): milliseconds per graph, not seconds
    import time

    gs = planar_graphs(40, 64, seed=0)
    t0 = time.perf_counter()
    counts = [orbit_counts(g) for g in gs]
    assert time.perf_counter() - t0 < 15.0  # ~0.3 s on one quiet core
    # on a real-size graph: orbit 0 = degree, orbit 3 = networkx's triangle count per node
    g, c = gs[0], counts[0]
    np.testing.assert_array_equal(c[:, 0], [d for _, d in g.degree])
    np.testing.assert_array_equal(c[:, 3], [nx.triangles(g, v) for v in g.nodes])


def test_orbit_closed_forms():
    # K_n: each node is in C(n-1,2) triangles and C(n-1,3) K4s; nothing else
    c = orbit_counts(nx.complete_graph(6))
    assert (c[:, 3] == 10).all() and (c[:, 14] == 10).all() and c[:, [1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]].sum() == 0
    # star K_{1,5}: centre is in C(5,3) claws as orbit 7
    s = orbit_counts(nx.star_graph(5))
    assert s[0, 7] == 10 and s[0, 2] == 10 and (s[1:, 6] == 6).all()


def test_mmd_zero_on_itself_and_hand_computation():
    gs = planar_graphs(6, 20, seed=0)
    for v in graph_mmds(gs, gs).values():
        assert v == pytest.approx(0.0, abs=1e-12)
    # degree histograms: path P3 -> [0, 2, 1] / 3 ; triangle K3 -> [0, 0, 3] / 3
    # TV = 1/2 (|2/3 - 0| + |1/3 - 1|) = 2/3 ;  k = exp(-(2/3)^2 / 2)
    k = np.exp(-(2 / 3) ** 2 / 2)
    assert mmd_degree([nx.path_graph(3)], [nx.complete_graph(3)]) == pytest.approx(2 - 2 * k)
    # two sets of two: X = {P3, P3}, Y = {P3, K3}: Kxx = 1, Kyy = (2 + 2k)/4, Kxy = (1 + k)/2
    want = 1 + (2 + 2 * k) / 4 - 2 * (1 + k) / 2
    assert mmd_degree([nx.path_graph(3)] * 2, [nx.path_graph(3), nx.complete_graph(3)]) == pytest.approx(want)
    # unnormalised vectors (orbit-style): TV of [0, 30] vs [30, 0] = 30, sigma 30 -> exp(-1/2)
    assert gaussian_tv_mmd2([np.array([0, 30.0])], [np.array([30.0, 0])], sigma=30, hist=False) == pytest.approx(
        2 - 2 * np.exp(-0.5))


def test_mmd_separates_families():
    p, t = planar_graphs(8, 24, seed=1), tree_graphs(8, 24, seed=1)
    p2 = planar_graphs(8, 24, seed=2)
    a, b = graph_mmds(p, p2), graph_mmds(p, t)
    for key in a:
        assert b[key] > 3 * a[key]


def test_validity_checks():
    assert is_planar_graph(planar_graphs(1, 30)[0]) and not is_planar_graph(nx.complete_graph(5))
    assert not is_planar_graph(nx.Graph([(0, 1), (2, 3)]))  # disconnected
    assert is_lobster_graph(nx.path_graph(6))
    spider = nx.Graph([(0, 1), (1, 2), (2, 3), (0, 4), (4, 5), (5, 6), (0, 7), (7, 8), (8, 9)])
    assert not is_lobster_graph(spider)  # three legs of length 3: no backbone is within distance 2 of all
    hair = nx.path_graph(5)
    hair.add_edges_from([(2, 10), (10, 11), (11, 12)])  # backbone 0-1-2-10-11-12 covers nodes 3, 4
    assert is_lobster_graph(hair)
    sbm = sbm_graphs(10, seed=3)
    assert np.mean([is_sbm_graph(g) for g in sbm]) >= 0.7
    assert not any(is_sbm_graph(g) for g in erdos_renyi_like(sbm, 5, seed=0))


def test_uniqueness_novelty_vun_hand_example():
    a = nx.path_graph(4)
    b = nx.relabel_nodes(nx.path_graph(4), {0: 3, 1: 0, 2: 2, 3: 1})  # isomorphic to a
    c = nx.star_graph(3)
    d = nx.cycle_graph(4)
    gen = [a, b, c, d]
    assert uniqueness(gen) == 0.75
    assert novelty(gen, [c]) == 0.75
    assert vun(gen, [c], "tree") == {"validity": 0.75, "uniqueness": 0.75, "novelty": 0.75, "VUN": 0.25}
    typed = [nx.Graph([(0, 1, {"type": "SINGLE"})]), nx.Graph([(0, 1, {"type": "DOUBLE"})])]
    assert uniqueness(typed) == 1.0


def test_placeholder_types_of_samples_count_as_untyped():
    """G2PT / SBGD samples of a generic family carry the placeholder types "NODE" / "EDGE"; against untyped
    training graphs they compare by structure (before this, every such sample counted as novel)."""
    sample = nx.star_graph(3)
    nx.set_node_attributes(sample, "NODE", "type")
    nx.set_edge_attributes(sample, "EDGE", "type")
    assert novelty([sample], [nx.star_graph(3)]) == 0.0 and novelty([sample], [nx.path_graph(4)]) == 1.0
    assert uniqueness([sample, nx.star_graph(3)]) == 0.5
    typed = nx.star_graph(3)
    nx.set_node_attributes(typed, "C", "type")
    assert novelty([typed], [nx.star_graph(3)]) == 1.0  # a real type still tells them apart
