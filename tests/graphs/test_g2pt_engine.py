"""G2PT on the engine (issue 13) and the shared vocabulary (issue 14), checked against the code it
replaced and against PyG / networkx:

* old vs new: ``G2PT.fit`` through ``System.train_network`` gives the same per-step losses and
  weights as the old hand-written glue (``_reference_g2pt.reference_fit``: AdamW groups, betas,
  cosine schedule, warm-up rule, clipping, seeds, the data seed that moves with the trained steps),
  for a first and a second ``fit``; the sampler with a ``torch.Generator`` gives the same graphs as the old
  sampler from the same seed (``sample`` draws from keyed streams instead: ``test_g2pt_sharded.py``);
* presets, per-call options that never write into the config, the persisted history, the one
  untrained error;
* PyG ``Data`` / ``Dataset`` in (the same training as the networkx graphs they came from) and
  ``output="pyg"`` out (round trip through ``torch_geometric.utils.to_networkx``).
"""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import networkx as nx
import pytest
import torch

from scigen.core.errors import InvalidInputError, NotTrainedError
from scigen.graphs.data import tree_graphs
from scigen.graphs.g2pt import G2PT
from scigen.graphs.g2pt.sampling import generate
from scigen.graphs.g2pt.tokenizer import decode

_spec = importlib.util.spec_from_file_location("_reference_g2pt", Path(__file__).with_name("_reference_g2pt.py"))
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)


def _config(**overrides):
    train = {"batch_size": 8, "warmup_steps": 10, "progress": False} | overrides.pop("train", {})
    return G2PT.Config.preset("tiny", train=train, **({"family": "tree", "copies": 4} | overrides))


def _data():
    return [g for n in range(4, 8) for g in tree_graphs(6, n, seed=n)]


def _old_fit(network, model, graphs, *, steps, trained_steps, **options):
    c = model.config
    return ref.reference_fit(network, graphs, model.vocab, ordering=c.ordering, copies=c.copies, seed=c.train.seed,
                             trained_steps=trained_steps, max_steps=steps, lr=options.pop("lr", c.train.lr),
                             batch_size=c.train.batch_size, grad_clip=c.train.grad_clip,
                             warmup_steps=c.train.warmup_steps, weight_decay=c.train.weight_decay, betas=c.betas,
                             progress=False, **options)


def _same_weights(a: torch.nn.Module, b: torch.nn.Module) -> None:
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys()
    for k in sa:
        torch.testing.assert_close(sa[k], sb[k], rtol=1e-5, atol=1e-6, msg=k)


@pytest.fixture(scope="module")
def pair():
    """A new-API model trained 2 × (30 + 12) steps and the old glue run on a copy of the same network."""
    data = _data()
    model = G2PT(_config())
    model._setup(data)
    old_net = copy.deepcopy(model.network)
    model.fit(data, max_steps=30)
    old = _old_fit(old_net, model, data, steps=30, trained_steps=0)
    first = (list(old.losses), list(model.history.losses))
    # a second fit continues with fresh permutations (data seed + 30) and a per-call lr
    model.fit(data[:10], max_steps=12, lr=1e-3)
    old2 = _old_fit(old.module, model, data[:10], steps=12, trained_steps=30, lr=1e-3)
    return model, old2.module, first, list(old2.losses)


