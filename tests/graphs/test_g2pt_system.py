"""G2PT system: learnability on trees (NLL and tree validity vs untrained), rejection-sampling
fine-tuning raises a toy reward, property head beats the mean, save/load/sample round trip, bad
inputs, the CLI and the demo."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest

from scigen.core.errors import InvalidInputError
from scigen.graphs.data import tree_graphs
from scigen.graphs.g2pt import G2PT
from scigen.graphs.g2pt.demo import untrained_samples
from scigen.graphs.g2pt.rewards import n_nodes
from scigen.graphs.metrics import vun

TINY = dict(family="tree", copies=10, train={"batch_size": 16, "warmup_steps": 10, "progress": False})


def _tiny():
    return G2PT(G2PT.Config.preset("tiny", **TINY))


def _data():
    return [g for n in range(5, 10) for g in tree_graphs(12, n, seed=n)]


@pytest.fixture(scope="module")
def trained():
    data = _data()
    untrained = _tiny()
    untrained._setup(data)
    model = _tiny().fit(data, max_steps=150)
    return model, untrained, data


def test_learns_trees(trained):
    model, untrained, data = trained
    assert model.nll(data[:30]) < 0.5 * untrained.nll(data[:30])
    # with the node set fixed by a prompt, random edges are rarely a tree; the trained model mostly is
    before = vun(untrained_samples(untrained, 30, prompt_nodes=7, seed=0), data, "tree")["validity"]
    after = vun(model.sample(30, prompt_nodes=7, seed=0), data, "tree")["validity"]
    # measured on this budget (150 steps): before 0.0, after 0.17; a longer run (demo) reaches more
    assert after >= before + 0.1


def test_finetune_raises_reward(trained):
    model, _, data = trained
    m = model
    out = m.finetune(n_nodes, n_samples=48, steps=40, lr=2e-3, keep_fraction=0.25, seed=3)
    assert out["mean_after"] > out["mean_before"] + 0.5
    assert out["rounds"][0]["accepted"] >= 12 and "finetune" in m.metadata


def test_property_head_beats_mean(trained):
    model, _, data = trained
    y = np.array([g.number_of_edges() + 0.5 * max(d for _, d in g.degree()) for g in data])
    steps = model.history.steps
    model.fit_property(data, y, max_steps=120, lr=3e-3, batch_size=16, progress=False)
    assert model.history.steps == steps  # the head's run is its own, not the generator's history
    pred = model.predict_property(data[:40])[:, 0]
    assert np.mean((pred - y[:40]) ** 2) < 0.3 * np.var(y)


def test_save_load_sample_roundtrip(trained, tmp_path):
    model, _, _ = trained
    model.save(tmp_path / "run")
    back = G2PT.load(tmp_path / "run")
    a, b = model.sample(6, seed=5), back.sample(6, seed=5)
    assert all(nx.utils.graphs_equal(x, y) for x, y in zip(a, b, strict=True))
    if hasattr(model, "property_head"):
        np.testing.assert_allclose(back.predict_property(_data()[:5]), model.predict_property(_data()[:5]), rtol=1e-5)


def test_bad_inputs(trained):
    model, _, _ = trained
    with pytest.raises(InvalidInputError, match="empty"):
        _tiny().fit([], max_steps=1)
    with pytest.raises(InvalidInputError, match="directed"):
        _tiny().fit([nx.DiGraph([(0, 1)])], max_steps=1)
    with pytest.raises(InvalidInputError, match="larger than the trained vocabulary"):
        model.fit([nx.path_graph(40)], max_steps=1)
    typed = nx.path_graph(3)
    nx.set_node_attributes(typed, "C", "type")
    with pytest.raises(InvalidInputError, match=r"data\[1\]: unknown node types \['C'\]"):
        model.fit([nx.path_graph(3), typed], max_steps=1)
    with pytest.raises(InvalidInputError, match=r"2 invalid SMILES.*\n.*line 2.*\n.*line 3"):
        _tiny().fit(["CCO", "C1CC", "XX"], max_steps=1)
    with pytest.raises(InvalidInputError, match="n_samples must be a positive int"):
        model.sample(0)
    with pytest.raises(InvalidInputError, match="unknown node type"):
        model.sample(2, prompt_nodes=["C", "C"])
    with pytest.raises(InvalidInputError, match="size"):
        G2PT(size="huge")
    with pytest.raises(InvalidInputError, match="targets: expected"):
        model.fit_property(_data()[:3], [1.0, float("nan"), 2.0], max_steps=1)


def test_cli_train_sample_finetune(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from scigen.core.cli.main import build_app
    from scigen.graphs.io import read_edgelist, read_graphml, write_edgelist

    data = tmp_path / "trees.txt"
    write_edgelist(tree_graphs(10, 6, seed=0), data)
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps(TINY))
    r = CliRunner()

    def invoke(args):
        return r.invoke(build_app(args), args)

    run = str(tmp_path / "run")
    res = invoke(["graphs", "g2pt", "train", "--out", run, "--data", str(data), "--max-steps", "3",
                  "--preset", "tiny", "--config", str(cfg)])
    assert res.exit_code == 0, res.output
    res = invoke(["graphs", "g2pt", "sample", "--run", run, "--out", str(tmp_path / "s.txt"), "--n-samples", "4"])
    assert res.exit_code == 0, res.output
    assert len(read_edgelist(tmp_path / "s.txt")) == 4
    # a folder of GraphML files appears whole under its name, and is never written over
    folder = tmp_path / "samples.graphml"
    res = invoke(["graphs", "g2pt", "sample", "--run", run, "--out", str(folder), "--n-samples", "5"])
    assert res.exit_code == 0, res.output
    assert len(read_graphml(folder)) == 5 and len(list(folder.iterdir())) == 5
    res = invoke(["graphs", "g2pt", "sample", "--run", run, "--out", str(folder), "--n-samples", "2"])
    assert res.exit_code == 2 and f"error: --out {folder} exists and is a directory" in res.output
    assert len(list(folder.iterdir())) == 5

    import scigen.graphs.io as gio

    real, calls = gio.write_graphml, []

    def failing(graph, path):  # the disk fills up at the third file
        calls.append(path)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real(graph, path)

    monkeypatch.setattr(gio, "write_graphml", failing)
    res = invoke(["graphs", "g2pt", "sample", "--run", run, "--out", str(tmp_path / "half.graphml"), "--n-samples", "6"])
    assert res.exit_code == 2 and "No space left on device" in res.output
    assert not (tmp_path / "half.graphml").exists() and not list(tmp_path.glob(".half*"))
    monkeypatch.setattr(gio, "write_graphml", real)

    res = invoke(["graphs", "g2pt", "finetune", "--run", run, "--out", str(tmp_path / "ft"), "--reward", "nodes",
                  "--n-samples", "8", "--steps", "2", "--threads", "1"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "ft").is_dir()
    res = invoke(["graphs", "g2pt", "finetune", "--run", run, "--out", str(tmp_path / "ft2"), "--reward", "[bold]x"])
    assert res.exit_code == 2 and "error: --reward: unknown reward '[bold]x'" in res.output
    assert "Traceback" not in res.output
    res = invoke(["graphs", "g2pt", "train", "--out", str(tmp_path / "r2"), "--data", str(tmp_path / "missing.txt"),
                  "--preset", "tiny"])
    assert res.exit_code == 2 and "no such file or folder" in res.output and "missing.txt" in res.output


@pytest.mark.slow
def test_demo_quick(tmp_path):
    res = G2PT.demo(tmp_path, quick=True)
    rep = json.loads((tmp_path / "report.json").read_text())
    m = rep["metrics"]
    # measured (8-node trees, 300 steps): G2PT 0.83, Erdős–Rényi 0.06, untrained 0.0
    assert m["tree_validity"] > max(m["tree_validity_ER"], m["tree_validity_untrained"]) + 0.4
    assert m["MMD_degree"] < m["MMD_degree_ER"]
    # one RFT round toward more leaves among valid trees (measured 0.48 -> 0.52, validity 0.74 with keyed sampling;
    # 0.48 -> 0.57, validity 0.86 with the earlier torch.multinomial draws)
    assert m["reward_mean_after"] > m["reward_mean_before"] + 0.03 and m["tree_validity_after_RFT"] > 0.5
    assert (tmp_path / "g2pt_demo.png").is_file() and res.seconds > 0


def test_first_seen_labels_learn_held_out_trees_fast():
    """node_ids="first_seen" (ours) escapes the uniform-label plateau: 150 steps × 16 on 20-node trees
    give mostly valid, novel trees (measured V.U.N. 0.825; the paper's random labels: 0.0 at this
    budget, final loss 0.84 vs 0.29), with degree statistics nearer a held-out split than
    Erdős–Rényi graphs'."""
    from scigen.graphs.data import erdos_renyi_like
    from scigen.graphs.metrics import graph_mmds

    graphs = tree_graphs(100, 20, seed=3)
    train, held_out = graphs[:80], graphs[80:]
    model = G2PT(G2PT.Config.preset("tiny", family="tree", node_ids="first_seen", copies=20,
                                    train={"batch_size": 16, "warmup_steps": 10, "progress": False}))
    model.fit(train, max_steps=150)
    samples = model.sample(40, seed=1)
    full = [g for g in samples if g.number_of_nodes() == 20]  # measured: 39 of 40 (one 8-node sample)
    assert len(full) >= 0.9 * len(samples)
    assert vun(full, train, "tree")["VUN"] * len(full) / len(samples) > 0.5  # full-size valid novel trees
    er = erdos_renyi_like(train, 40, seed=2)
    assert graph_mmds(held_out, samples, orbit=False)["degree"] < graph_mmds(held_out, er, orbit=False)["degree"]
