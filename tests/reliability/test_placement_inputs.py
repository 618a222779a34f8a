"""Hostile inputs to the placement domain (``placement/diffusion`` and the Bookshelf reader) through the
Python API and the CLI: each gives a named error naming the file / field / value (issue 23)."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from scigen.core.errors import CheckpointError, InvalidInputError, NotTrainedError
from scigen.placement.bookshelf import BookshelfError, read_bookshelf, write_bookshelf
from scigen.placement.diffusion.system import DiffusionPlacer, place
from scigen.placement.netlist import Netlist
from scigen.placement.synthetic import SynthConfig, SyntheticNetlists, generate_netlist

from .helpers import assert_one_line_error, cli

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64)
#: the smallest placer: sampling and legalisation take a fraction of a second
TINY = {"hidden": 16, "n_blocks": 1, "gnn_layers": 1, "heads": 1, "att_heads": 1, "copies": 4, "steps": 4,
        "legalize_steps": 5, "train_objects": 12, "train_circuits": 2, "train": {"progress": False, "max_steps": 2}}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A valid Bookshelf design (a synthetic circuit of about 12 objects) written by ``write_bookshelf``."""
    nl = generate_netlist(3, SynthConfig.for_size(12), name="d")
    return write_bookshelf(nl, tmp_path_factory.mktemp("pristine")).parent, nl


@pytest.fixture
def design(tmp_path, pristine):
    """``design(ext, edit)``: a copy of the pristine design whose ``d.<ext>`` text is ``edit(text)``."""
    folder, _ = pristine
    counter = iter(range(1000))

    def make(ext=None, edit=None):
        d = tmp_path / f"design{next(counter)}"
        shutil.copytree(folder, d)
        if ext is not None:
            f = d / f"d.{ext}"
            f.write_text(edit(f.read_text()))
        return d / "d.aux"
    return make


def _line(obj: str, new: str):
    """An edit replacing the (first) line naming ``obj`` by ``new``."""
    def edit(text: str) -> str:
        lines = text.splitlines()
        i = next(k for k, ln in enumerate(lines) if ln.split()[:1] == [obj])
        lines[i] = new
        return "\n".join(lines) + "\n"
    return edit


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    run = tmp_path_factory.mktemp("placer") / "run"
    DiffusionPlacer(**TINY).fit(SyntheticNetlists(2, 12)).save(run)
    return run


def _breakages(names):
    """``(ext, edit, needles)`` of every Bookshelf breakage; ``names`` = (movable object, second object)."""
    a, b = names
    drop_after = lambda n: (lambda t: t[: t.index(n)])  # noqa: E731  (truncate before the n-th block)
    return {
        "aux names a missing .pl": ("aux", lambda t: t.replace("d.pl", "gone.pl"), ["d.aux", "gone.pl", "does not exist"]),
        "aux names a missing .wts": ("aux", lambda t: t.replace("d.wts", "gone.wts"), ["gone.wts", "does not exist"]),
        "aux without .scl": ("aux", lambda t: t.replace("d.scl", ""), ["d.aux", "no .scl file listed"]),
        "negative size": ("nodes", _line(a, f"\t{a}\t-4\t3"), ["d.nodes", a, "negative size"]),
        "non-numeric size": ("nodes", _line(a, f"\t{a}\twide\t3"), ["d.nodes", f"width of '{a}'", "'wide'"]),
        "inf size": ("nodes", _line(a, f"\t{a}\t4\tinf"), ["d.nodes", f"height of '{a}'", "finite"]),
        "duplicate name": ("nodes", _line(b, f"\t{a}\t4\t3"), ["d.nodes", f"duplicated object name '{a}'"]),
        "truncated .nodes": ("nodes", _line(a, f"\t{a}"), ["d.nodes", "expected 'name width height"]),
        "empty .nodes": ("nodes", lambda t: "UCLA nodes 1.0\n", ["d.nodes", "no objects", "empty"]),
        "net names an unknown node": ("nets", lambda t: t.replace(f"\t{a}\t", "\tghost\t", 1),
                                      ["d.nets", "unknown object 'ghost'"]),
        "empty .nets": ("nets", lambda t: "UCLA nets 1.0\nNumNets : 0\n", ["d.nets", "no nets", "empty"]),
        "truncated .nets": ("nets", lambda t: t[: t.rindex("\n", 0, len(t) - 1)] + "\n", ["d.nets", "NetDegree"]),
        "NaN coordinate": ("pl", _line(a, f"{a}\tnan\t7\t: N"), ["d.pl", "x must be finite", "'nan'"]),
        "missing position": ("pl", _line(a, ""), ["d.pl", f"object '{a}'", "no position"]),
        "zero rows": ("scl", lambda t: "UCLA scl 1.0\nNumRows : 0\n", ["d.scl", "no CoreRow"]),
        "negative NumSites": ("scl", lambda t: t.replace("NumSites  :  ", "NumSites  :  -", 1),
                              ["d.scl", "NumSites must be a positive integer"]),
        "unclosed row": ("scl", drop_after("End"), ["d.scl", "not closed by End"]),
        "non-numeric weight": ("wts", lambda t: t + "\tx\theavy\n", ["d.wts", "weight must be a number", "'heavy'"]),
    }


