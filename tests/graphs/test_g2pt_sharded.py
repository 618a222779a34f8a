"""G2PT sampling keyed by sample index (issue 33.3): sequence ``i`` of ``sample(n, seed=s)`` draws its tokens from
its own stream keyed by ``(s, i)`` (one uniform per step, inverse CDF), so it is the same drawn alone, among ``n``,
in batches of any size, or on either of two processes (``devices=2``).

Tokens are integers, so the comparisons are exact: a keyed uniform could only pick another token if the logits
of a row moved by float rounding across a CDF boundary it lies within ~1e-7 of (the batch's other rows do not
enter a row's logits; only the matmul blocking may differ)."""

from __future__ import annotations

import json
import textwrap

import pytest
import torch

from scigen.graphs.data import tree_graphs
from scigen.graphs.g2pt import G2PT
from scigen.graphs.g2pt.sampling import inverse_cdf

TINY = dict(family="tree", copies=4, train={"batch_size": 16, "warmup_steps": 2, "progress": False})


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    data = [g for n in range(5, 9) for g in tree_graphs(6, n, seed=n)]
    model = G2PT(G2PT.Config.preset("tiny", **TINY)).fit(data, max_steps=20)
    path = tmp_path_factory.mktemp("g2pt") / "model"
    model.save(path)
    return model, path


def test_inverse_cdf_draws_the_categorical():
    """Frequencies of the inverse-CDF draw from uniforms match p within 4 binomial sigmas; p = 0 is never drawn."""
    p = torch.tensor([[0.5, 0.0, 0.2, 0.3, 0.0]])
    n = 20000
    u = torch.rand(n, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    k = inverse_cdf(p.expand(n, -1) * 3.0, u)  # unnormalised rows
    freq = torch.bincount(k, minlength=5).double() / n
    assert freq[1] == 0 and freq[4] == 0
    assert (freq - p[0]).abs().max() <= 4 * torch.sqrt(p[0] * (1 - p[0]) / n).max()
    # the boundaries: u just below the first mass (0.5) picks 0, at it picks 2; u -> 1 picks the last positive
    edge = inverse_cdf(p.expand(3, -1), torch.tensor([0.4999, 0.5, 1 - 2**-53], dtype=torch.float64))
    assert edge.tolist() == [0, 2, 3]


def test_sample_to_writes_the_token_sequences_of_sample(trained, tmp_path):
    """``sample_to`` (chunks of 3): sequence ``i`` of ``sample`` as tokens padded to the block size, which decode to
    ``sample``'s graph ``i``."""
    import networkx as nx

    from scigen.core.system.shard_writer import load_sharded_samples
    from scigen.graphs.g2pt.tokenizer import decode

    model = trained[0] if isinstance(trained, tuple) else trained
    got = load_sharded_samples(model.sample_to(tmp_path / "g", 7, seed=5, chunk_size=3))
    assert got["tokens"].shape == (7, model.network.block_size)
    seqs = model.sample_sequences(7, seed=5)
    assert [row[:k].tolist() for row, k in zip(got["tokens"], got["length"], strict=True)] == seqs
    for row, k, g in zip(got["tokens"], got["length"], model.sample(7, seed=5), strict=True):
        assert nx.utils.graphs_equal(decode(row[:k].tolist(), model.vocab), g)

def test_the_first_k_of_n_sequences_are_the_k_sequences(trained):
    model, _ = trained
    big = model.sample_sequences(9, seed=7, batch_size=4)  # 3 batches: rows end at different steps
    small = model.sample_sequences(3, seed=7)
    assert small == big[:3]
    assert model.sample_sequences(9, seed=7) == big  # one batch of 9: the same sequences
    assert model.sample_sequences(3, seed=8) != small
    # with the grammar every sequence decodes to a graph
    assert all(g is not None for g in model.sample(9, seed=7, batch_size=4))


SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    from scigen.graphs.g2pt import G2PT

    if __name__ == "__main__":
        model = G2PT.load(sys.argv[1])
        seqs = model.sample_sequences(7, seed=5, devices=2, batch_size=3)
        graphs = model.sample(7, seed=5, devices=2)
        edges = [sorted(map(sorted, g.edges())) for g in graphs]
        with open(os.path.join(sys.argv[2], f"rank{int(os.environ.get('LOCAL_RANK', 0))}.json"), "w") as f:
            json.dump({"seqs": seqs, "edges": edges, "nodes": [g.number_of_nodes() for g in graphs]}, f)
    """
)


@pytest.mark.slow  # the graphs domain's default-suite 2-process test is SBGD's (the cheapest)
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed not built")
def test_two_processes_draw_the_sequences_of_one(trained, tmp_path, run_script):
    model, path = trained
    run_script(tmp_path / "run.py", path, tmp_path, cwd=tmp_path, text=SCRIPT)
    seqs = model.sample_sequences(7, seed=5)
    graphs = model.sample(7, seed=5)
    for r in (0, 1):
        got = json.loads((tmp_path / f"rank{r}.json").read_text())
        assert got["seqs"] == seqs
        assert got["nodes"] == [g.number_of_nodes() for g in graphs]
        assert got["edges"] == [sorted(map(sorted, g.edges())) for g in graphs]
