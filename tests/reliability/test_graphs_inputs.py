"""Hostile inputs to the graphs domain (G2PT, the graph file readers, the TU reader), through the Python
API and the CLI: each gives a named scigen error whose message names the file / field / value."""

from __future__ import annotations

import json
import pickle

import networkx as nx
import pytest
import torch

from scigen.core.errors import CheckpointError, InvalidInputError, NotTrainedError
from scigen.core.toy.system import ToySystem
from scigen.graphs.data import TUFormatError, load_tu, read_tu, tree_graphs
from scigen.graphs.g2pt import G2PT
from scigen.graphs.io import read_graphs

from .helpers import assert_one_line_error, cli

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
TINY = {"family": "tree", "copies": 2, "train": {"batch_size": 8, "warmup_steps": 1, "progress": False}}


def _tiny(**fields) -> G2PT:
    return G2PT(G2PT.Config.preset("tiny", **(TINY | fields)))


def _typed_path(n: int, node: str = "C", edge: str = "SINGLE") -> nx.Graph:
    g = nx.path_graph(n)
    nx.set_node_attributes(g, node, "type")
    nx.set_edge_attributes(g, edge, "type")
    return g


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A G2PT run trained 2 steps on 6-node trees, the same model in memory, and a toy (foreign) run."""
    root = tmp_path_factory.mktemp("graphs_runs")
    model = _tiny().fit(tree_graphs(16, 6, seed=0), max_steps=2)
    model.save(root / "g2pt")
    ToySystem(width=8, depth=1, train={"max_steps": 1, "progress": False}).fit(torch.randn(16, 2)).save(root / "toy")
    return {"model": model, "run": root / "g2pt", "toy": root / "toy"}


@pytest.fixture
def files(tmp_path):
    """Bad data files of every kind the readers meet."""
    f = {}

    def put(name: str, content: str | bytes):
        p = tmp_path / name
        p.write_bytes(content) if isinstance(content, bytes) else p.write_text(content)
        f[name] = p

    put("picture.png", PNG)
    put("graphs.pkl", pickle.dumps([nx.path_graph(3)]))
    put("empty.txt", "")
    put("comments.txt", "# only a comment\n\n")
    put("names.txt", "a b\nb c\n")
    put("typed.txt", "graph\nnode 0 C\nnode one C\nedge 0 x SINGLE\n")
    put("loop.txt", "0 1\n1 1\n")
    put("twice.txt", "graph\nnode 0 C\nnode 0 N\nedge 0 1\n")
    put("edge_twice.txt", "graph\nedge 0 1 SINGLE\nedge 1 0 DOUBLE\n")
    put("bad.smi", "CCO\nC1CC\nnot_a_smiles\n")
    put("empty.smi", "# header only\n")
    whole = '<?xml version="1.0"?>\n<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n<graph edgedefault="undirected">\n<node id="a"/><node id="b"/>\n<edge source="a" target="b"/>\n</graph>\n</graphml>\n'  # noqa: E501
    put("truncated.graphml", whole[: len(whole) // 2])
    put("directed.graphml", whole.replace("undirected", "directed"))
    put("png.graphml", PNG)
    (tmp_path / "nographs").mkdir()
    (tmp_path / "nographs" / "readme.txt").write_text("nothing here")
    f["nographs"] = tmp_path / "nographs"
    return f


# ------------------------------------------------------------------ Python API: data files
@pytest.mark.parametrize(("name", "needles"), [
    ("picture.png", ["picture.png", "not a text file"]),
    ("graphs.pkl", ["graphs.pkl", "not a text file"]),
    ("empty.txt", ["empty.txt", "empty"]),
    ("comments.txt", ["comments.txt", "empty"]),
    ("names.txt", ["names.txt", "line 1", "'a b'"]),
    ("typed.txt", ["typed.txt", "line 3", "line 4"]),
    ("loop.txt", ["loop.txt", "line 2", "self-loop"]),
    ("twice.txt", ["twice.txt", "line 3", "node 0"]),
    ("edge_twice.txt", ["edge_twice.txt", "line 3", "edge 1 0"]),
    ("bad.smi", ["bad.smi", "2 invalid SMILES", "line 2: 'C1CC'", "line 3: 'not_a_smiles'"]),
    ("empty.smi", ["empty.smi", "empty"]),
    ("truncated.graphml", ["truncated.graphml", "not a readable GraphML"]),
    ("directed.graphml", ["directed.graphml", "directed"]),
    ("png.graphml", ["png.graphml", "not a readable GraphML"]),
    ("nographs", ["nographs", "no GraphML file"]),
])
def test_bad_graph_files_name_the_file(files, name, needles):
    for call in (lambda: read_graphs(files[name]), lambda: _tiny().fit(files[name], max_steps=1),
                 lambda: _tiny().fit(str(files[name]), max_steps=1)):
        with pytest.raises(InvalidInputError) as info:
            call()
        for n in needles:
            assert n in str(info.value), (n, str(info.value))


def test_missing_path_is_not_read_as_smiles(tmp_path):
    with pytest.raises(InvalidInputError, match="no such file or folder .*missing.txt"):
        _tiny().fit(str(tmp_path / "missing.txt"), max_steps=1)


# ------------------------------------------------------------------ Python API: in-memory data
def test_bad_in_memory_graphs():
    from torch_geometric.data import Data

    cases = [
        ([], "the dataset is empty"),
        (None, "got None"),
        (42, "got int"),
        ([nx.path_graph(3), nx.DiGraph([(0, 1)])], r"data\[1\]: expected an undirected graph"),
        ([nx.MultiGraph([(0, 1), (0, 1)])], r"data\[0\]: expected a simple graph"),
        ([nx.Graph()], r"data\[0\]: the graph has no nodes"),
        ([nx.Graph([(0, 0), (0, 1)])], r"data\[0\]: self-loops"),
        ([nx.path_graph(3), "CCO"], r"data\[1\]: expected a networkx.Graph, got str"),
        (["CCO", "C1CC", ""], r"2 invalid SMILES:\n  line 2: 'C1CC'\n  line 3: ''"),
        ([Data(x=torch.zeros(3, 1), num_nodes=3)], r"data\[0\].*no edge_index"),
        ([Data(edge_index=torch.tensor([[0, 1], [1, 0]]), num_nodes=3), Data(edge_index=torch.tensor([[0, 7], [7, 0]]),
                                                                             num_nodes=3)],
         r"data\[1\].*node 7.*num_nodes=3"),
        ([Data(edge_index=torch.tensor([[0, -1], [-1, 0]]), num_nodes=2)], r"data\[0\].*node -1"),
        ([Data(edge_index=torch.tensor([[0], [1]]), num_nodes=2)], r"data\[0\].*not symmetric"),
        ([Data(edge_index=torch.zeros(3, 2, dtype=torch.long), num_nodes=2)], r"data\[0\].*shape \[2, E\]"),
        ([Data(edge_index=torch.tensor([[0.0, 1.5], [1.5, 0.0]]), num_nodes=3)], r"data\[0\].*dtype torch.float32"),
    ]
    for data, match in cases:
        with pytest.raises(InvalidInputError, match=match):
            _tiny().fit(data, max_steps=1)


def test_unknown_types_after_the_vocabulary_is_fixed(runs):
    model = runs["model"]
    molecules = [_typed_path(4), _typed_path(3, node="N", edge="DOUBLE")]
    with pytest.raises(InvalidInputError, match=r"data\[0\]: unknown node types \['C'\] / edge types \['SINGLE'\]"):
        model.fit(molecules, max_steps=1)
    with pytest.raises(InvalidInputError, match=r"val_data\[1\]: unknown node types \['N'\]"):
        _tiny().fit(tree_graphs(4, 5, seed=1), val_data=[nx.path_graph(3), _typed_path(3, node="N")], max_steps=1)
    with pytest.raises(InvalidInputError, match="larger than the trained vocabulary"):
        model.fit([nx.path_graph(40)], max_steps=1)
    with pytest.raises(InvalidInputError, match=r"data\[1\]: unknown node type .C.; known: \[.NODE.\]"):
        model.nll([nx.path_graph(4), _typed_path(4)])
    with pytest.raises(InvalidInputError, match="prompt nodes: unknown node type 'Xx'"):
        model.sample(2, prompt_nodes=["Xx"])
    with pytest.raises(InvalidInputError, match=r"prompt nodes: expected 1\.\.\d+ nodes, got 0"):
        model.sample(2, prompt_nodes=-1)


def test_bad_training_options_and_config():
    data = tree_graphs(4, 5, seed=0)
    for options, match in [({"max_steps": 0}, "max_steps"), ({"max_steps": -2}, "max_steps"),
                           ({"batch_size": 0}, "batch_size"), ({"lr": float("nan")}, "lr"),
                           ({"epochs": 3}, r"unknown training option\(s\) \['epochs'\]"), ({"copies": 0}, "copies"),
                           ({"seed": "abc"}, "seed must be an int")]:
        with pytest.raises(InvalidInputError, match=match):
            _tiny().fit(data, **options)
    for fields, match in [({"size": "huge"}, "size"), ({"colour": "red"}, "colour"), ({"copies": -1}, "copies"),
                          ({"max_nodes": -3}, "max_nodes"), ({"temperature": -1.0}, "temperature"),
                          ({"top_k": 0}, "top_k"), ({"ordering": "random"}, "ordering"),
                          ({"train": {"batch_size": "big"}}, r"train.batch_size")]:
        with pytest.raises(InvalidInputError, match=match):
            G2PT(**fields)


def test_bad_sampling_requests(runs):
    model = G2PT.load(runs["run"])
    for n in (0, -1, 2.5, "10"):
        with pytest.raises(InvalidInputError, match="n_samples must be a positive int"):
            model.sample(n)
    for t in (-0.5, float("nan"), float("inf"), "hot"):
        with pytest.raises(InvalidInputError, match="temperature"):
            model.sample(2, temperature=t)
    for k in (0, -3, 2.5):
        with pytest.raises(InvalidInputError, match="top_k"):
            model.sample(2, top_k=k)
    for b in (0, -1):
        with pytest.raises(InvalidInputError, match="batch_size"):
            model.sample(2, batch_size=b)
    with pytest.raises(InvalidInputError, match="output: expected one of networkx, pyg, got 'dgl'"):
        model.sample(2, output="dgl")
    with pytest.raises(InvalidInputError, match="seed must be an int"):
        model.sample(2, seed="abc")
    with pytest.raises(InvalidInputError, match="prompt: must start with <boc>"):
        model.sample(2, prompt=[model.vocab.eog])
    with pytest.raises(NotTrainedError, match="untrained"):
        _tiny().sample(2)
    with pytest.raises(InvalidInputError, match="no vocabulary yet"):
        _tiny().nll(tree_graphs(2, 5, seed=0))


def test_bad_evaluation_requests(runs):
    model, graphs = runs["model"], tree_graphs(4, 6, seed=3)
    for n in (0, -1):
        with pytest.raises(InvalidInputError, match=f"n_samples must be a positive int, got {n}"):
            model.evaluate(graphs, n_samples=n)  # never replaced by the default len(data)
    with pytest.raises(InvalidInputError, match=r"data\[1\]: expected an undirected graph"):
        model.evaluate([nx.path_graph(3), nx.DiGraph([(0, 1)])], n_samples=2)
    molecules = _tiny(family="molecule").fit(["CCO", "CCN", "CC=O"], max_steps=1)
    with pytest.raises(InvalidInputError, match="1 invalid SMILES:\n  line 2: 'garbage'"):
        molecules.evaluate(["CCO", "garbage"], n_samples=2)


def test_bad_finetune_requests(runs):
    model = G2PT.load(runs["run"])
    quick = {"n_samples": 4, "steps": 1}
    for kwargs, match in [({"keep_fraction": 1.5}, "keep_fraction"), ({"n_samples": 1}, "n_samples"),
                          ({"rounds": 0}, "rounds"), ({"copies": 0}, "copies must be a positive int, got 0"),
                          ({"lr": 0.0}, r"lr.*got 0\.0")]:
        with pytest.raises(InvalidInputError, match=match):
            model.finetune(lambda g: 1.0, **(quick | kwargs))
    for value in ("x", float("nan"), [1.0]):
        with pytest.raises(InvalidInputError, match=r"reward: must return a finite number or None .*sample 0"):
            model.finetune(lambda g, v=value: v, **quick)
    with pytest.raises(InvalidInputError, match="reward: expected a callable"):
        model.finetune("leaves", **quick)


def test_bad_property_requests(runs):
    model = runs["model"]
    graphs = tree_graphs(4, 6, seed=3)
    for targets, match in [([1.0, float("nan"), 2.0, 3.0], "finite"), ([1.0, 2.0], r"expected 4 finite rows.*\(2, 1\)"),
                           (["a", "b", "c", "d"], "expected numbers")]:
        with pytest.raises(InvalidInputError, match=match):
            model.fit_property(graphs, targets, max_steps=1)
    for options, match in [({"max_steps": 0}, r"TrainingOptions.max_steps.*got 0"), ({"batch_size": 0}, "batch_size"),
                           ({"lr": float("nan")}, r"TrainingOptions.lr"), ({"hidden": 0}, "hidden must be a positive")]:
        with pytest.raises(InvalidInputError, match=match):
            model.fit_property(graphs, [1.0, 2.0, 3.0, 4.0], **({"max_steps": 1} | options))
    with pytest.raises(InvalidInputError, match="no property head"):
        G2PT.load(runs["run"]).predict_property(graphs)


def test_bad_saved_runs_and_outputs(tmp_path, runs):
    with pytest.raises(CheckpointError, match="holds a 'core/toy' system"):
        G2PT.load(runs["toy"])
    with pytest.raises(CheckpointError, match="does not exist"):
        G2PT.load(tmp_path / "missing")
    with pytest.raises(CheckpointError, match="already exists"):
        runs["model"].save(runs["run"])
    samples = runs["model"].sample(2)
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "mine.txt").write_text("keep")
    for out in (folder, tmp_path / "x.graphml"):
        if out.suffix:
            out.mkdir()
        with pytest.raises(InvalidInputError, match=f"{out.name}.*exists"):
            runs["model"].write_samples(samples, out)
    assert (folder / "mine.txt").read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "x.graphml"]  # no temporary left behind


def test_bad_tu_folders(tmp_path):
    ds = tmp_path / "DS"
    ds.mkdir()
    (ds / "DS_graph_indicator.txt").write_text("1\n1\n2\n")
    with pytest.raises(TUFormatError, match=r"missing .*DS_A\.txt"):
        read_tu(ds, "DS")
    with pytest.raises(TUFormatError, match=r"missing .*DS_A\.txt"):
        load_tu("DS", root=tmp_path)
    (ds / "DS_A.txt").write_text("1, 2\n2, 1\n1, x\n")
    with pytest.raises(TUFormatError, match=r"DS_A\.txt:3: expected 2 comma-separated integers, got '1, x'"):
        read_tu(ds, "DS")
    (ds / "DS_A.txt").write_text("1, 2\n2, 1\n3, 9\n")
    with pytest.raises(TUFormatError, match=r"DS_A\.txt:3: node id out of range 1\.\.3"):
        read_tu(ds, "DS")
    (ds / "DS_A.txt").write_text("1, 2\n2, 1\n")
    (ds / "DS_node_attributes.txt").write_text("0.5\nnan\n1.0\n")
    with pytest.raises(TUFormatError, match=r"DS_node_attributes\.txt:2"):
        read_tu(ds, "DS")
    (ds / "DS_node_attributes.txt").unlink()
    (ds / "DS_graph_labels.txt").write_text("1\n")
    with pytest.raises(TUFormatError, match=r"DS_graph_labels\.txt: 1 lines, expected 2"):
        read_tu(ds, "DS")
    (ds / "DS_graph_labels.txt").write_bytes(PNG)
    with pytest.raises(TUFormatError, match=r"DS_graph_labels\.txt: not a text file"):
        read_tu(ds, "DS")
    with pytest.raises(TUFormatError, match="root: .*nowhere is not a directory"):
        load_tu("DS", root=tmp_path / "nowhere")
    with pytest.raises(InvalidInputError, match="name: expected a TU dataset name"):
        load_tu("", root=tmp_path)


# ------------------------------------------------------------------ CLI
def test_cli_bad_inputs_are_one_line_errors(tmp_path, files, runs):
    run, toy = str(runs["run"]), str(runs["toy"])
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"colour": "red"}))
    hot = tmp_path / "hot.json"
    hot.write_text(json.dumps({"temperature": -1}))
    folder = tmp_path / "existing"
    folder.mkdir()
    (tmp_path / "existing.graphml").mkdir()
    existing_file = tmp_path / "existing_run"
    existing_file.write_text("mine")
    train = ["graphs", "g2pt", "train", "--preset", "tiny", "--max-steps", "1"]
    cases = [
        (train + ["--out", str(tmp_path / "o1"), "--data", str(files["picture.png"])], ["picture.png", "not a text"]),
        (train + ["--out", str(tmp_path / "o2"), "--data", str(files["graphs.pkl"])], ["graphs.pkl", "not a text"]),
        (train + ["--out", str(tmp_path / "o3"), "--data", str(files["empty.txt"])], ["empty.txt", "empty"]),
        (train + ["--out", str(tmp_path / "o4"), "--data", str(files["names.txt"])], ["names.txt", "line 1"]),
        (train + ["--out", str(tmp_path / "o5"), "--data", str(files["truncated.graphml"])], ["truncated.graphml"]),
        (train + ["--out", str(tmp_path / "o6"), "--data", str(files["bad.smi"])], ["bad.smi", "C1CC"]),
        (train + ["--out", str(tmp_path / "o7"), "--data", str(files["nographs"])], ["nographs", "no GraphML"]),
        (train + ["--out", str(tmp_path / "o8"), "--data", str(tmp_path / "nope.txt")], ["nope.txt"]),
        (train + ["--out", str(tmp_path / "o9"), "--config", str(unknown)], ["colour"]),
        (train + ["--out", str(tmp_path / "o10"), "--config", str(hot)], ["temperature"]),
        (["graphs", "g2pt", "train", "--out", str(tmp_path / "o11"), "--preset", "tiny", "--max-steps", "0"],
         ["max_steps"]),
        (["graphs", "g2pt", "train", "--out", str(tmp_path / "o12"), "--preset", "huge"], ["huge"]),
        (train + ["--out", str(existing_file), "--quick"], ["existing_run", "already exists"]),
        (["graphs", "g2pt", "sample", "--run", run, "--out", str(tmp_path / "s.txt"), "--n-samples", "0"],
         ["--n-samples"]),
        (["graphs", "g2pt", "sample", "--run", run, "--out", str(tmp_path / "s.txt"), "--n-samples", "-1"],
         ["--n-samples"]),
        (["graphs", "g2pt", "sample", "--run", toy, "--out", str(tmp_path / "s.txt"), "--n-samples", "2"], ["core/toy"]),
        (["graphs", "g2pt", "sample", "--run", str(tmp_path / "norun"), "--out", str(tmp_path / "s.txt")], ["norun"]),
        (["graphs", "g2pt", "sample", "--run", str(files["picture.png"]), "--out", str(tmp_path / "s.txt")],
         ["picture.png"]),
        (["graphs", "g2pt", "sample", "--run", run, "--out", str(folder), "--n-samples", "2"], ["existing", "exists"]),
        (["graphs", "g2pt", "sample", "--run", run, "--out", str(tmp_path / "existing.graphml"), "--n-samples", "2"],
         ["existing.graphml", "exists"]),
        (["graphs", "g2pt", "evaluate", "--run", run], ["--data"]),
        (["graphs", "g2pt", "evaluate", "--run", run, "--data", str(files["empty.smi"])], ["empty.smi"]),
        (["graphs", "g2pt", "evaluate", "--run", toy, "--bundled"], ["core/toy"]),
        (["graphs", "g2pt", "finetune", "--run", run, "--out", str(tmp_path / "f1"), "--reward", "gold"], ["gold"]),
        (["graphs", "g2pt", "finetune", "--run", run, "--out", str(tmp_path / "f2"), "--keep-fraction", "0",
          "--n-samples", "4", "--steps", "1"], ["keep_fraction"]),
        (["graphs", "g2pt", "finetune", "--run", toy, "--out", str(tmp_path / "f3")], ["core/toy"]),
    ]
    for args, needles in cases:
        assert_one_line_error(cli(*args), *needles)
    assert existing_file.read_text() == "mine"  # never replaced
    assert sorted(p.name for p in folder.iterdir()) == []
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporaries left


def test_kill_9_during_sample_leaves_no_folder_under_the_final_name(tmp_path, runs):
    """Killed while the GraphML files are being written, ``sample --out x.graphml`` leaves nothing under
    the final name (the folder is built beside and renamed into place): the kill is sent as soon as the
    first file of the run appears anywhere under ``tmp_path``, so it lands mid-write."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "samples.graphml"
    cmd = [sys.executable, "-m", "scigen.core.cli", "graphs", "g2pt", "sample", "--run", str(runs["run"]),
           "--out", str(out), "--n-samples", "1500"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    try:
        while proc.poll() is None and time.monotonic() < deadline and not any(tmp_path.glob("**/*.graphml/*.graphml")) \
                and not any(tmp_path.glob(".samples.graphml.*.tmpdir/*.graphml")):
            time.sleep(0.02)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    partial = [len(list(d.glob("*.graphml"))) for d in tmp_path.glob(".samples.graphml.*.tmpdir")]
    assert partial and 0 < partial[0] < 1500, partial  # the kill did land mid-write
    assert not out.exists(), sorted(p.name for p in out.iterdir())