# ------------------------------------------------------------------ Python API
def test_bookshelf_breakages_name_the_file_and_value(design, pristine):
    nl = pristine[1]
    movable = [nl.names[i] for i in np.nonzero(~nl.fixed)[0]]
    for label, (ext, edit, needles) in _breakages(movable[:2]).items():
        with pytest.raises(BookshelfError) as err:
            read_bookshelf(design(ext, edit))
        for n in needles:
            assert n in str(err.value), (label, n, str(err.value))


def test_wrong_file_types(tmp_path, design):
    png = tmp_path / "plot.png"
    png.write_bytes(PNG)
    with pytest.raises(BookshelfError, match=r"plot\.png:1: not a UTF-8 text Bookshelf file"):
        read_bookshelf(png)
    aux = design()
    (aux.parent / "d.nodes").write_bytes(pickle.dumps({"a": np.zeros(3)}))
    with pytest.raises(BookshelfError, match=r"d\.nodes:1: not a UTF-8 text"):
        read_bookshelf(aux)
    (tmp_path / "empty_dir").mkdir()
    with pytest.raises(BookshelfError, match="empty_dir: expected exactly one .aux file"):
        read_bookshelf(tmp_path / "empty_dir")
    with pytest.raises(BookshelfError, match=r"nope\.aux: file not found"):
        read_bookshelf(tmp_path / "nope.aux")
    with pytest.raises(InvalidInputError, match="empty_dir: expected a .aux file or a directory containing"):
        DiffusionPlacer.read_data(tmp_path / "empty_dir")


def test_bad_netlist_arrays(pristine):
    nl = pristine[1]
    v = nl.num_objects
    cases = [
        ({"size": np.ones((v + 1, 2))}, rf"Netlist\.size: expected shape \[{v}, 2\], got \[{v + 1}, 2\]"),
        ({"lower_left": [["a", "b"]] * v}, r"Netlist\.lower_left: expected float64 values"),
        ({"lower_left": np.full((v, 2), np.nan)}, r"Netlist\.lower_left contains NaN"),
        ({"size": -nl.size}, rf"Netlist\.size: object '{nl.names[0]}' has size"),
        ({"names": [nl.names[0]] * v}, rf"duplicated object name '{nl.names[0]}'"),
        ({"pin_obj": nl.pin_obj + v}, rf"Netlist\.pin_obj must index the {v} objects"),
        ({"canvas": (0.0, 0.0, 0.0, 1.0)}, r"Netlist\.canvas must be"),
    ]
    for change, match in cases:
        with pytest.raises(InvalidInputError, match=match):
            dataclasses.replace(nl, **change)


@pytest.mark.parametrize(("fields", "match"), [
    ({"best_of": 0}, r"DiffusionPlacerConfig\.best_of"), ({"copies": 0}, r"DiffusionPlacerConfig\.copies"),
    ({"steps": -2}, r"DiffusionPlacerConfig\.steps"), ({"method": "rk5"}, "unknown sampler method 'rk5'"),
    ({"colour": "red"}, r"DiffusionPlacerConfig\.colour: unknown field"),
    ({"train_objects": "many"}, r"DiffusionPlacerConfig\.train_objects"),
    ({"hpwl_weight": float("nan")}, r"DiffusionPlacerConfig\.hpwl_weight"),
])
def test_bad_config_fields(fields, match):
    with pytest.raises(InvalidInputError, match=match):
        DiffusionPlacer(**fields)


def test_bad_training_calls(pristine):
    model = DiffusionPlacer(**TINY)
    data = SyntheticNetlists(2, 12)
    for options, match in [({"max_steps": 0}, "max_steps"), ({"max_steps": -3}, "max_steps"),
                           ({"batch_size": 0}, "batch_size"), ({"epochs": 3}, r"unknown training option\(s\) \['epochs'\]")]:
        with pytest.raises(InvalidInputError, match=match):
            model.fit(data, **options)
    for bad in ([], "d.aux", np.zeros((3, 2))):
        with pytest.raises(InvalidInputError, match="data must be a Netlist or a non-empty list of Netlists"):
            model.fit(bad, max_steps=1)
    nl = pristine[1]
    everything_fixed = dataclasses.replace(nl, fixed=np.ones(nl.num_objects, bool))
    with pytest.raises(InvalidInputError, match=r"data\[0\] \('d'\) has no movable object"):
        model.fit([everything_fixed], max_steps=1)


