"""V.U.N. by hand on a handful of graphs (ours and PolyGraph's), PolyGraph Discrepancy on sets that are and are not
alike, and PolyGraph's procedural sets under our validity rules."""

from __future__ import annotations

import networkx as nx
import pytest

from scigen.core.errors import InvalidInputError
from scigen.graphs.metrics import is_lobster_graph, is_planar_graph, vun


def _handful():
    """Seven graphs and a training set of one (P4), validity = "is a tree":

    C4 (invalid, novel, first of its class), C4 relabelled (a repeat), P4 (valid, in training), K_{1,3}
    (valid, novel, first: counts), K4 (invalid), K_{1,3} relabelled (a repeat), P5 (valid, novel, first: counts).
    valid 4/7 (P4, both stars, P5), unique 5/7 (C4, P4, K_{1,3}, K4, P5), novel 6/7 (all but P4), VUN 2/7."""
    relabel = lambda g, k: nx.relabel_nodes(g, {v: (v + k) % g.number_of_nodes() for v in g})  # noqa: E731
    gen = [nx.cycle_graph(4), relabel(nx.cycle_graph(4), 1), nx.path_graph(4), nx.star_graph(3),
           nx.complete_graph(4), relabel(nx.star_graph(3), 2), nx.path_graph(5)]
    return gen, [nx.path_graph(4)]


def test_vun_by_hand():
    gen, train = _handful()
    assert vun(gen, train, "tree") == pytest.approx({"validity": 4 / 7, "uniqueness": 5 / 7, "novelty": 6 / 7,
                                                     "VUN": 2 / 7})


def test_polygraph_vun_by_hand_and_equal_to_ours():
    pytest.importorskip("polygraph")
    from scigen.graphs.metrics.pgd import polygraph_vun

    gen, train = _handful()
    assert polygraph_vun(gen, train, "tree") == pytest.approx({"unique": 5 / 7, "novel": 6 / 7, "unique_novel": 4 / 7,
                                                               "valid": 4 / 7, "VUN": 2 / 7})
    assert set(polygraph_vun(gen, train, None)) == {"unique", "novel", "unique_novel"}


def test_procedural_sets_pass_our_validity_rules():
    pytest.importorskip("polygraph")
    from scigen.graphs.metrics.pgd import procedural_graphs

    planar = procedural_graphs("planar", "test", 12)
    assert len(planar) == 12 and all(g.number_of_nodes() == 64 and is_planar_graph(g) for g in planar)
    assert all(is_lobster_graph(g) for g in procedural_graphs("lobster", "test", 12))
    sbm = procedural_graphs("sbm", "test", 6)
    assert all(40 <= g.number_of_nodes() <= 200 and nx.is_connected(g) for g in sbm)
    assert procedural_graphs("planar", "test", 12)[3].edges == planar[3].edges  # seeded: the same set again
    with pytest.raises(InvalidInputError, match="procedural sets are"):
        procedural_graphs("tree", "test", 4)
    with pytest.raises(InvalidInputError, match="split"):
        procedural_graphs("planar", "dev", 4)


def test_pgd_separates_unlike_sets_and_not_like_ones():
    pytest.importorskip("polygraph")
    from scigen.graphs.data import erdos_renyi_like, planar_graphs
    from scigen.graphs.metrics.pgd import DESCRIPTORS, pgd

    ref = planar_graphs(32, seed=1)
    same = pgd(ref, planar_graphs(32, seed=2))
    er = pgd(ref, erdos_renyi_like(ref, seed=3))  # same sizes and densities, no planar structure
    assert set(same) == {"PGD", *(f"PGD_{d}" for d in DESCRIPTORS)}
    assert all(0.0 <= v <= 1.0 for v in [*same.values(), *er.values()])
    assert same["PGD"] == max(v for k, v in same.items() if k != "PGD")
    assert er["PGD"] > 0.9 and same["PGD"] < 0.5, (same, er)
    with pytest.raises(InvalidInputError, match="at least 8"):
        pgd(ref[:5], ref[:5])


@pytest.mark.parametrize("system", ["sbgd", "g2pt"])
def test_evaluate_reports_pgd_and_polygraph_vun_beside_ours(system):
    pytest.importorskip("polygraph")
    from scigen.graphs.data import sbm_graphs, tree_graphs

    if system == "sbgd":
        from scigen.graphs.sbgd import SBGD

        data = sbm_graphs(12, min_blocks=2, max_blocks=2, min_size=6, max_size=8, p_in=0.6, p_out=0.05, seed=0)
        model = SBGD(SBGD.Config.preset("tiny", block_size=8, train={"progress": False})).fit(data, max_steps=2,
                                                                                             logger=None)
    else:
        from scigen.graphs.g2pt import G2PT

        data = [g for n in range(5, 9) for g in tree_graphs(3, n, seed=n)]
        model = G2PT(G2PT.Config.preset("tiny", family="tree", train={"batch_size": 8, "progress": False}))
        model.fit(data, max_steps=2, logger=None)
    scores = model.evaluate(data, seed=0, orbit=False)
    assert {"PGD", "PGD_degree", "VUN[polygraph]", "VUN", "degree", "spectre"} <= set(scores)
    assert scores["VUN[polygraph]"] == pytest.approx(scores["VUN"])
    assert "PGD" not in model.evaluate(data, seed=0, orbit=False, polygraph=False)
