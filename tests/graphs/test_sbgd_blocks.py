"""SBGD's block space: partitions cover every node once with blocks <= b, decomposition and
reassembly are exact inverses, the block-count rule hits the target size, the state projection is
an orthogonal projection."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import torch

from scigen.core.errors import InvalidInputError, UnknownNameError
from scigen.graphs.data import sbm_graphs
from scigen.graphs.sbgd import PARTITIONERS, check_cover, decompose, partition, reassemble
from scigen.graphs.sbgd.model import pair_mask, project
from scigen.graphs.sbgd.sizes import block_plan


def _graphs():
    disconnected = nx.disjoint_union(nx.gnp_random_graph(30, 0.2, seed=1), nx.cycle_graph(9))
    disconnected.add_node(100)  # an isolated node with a non-contiguous label
    labelled = nx.relabel_nodes(nx.gnp_random_graph(40, 0.1, seed=2), {i: f"v{i}" for i in range(40)})
    return [*sbm_graphs(3, seed=0), disconnected, labelled, nx.empty_graph(7), nx.path_graph(1)]


@pytest.mark.parametrize("method", PARTITIONERS)
@pytest.mark.parametrize("b", [1, 5, 16])
def test_partition_covers_every_node_exactly_once_with_blocks_at_most_b(method, b):
    for g in _graphs():
        blocks = partition(g, b, method, seed=0)
        flat = [v for blk in blocks for v in blk]
        assert sorted(map(str, flat)) == sorted(map(str, g.nodes)) and len(flat) == len(set(flat))
        assert all(1 <= len(blk) <= b for blk in blocks)
        check_cover(g, blocks)


def test_block_size_at_least_the_graph_is_the_whole_graph_and_partitions_find_planted_blocks():
    g = sbm_graphs(1, min_blocks=3, max_blocks=3, min_size=20, max_size=20, p_in=0.6, p_out=0.0, seed=3)[0]
    assert partition(g, g.number_of_nodes(), "metis") == [list(g.nodes)]
    planted = sorted(sorted(v for v in g if g.nodes[v]["block"] == c) for c in range(3))
    assert sorted(partition(g, 20, "metis")) == planted  # p_out = 0: the components are the blocks
    assert sorted(partition(g, 20, "spectral")) == planted
    # Louvain works per component, so each of its communities lies inside one planted block
    assert all(len({g.nodes[v]["block"] for v in blk}) == 1 for blk in partition(g, 20, "louvain"))


def test_partition_refuses_bad_arguments():
    with pytest.raises(UnknownNameError, match="partition method 'kmeans'"):
        partition(nx.path_graph(4), 2, "kmeans")
    with pytest.raises(InvalidInputError, match="block_size"):
        partition(nx.path_graph(4), 0)
    with pytest.raises(InvalidInputError, match="no nodes"):
        partition(nx.Graph(), 4)


@pytest.mark.parametrize("method", PARTITIONERS)
def test_reassembly_of_a_partitioned_graph_is_the_identity(method):
    rng = np.random.default_rng(0)
    for g in _graphs():
        g = g.copy()
        for v in g:
            g.nodes[v]["type"] = str(rng.integers(3))
        for u, v in g.edges:
            g.edges[u, v]["w"] = float(rng.random())
        back = reassemble(decompose(g, partition(g, 6, method)))
        assert nx.utils.graphs_equal(g, back)  # nodes, edges and all attributes
        assert set(back.nodes) == set(g.nodes)
    random_blocks = np.array_split(rng.permutation(40), 7)
    g = nx.gnp_random_graph(40, 0.3, seed=4)
    assert nx.utils.graphs_equal(g, reassemble(decompose(g, [[int(v) for v in b] for b in random_blocks])))


def test_decompose_refuses_a_bad_cover():
    g = nx.path_graph(4)
    with pytest.raises(InvalidInputError, match="in blocks 0 and 1"):
        decompose(g, [[0, 1], [1, 2, 3]])
    with pytest.raises(InvalidInputError, match="in no block"):
        decompose(g, [[0, 1]])
    with pytest.raises(InvalidInputError, match="not in the graph"):
        decompose(g, [[0, 1, 2, 3, 9]])


@pytest.mark.parametrize("n", [1, 7, 16, 17, 100, 1000])
def test_block_plans_add_up_to_the_target(n):
    rng = np.random.default_rng(0)
    bal = block_plan(n, 16, "balanced", [], rng)
    assert sum(bal) == n and max(bal) <= 16 and max(bal) - min(bal) <= 1 and len(bal) == -(-n // 16)
    hist = [0] * 17
    hist[10], hist[16] = 5, 5
    emp = block_plan(n, 16, "empirical", hist, rng)
    assert sum(emp) == n and all(1 <= s <= 16 for s in emp)
    assert all(s in (10, 16) for s in emp[:-1])  # only the last block is cut to fit


def test_the_state_projection_is_orthogonal_and_idempotent():
    g = torch.Generator().manual_seed(0)
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0]], dtype=torch.bool)
    x, y = torch.randn(2, 4, 6, generator=g), torch.randn(2, 4, 6, generator=g)
    px = project(x, mask)
    torch.testing.assert_close(project(px, mask), px)
    torch.testing.assert_close((px * y).sum(), (x * project(y, mask)).sum())  # self-adjoint
    a = px[..., :4]
    torch.testing.assert_close(a, a.transpose(1, 2))
    assert (a[~pair_mask(mask)] == 0).all() and (px[..., 4:][~mask] == 0).all()