def test_bad_placement_requests(trained, pristine):
    model = DiffusionPlacer.load(trained)
    nl = pristine[1]
    for n in (0, -1, 2.5, "3"):
        with pytest.raises(InvalidInputError, match="n_samples must be a positive int"):
            model.sample(nl, n)
    for k in (0, -1):
        with pytest.raises(InvalidInputError, match="best_of must be a positive int"):
            model.place(nl, best_of=k)
    with pytest.raises(InvalidInputError, match="steps must be a positive int, got -2"):
        model.sample(nl, 1, steps=-2)
    with pytest.raises(InvalidInputError, match="legalize_steps must be >= 0, got -1"):
        model.sample(nl, 1, legalize_steps=-1)
    with pytest.raises(InvalidInputError, match="unknown sampler method 'rk5'; valid: euler"):
        model.sample(nl, 1, method="rk5")
    with pytest.raises(InvalidInputError, match="not both"):
        model.sample(nl, 2, best_of=2)
    with pytest.raises(InvalidInputError, match="netlist must be a scigen.placement.Netlist, got str"):
        model.sample("d.aux")
    with pytest.raises(InvalidInputError, match="seed must be an int"):
        model.sample(nl, 1, seed="abc")
    empty = Netlist(names=[], size=np.zeros((0, 2)), lower_left=np.zeros((0, 2)), terminal=[], fixed=[],
                    pin_obj=[], pin_offset=np.zeros((0, 2)), net_ptr=[0], canvas=(0, 0, 10, 10), name="void")
    with pytest.raises(InvalidInputError, match="netlist 'void' has no macros to place"):
        model.place(empty)
    huge = dataclasses.replace(nl, size=nl.size * 0 + np.array(nl.chip_size) * 2)
    with pytest.raises(InvalidInputError, match="netlist 'd' is infeasible"):
        model.place(huge)
    with pytest.raises(NotTrainedError, match="untrained"):
        DiffusionPlacer(**TINY).place(nl)
    with pytest.raises(InvalidInputError, match="needs a trained model"):
        place(nl, None)
    with pytest.raises(CheckpointError, match="does not exist"):
        place(nl, trained.parent / "missing")
    with pytest.raises(CheckpointError, match="scigen.json is missing"):
        place(nl, pristine[0])