def test_fit_equals_the_old_glue_loss_for_loss_and_weight_for_weight(pair):
    model, old_net, (old_losses, new_losses), old2_losses = pair
    assert len(new_losses) == 30
    torch.testing.assert_close(torch.tensor(new_losses), torch.tensor(old_losses), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(torch.tensor(model.history.losses[30:]), torch.tensor(old2_losses),
                               rtol=1e-5, atol=1e-6)
    _same_weights(model.network, old_net)
    # the losses moved: the test compares two trainings, not two copies of an untrained network
    assert new_losses[-1] < 0.8 * new_losses[0]


@pytest.mark.parametrize("kwargs", [{}, {"temperature": 0.7, "top_k": 5}, {"prompt_nodes": 6}, {"grammar": False}])
def test_sample_equals_the_old_sampler_from_the_same_seed(pair, kwargs):
    model, old_net, _, _ = pair
    vocab = model.vocab
    kw = dict(kwargs)
    prompt = None
    if "prompt_nodes" in kw:
        from scigen.graphs.g2pt.sampling import node_prompt

        prompt = node_prompt(vocab, kw.pop("prompt_nodes"))
    old = ref.reference_generate(old_net, vocab, 12, temperature=kw.get("temperature", model.config.temperature),
                                 top_k=kw.get("top_k", model.config.top_k), grammar=kw.get("grammar", True),
                                 prompt=prompt, generator=torch.Generator().manual_seed(7))
    # the sampler with a torch.Generator draws as the old one did (torch.multinomial); ``sample`` itself now
    # draws each sequence from its own keyed stream (issue 33.3; tests/graphs/test_g2pt_sharded.py)
    seqs = generate(model.network, vocab, 12, temperature=kw.get("temperature", model.config.temperature),
                    top_k=kw.get("top_k", model.config.top_k), grammar=kw.get("grammar", True), prompt=prompt,
                    generator=model.generator(7))
    new = [decode(s, vocab) for s in seqs]
    assert len(new) == 12 and len(model.sample(12, seed=7, **kwargs)) == 12
    for a, b in zip((decode(s, vocab) for s in old), new, strict=True):
        assert (a is None and b is None) or nx.utils.graphs_equal(a, b)


def test_history_replaces_metadata_and_is_saved(pair, tmp_path):
    model, _, _, _ = pair
    assert model.history.steps == 42 and model.history.fits == 2 and model.metadata["trained_steps"] == 42
    assert "final_loss" not in model.metadata
    assert model.history.final_loss == pytest.approx(sum(model.history.losses[-42:]) / 42)
    model.save(tmp_path / "run")
    back = G2PT.load(tmp_path / "run", device="cpu")
    assert back.history.losses == model.history.losses and back.is_trained
    assert all(nx.utils.graphs_equal(a, b) for a, b in zip(back.sample(5, seed=3), model.sample(5, seed=3),
                                                           strict=True))


def test_presets_options_and_the_untrained_error():
    tiny, paper = G2PT.Config.preset("tiny"), G2PT.Config.preset("paper")
    assert (tiny.size, tiny.train.lr, tiny.train.max_steps) == ("tiny", 3e-3, 600)
    # the published configuration (G2PT Table 7 / the released train.py): G2PT-small, AdamW 1e-4, batch 60 with
    # 8 gradient-accumulation steps = 480 sequences per optimiser step, wd 0.1, betas (0.9, 0.95)
    assert (paper.size, paper.train.lr, paper.train.batch_size, paper.train.weight_decay, paper.betas,
            paper.train.lr_schedule) == ("small", 1e-4, 480, 0.1, (0.9, 0.95), "cosine")
    assert G2PT.Config.preset("small").size == "small"
    m = G2PT(_config())
    with pytest.raises(NotTrainedError, match="untrained"):
        m.sample(n_samples=2)
    m.fit(_data(), max_steps=3, lr=5e-4, batch_size=4)
    assert m.config.train.lr == 3e-3 and m.config.train.batch_size == 8  # per call only
    with pytest.raises(InvalidInputError, match="max_steps"):
        m.fit(_data(), max_steps=0)
    with pytest.raises(InvalidInputError, match="n_samples must be a positive int, got 0"):
        m.sample(n_samples=0)
    with pytest.raises(InvalidInputError, match=r"unknown training option\(s\) \['learning_rate'\]"):
        m.fit(_data(), max_steps=1, learning_rate=1.0)
    assert m.history.steps == 3
    assert len(m.sample_for_cli(3, seed=0)) == 3
    m.fit(_data(), max_steps=4, val_data=_data()[:6], val_every=2)
    assert len(m.history.val_losses) == 2  # every 2 of 4 steps
    assert all(0 < v < 10 for _, v in m.history.val_losses) and m.history.steps == 7


def test_a_missing_path_is_an_error_naming_it_not_forty_smiles(tmp_path):
    missing = str(tmp_path / "no_such_dir" / "molecules_of_the_week.smi")
    for model in (G2PT(_config()), G2PT(_config(family="molecule"))):
        with pytest.raises(InvalidInputError, match=r"no such file or folder .*molecules_of_the_week\.smi"):
            model.fit(missing, max_steps=1)
        assert "vocab" not in model.metadata
    with pytest.raises(InvalidInputError, match="no such file or folder"):
        G2PT(_config()).fit(Path(missing), max_steps=1)


# ------------------------------------------------------------------ PyG in and out
def _pyg_dataset(graphs):
    """A ``torch_geometric.data.Dataset`` over ``from_networkx`` trees (as a user would write one)."""
    from torch_geometric.data import Dataset
    from torch_geometric.utils import from_networkx

    class Trees(Dataset):
        def __init__(self):
            super().__init__()
            self.items = [from_networkx(g) for g in graphs]

        def len(self):
            return len(self.items)

        def get(self, i):
            return self.items[i]

    return Trees()


def test_pyg_data_and_dataset_train_exactly_like_their_networkx_graphs():
    from torch_geometric.utils import from_networkx

    data = _data()
    runs = []
    for inputs in (data, [from_networkx(g) for g in data], _pyg_dataset(data)):
        m = G2PT(_config())
        m.fit(inputs, max_steps=6)
        runs.append(m)
    for m in runs[1:]:
        assert m.metadata["vocab"] == runs[0].metadata["vocab"]
        assert m.history.losses == pytest.approx(runs[0].history.losses, rel=1e-6)
    with pytest.raises(InvalidInputError, match=r"data\[1\].*not symmetric"):
        from torch_geometric.data import Data

        G2PT(_config()).fit([from_networkx(data[0]), Data(edge_index=torch.tensor([[0], [1]]), num_nodes=2)],
                            max_steps=1)


def test_pyg_output_round_trips_through_to_networkx(pair):
    from torch_geometric.utils import to_networkx

    model, _, _, _ = pair
    graphs = model.sample(8, seed=11)
    datas = model.sample(8, seed=11, output="pyg")
    vocab = model.vocab
    for g, d in zip(graphs, datas, strict=True):
        assert d.num_nodes == g.number_of_nodes() and d.edge_index.shape[1] == 2 * g.number_of_edges()
        back = to_networkx(d, node_attrs=["x"], edge_attrs=["edge_attr"], to_undirected=True)
        for v in back.nodes:
            back.nodes[v]["type"] = vocab.node_types[back.nodes[v].pop("x")]
        for u, v in back.edges:
            back.edges[u, v]["type"] = vocab.edge_types[back.edges[u, v].pop("edge_attr")]
        match = nx.algorithms.isomorphism.categorical_node_match("type", None)
        ematch = nx.algorithms.isomorphism.categorical_edge_match("type", None)
        assert nx.is_isomorphic(back, g, node_match=match, edge_match=ematch)
    with pytest.raises(InvalidInputError, match="output: expected one of networkx, pyg"):
        model.sample(2, output="dgl")


def test_plots_draw_into_a_given_ax_return_the_figure_and_leave_the_backend(tmp_path):
    import matplotlib
    import matplotlib.pyplot as plt

    from scigen.graphs.g2pt.plot import plot_demo, plot_graph, plot_rewards, plot_scores

    backend = matplotlib.get_backend()
    fig, axes = plt.subplots(1, 3)
    ft = {"rewards_before": [0.2, 0.4], "rewards_after": [0.5, 0.6], "mean_before": 0.3, "mean_after": 0.55}
    assert plot_graph(nx.path_graph(4), ax=axes[0], valid=nx.is_tree) is fig
    assert plot_scores({"G2PT": 0.9, "ER": 0.1}, ax=axes[1]) is fig
    assert plot_rewards(ft, ax=axes[2]) is fig
    assert len(axes[0].collections) > 0 and len(axes[1].patches) == 2 and axes[2].get_legend() is not None
    assert [b.get_height() for b in axes[1].patches] == [0.9, 0.1]
    plt.close(fig)
    whole = plot_demo([nx.path_graph(3), nx.cycle_graph(4)], ft, scores={"a": 0.5}, valid=nx.is_tree)
    assert isinstance(whole, matplotlib.figure.Figure) and list(tmp_path.iterdir()) == []
    plot_demo([nx.path_graph(3)], ft, tmp_path / "demo.png")
    assert (tmp_path / "demo.png").read_bytes()[:4] == b"\x89PNG"
    assert matplotlib.get_backend() == backend
    plt.close("all")
