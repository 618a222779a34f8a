"""G2PT tokenizer: encode -> decode is the identity up to isomorphism (every family, molecules,
isolated nodes); degree ordering (Alg. 1) and BFS on hand-worked examples; the grammar mask makes every
sample of an untrained model decodable; bad inputs."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.graphs.convert import smiles_to_graphs
from scigen.graphs.data import generate
from scigen.graphs.g2pt import Vocab, decode, edge_order, encode, encode_dataset
from scigen.graphs.g2pt.grammar import GrammarMask
from scigen.graphs.g2pt.model import G2PTNet
from scigen.graphs.g2pt.sampling import generate as generate_ids
from scigen.graphs.g2pt.sampling import node_prompt

MATCH = dict(node_match=lambda a, b: a.get("type", "NODE") == b.get("type", "NODE"),
             edge_match=lambda a, b: a.get("type", "EDGE") == b.get("type", "EDGE"))

SMALL = {"planar": dict(n_nodes=16), "sbm": dict(min_size=5, max_size=8, p_in=0.5, p_out=0.05), "tree": dict(n_nodes=16),
         "lobster": dict(mean_backbone=8, max_nodes=30), "community": {}}


@pytest.mark.parametrize("family", list(SMALL))
@pytest.mark.parametrize("ordering", ["deg", "bfs", "uniform"])
def test_roundtrip_every_generator(family, ordering):
    graphs = generate(family, 3, seed=4, **SMALL[family])
    vocab = Vocab.from_graphs(graphs)
    rng = np.random.default_rng(0)
    for g in graphs:
        ids = encode(g, vocab, ordering=ordering, rng=rng)
        n, m = g.number_of_nodes(), g.number_of_edges()
        assert len(ids) == 3 * n + 1 + 4 * m + 1
        assert nx.is_isomorphic(decode(ids, vocab, strict=True), g, **MATCH)


def test_roundtrip_molecules_and_isolated_nodes():
    from scigen.graphs.convert import graph_to_smiles

    graphs = smiles_to_graphs(["c1ccc2[nH]ccc2c1", "CC(=O)[O-].[NH4+]", "O=C(O)c1ccncc1Cl", "[Na+].[Cl-]"])
    vocab = Vocab.from_graphs(graphs)
    for g in graphs:
        back = decode(encode(g, vocab, rng=np.random.default_rng(1)), vocab, strict=True)
        assert nx.is_isomorphic(back, g, **MATCH) and graph_to_smiles(back) == graph_to_smiles(g)
    lonely = nx.empty_graph(3)  # no edges at all
    vocab = Vocab.from_graphs([lonely])
    ids = encode(lonely, vocab)
    assert ids[-2:] == [vocab.bog, vocab.eog] and decode(ids, vocab).number_of_nodes() == 3


def test_degree_ordering_hand_example():
    # triangle 0-1-2 with pendant 3 on node 2. Alg. 1 by hand: node 3 is the unique node of minimum
    # degree, so (3, 2) is removed first -> it is LAST after the reversal. Then 0, 1, 2 all have degree
    # 2 and any triangle edge may go; the remaining two edges form a path x-y-z, so the third removal
    # (sequence position 1) goes from an end (degree 1) to the middle y, which is also an endpoint of
    # the last removed edge (sequence position 0), while its source is not.
    g = nx.Graph([(0, 1), (1, 2), (0, 2), (2, 3)])
    seen = set()
    for seed in range(40):
        order = edge_order(g, "deg", np.random.default_rng(seed))
        assert order[-1] == (3, 2)
        assert {frozenset(e) for e in order[:3]} == {frozenset(e) for e in [(0, 1), (1, 2), (0, 2)]}
        first, second = order[0], order[1]
        assert second[1] in first and second[0] not in first
        seen.add(tuple(order))
    assert len(seen) > 3  # ties are broken at random
    # a path 0-1-2-3: the ends have the minimum degree 1, so the first removal (last in the sequence)
    # is an end edge.
    p = nx.path_graph(4)
    for seed in range(10):
        order = edge_order(p, "deg", np.random.default_rng(seed))
        assert {frozenset(e) for e in order} == {frozenset(e) for e in p.edges} and len(order) == 3
        assert frozenset(order[-1]) in ({0, 1}, {2, 3})


def test_bfs_hand_example():
    g = nx.Graph([(0, 2), (0, 1), (1, 2), (2, 3), (4, 5)])
    assert edge_order(g, "bfs") == [(0, 1), (0, 2), (1, 2), (2, 3), (4, 5)]


def test_grammar_mask_makes_untrained_samples_decodable():
    graphs = generate("tree", 4, seed=0, n_nodes=8)
    vocab = Vocab.from_graphs(graphs, max_nodes=10)
    torch.manual_seed(0)
    net = G2PTNet(len(vocab), 48, 1, 2, 16)
    seqs = generate_ids(net, vocab, 40, generator=torch.Generator().manual_seed(0))
    assert all(s[-1] == vocab.eog and len(s) <= 48 for s in seqs)
    graphs_out = [decode(s, vocab, strict=True) for s in seqs]
    assert all(g.number_of_nodes() >= 1 for g in graphs_out)
    assert len({len(s) for s in seqs}) > 3  # varied samples, not one forced path
    # top-k = 1 with temperature is greedy-like and still decodable; a node prompt fixes the node set
    prompt = node_prompt(vocab, 6)
    seqs = generate_ids(net, vocab, 8, top_k=1, prompt=prompt, generator=torch.Generator().manual_seed(0))
    assert all(decode(s, vocab, strict=True).number_of_nodes() == 6 for s in seqs)


def test_grammar_rejects_illegal_tokens_and_prompts():
    vocab = Vocab(4, ["NODE"], ["EDGE"])
    gm = GrammarMask(vocab, 1, 40)
    gm.step([vocab.boc])
    with pytest.raises(InvalidInputError, match="not allowed"):
        gm.step([vocab.idx0])  # an index where a node type is required
    # after two nodes and the edge (0, 1), that edge cannot be repeated and IDX_0 cannot pair with itself
    gm = GrammarMask(vocab, 1, 40)
    for t in node_prompt(vocab, 2) + [vocab.bog, vocab.idx0]:
        gm.step([t])
    allowed = gm.mask()[0]
    assert allowed[vocab.idx0 + 1] and not allowed[vocab.idx0] and allowed.sum() == 1


def test_bad_inputs():
    vocab = Vocab(4, ["C"], ["SINGLE"])
    with pytest.raises(InvalidInputError, match="at most 4"):
        encode(nx.path_graph(6), vocab)
    g = nx.Graph()
    g.add_node(0, type="N")
    with pytest.raises(InvalidInputError, match="unknown node type 'N'"):
        encode(g, vocab)
    with pytest.raises(InvalidInputError, match=r"2 of 3 graphs.*\n.*graphs\[1\].*\n.*graphs\[2\]"):
        encode_dataset([nx.empty_graph(2, nx.Graph()), nx.path_graph(9), nx.path_graph(7)], Vocab(4, ["NODE"], ["EDGE"]))
    with pytest.raises(InvalidInputError, match="directed"):
        encode_dataset([nx.DiGraph([(0, 1)])], vocab)
    assert decode([vocab.boc, vocab.bog], vocab) is None
    with pytest.raises(InvalidInputError, match="cannot decode"):
        decode([vocab.boc, vocab.node0, vocab.idx0, vocab.eoc, vocab.bog, vocab.idx0, vocab.idx0, vocab.edge0,
                vocab.eog], vocab, strict=True)  # self-loop


# ------------------------------------------------------------------ node_ids="first_seen" (ours)
@pytest.mark.parametrize("family", list(SMALL))
@pytest.mark.parametrize("ordering", ["deg", "bfs", "uniform"])
def test_first_seen_roundtrip_and_labels_in_order_of_appearance(family, ordering):
    graphs = generate(family, 3, seed=5, **SMALL[family])
    vocab = Vocab.from_graphs(graphs)
    rng = np.random.default_rng(2)
    for g in graphs:
        ids = encode(g, vocab, ordering=ordering, rng=rng, node_ids="first_seen")
        assert nx.is_isomorphic(decode(ids, vocab, strict=True), g, **MATCH)
        edge_ids = ids[3 * g.number_of_nodes() + 2:]  # after <eoc> <bog>
        labels = [t - vocab.idx0 for k, t in enumerate(edge_ids) if k % 4 in (0, 1)]
        firsts = list(dict.fromkeys(labels))
        assert firsts == list(range(len(firsts)))  # each new label is the next free one


def test_first_seen_tree_in_degree_order_is_leaf_attachment():
    # Alg. 1 removes a leaf's edge at every step, so reversed, every edge after the first joins a new
    # leaf (the next label, k + 1) to a node placed before it (label <= k)
    for g in generate("tree", 4, seed=1, n_nodes=20):
        vocab = Vocab.from_graphs([g])
        ids = encode(g, vocab, ordering="deg", rng=np.random.default_rng(3), node_ids="first_seen")
        edge_ids = ids[3 * 20 + 2:]
        pairs = [(edge_ids[4 * k] - vocab.idx0, edge_ids[4 * k + 1] - vocab.idx0) for k in range(19)]
        assert pairs[0] == (0, 1)
        assert all(a == k + 1 and b <= k for k, (a, b) in enumerate(pairs[1:], start=1))


def test_first_seen_keeps_types_and_isolated_nodes():
    graphs = smiles_to_graphs(["CC(=O)[O-].[NH4+]", "O=C(O)c1ccncc1Cl"])
    g = nx.disjoint_union(graphs[1], nx.empty_graph(2))  # two isolated nodes, labelled last
    nx.set_node_attributes(g, {n: g.nodes[n].get("type", "C") for n in g}, "type")
    vocab = Vocab.from_graphs(graphs + [g])
    for h in graphs + [g]:
        back = decode(encode(h, vocab, rng=np.random.default_rng(4), node_ids="first_seen"), vocab, strict=True)
        assert nx.is_isomorphic(back, h, **MATCH)
    with pytest.raises(InvalidInputError, match="node_ids"):
        encode(graphs[0], vocab, node_ids="sorted")