# ------------------------------------------------------------------ CLI
def test_cli_bad_inputs_are_one_line_errors(tmp_path, trained, design, pristine):
    nl = pristine[1]
    a = nl.names[int(np.nonzero(~nl.fixed)[0][0])]
    good = design()
    user = tmp_path / "my_project"
    user.mkdir()
    (user / "notes.txt").write_text("mine")
    png = tmp_path / "plot.png"
    png.write_bytes(PNG)
    zero_best = tmp_path / "best0.json"
    zero_best.write_text(json.dumps({"best_of": 0}))
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"colour": "red"}))
    (tmp_path / "no_aux").mkdir()
    place_ = ["placement", "diffusion", "place", "--run", str(trained), "--netlist"]
    train = ["placement", "diffusion", "train", "--out", str(tmp_path / "t"), "--quick"]
    cases = [
        ([*place_, str(good), "--out", str(tmp_path / "o"), "--n-samples", "0"], ["--n-samples", "got 0"]),
        ([*place_, str(good), "--out", str(tmp_path / "o"), "--n-samples", "-1"], ["--n-samples", "got -1"]),
        ([*place_, str(good), "--out", str(tmp_path / "o"), "--steps", "-2"], ["--steps", "got -2"]),
        ([*place_, str(good), "--out", str(user)], ["my_project", "exists"]),
        ([*place_, str(good), "--out", str(user), "--overwrite"], ["my_project", "notes.txt", "refusing"]),
        ([*place_, str(png), "--out", str(tmp_path / "o")], ["plot.png", "not a UTF-8 text"]),
        ([*place_, str(tmp_path / "nope.aux"), "--out", str(tmp_path / "o")], ["nope.aux", "not found"]),
        ([*place_, str(design("nets", lambda t: t.replace(f"\t{a}\t", "\tghost\t", 1))), "--out", str(tmp_path / "o")],
         ["d.nets", "'ghost'"]),
        ([*place_, str(good), "--out", str(tmp_path / "o"), "--method", "rk5"], ["'rk5'"]),
        (["placement", "diffusion", "place", "--run", str(good.parent), "--netlist", str(good), "--out",
          str(tmp_path / "o")], ["scigen.json is missing"]),
        ([*train, "--data", str(design("nodes", _line(a, f"\t{a}\t-4\t3")))], ["d.nodes", "negative size"]),
        ([*train, "--data", str(design("scl", lambda t: "UCLA scl 1.0\n"))], ["d.scl", "no CoreRow"]),
        ([*train, "--data", str(tmp_path / "no_aux")], ["no_aux", ".aux"]),
        ([*train, "--data", str(png)], ["plot.png"]),
        ([*train, "--max-steps", "0"], ["max_steps"]),
        ([*train, "--config", str(zero_best)], ["best_of"]),
        ([*train, "--config", str(unknown)], ["colour"]),
        ([*train, "--preset", "huge"], ["huge"]),
        (["placement", "diffusion", "evaluate", "--run", str(trained), "--data",
          str(design("pl", _line(a, f"{a}\tnan\t7\t: N")))], ["d.pl", "'nan'"]),
        (["placement", "diffusion", "evaluate", "--run", str(trained), "--data",
          str(design("nodes", lambda t: "UCLA nodes 1.0\n"))], ["d.nodes", "no objects"]),
        (["placement", "diffusion", "sample", "--run", str(trained), "--out", str(tmp_path / "s"), "--n-samples", "-1"],
         ["--n-samples"]),
        (["placement", "diffusion", "sample", "--run", str(trained), "--out", str(user), "--n-samples", "1"],
         ["my_project", "exists"]),
    ]
    for args, needles in cases:
        assert_one_line_error(cli(*args), *needles)
    assert sorted(p.name for p in user.iterdir()) == ["notes.txt"] and (user / "notes.txt").read_text() == "mine"
    assert not (tmp_path / "o").exists() and not (tmp_path / "t").exists()


def test_train_budget_note_states_one_circuit_times_copies(tmp_path, monkeypatch):
    """The note printed without --preset describes the real batch: one circuit as ``copies`` noisy copies
    (checked against what the loss is given)."""
    from scigen.core.generative import Diffusion

    shapes = []
    loss = Diffusion.loss

    def spy(self, x0, *args, **kwargs):
        shapes.append(tuple(x0.shape))
        return loss(self, x0, *args, **kwargs)

    monkeypatch.setattr(Diffusion, "loss", spy)
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({**TINY, "copies": 7}))
    res = cli("placement", "diffusion", "train", "--out", str(tmp_path / "run"), "--quick", "--config", str(cfg),
              "--max-steps", "2")
    assert res.exit_code == 0, res.output
    assert "for 2 steps with batch of 1 circuit x 7 noisy copies" in " ".join(res.output.split())
    assert len(shapes) == 2 and all(s[0] == 7 and s[2] == 2 for s in shapes)  # 2 steps of [7 copies, V, 2]


def _partly_filled(folder) -> bool:
    """Whether a temporary output folder with at least one file exists in ``folder``."""
    try:
        return any(p.name.endswith(".tmpdir") and any(p.iterdir()) for p in folder.iterdir())
    except FileNotFoundError:  # renamed into place meanwhile
        return False


def test_kill_9_during_place_leaves_no_folder_under_the_final_name(tmp_path, trained, design):
    """Killed while its output is being filled (the temporary folder beside the final name holds some files),
    ``place --out`` leaves nothing under the final name; had it finished first, the folder would be whole."""
    good = design()
    out = tmp_path / "placed"
    cmd = [sys.executable, "-m", "scigen.core.cli", "placement", "diffusion", "place", "--run", str(trained),
           "--netlist", str(good), "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})
    deadline, killed = time.monotonic() + 120, False
    while proc.poll() is None and not killed:
        if time.monotonic() > deadline or _partly_filled(tmp_path):
            os.kill(proc.pid, signal.SIGKILL)
            killed = True
        time.sleep(0.001)
    proc.wait(timeout=30)
    if out.exists():  # it completed before the kill: then the folder must be whole
        assert {"d.aux", "d.nodes", "d.nets", "d.pl", "d.scl", "metrics.json", "placement.png"} <= \
            {p.name for p in out.iterdir()}
        assert json.loads((out / "metrics.json").read_text())["legality"] >= 0
    else:
        assert killed
    for p in tmp_path.iterdir():  # leftovers are only hidden temporaries, never the final name
        assert p.name.startswith(("design", ".placed.")), p
