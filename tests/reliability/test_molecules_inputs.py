"""Hostile inputs through the molecules API (readers, MoleculeSet, UniGEM / EDM) and its CLI
(``scigen molecules unigem|edm train|sample|evaluate|predict``): each gives a named error naming the
file, field or value. The model is a width-8, 2-block net on 16 jittered small molecules (2 steps)."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from scigen.core.errors import CheckpointError, InvalidInputError, NotTrainedError
from scigen.molecules import EDM, Molecule, UniGEM, read_sdf, read_xyz, write_sdf
from scigen.molecules.data.dataset import MoleculeSet
from scigen.molecules.io import MoleculeFileError, MoleculeFileNotFoundError
from scigen.molecules.unigem.config import DEFAULT_PROPERTIES, METHODS

from .helpers import assert_one_line_error, cli

#: a small model that trains in well under a second (after the first call's imports)
TINY = {"hidden": 8, "n_layers": 2, "T": 20, "nucleation_t": 2, "method": "dpmpp_2m", "steps": 3,
        "train": {"max_steps": 2, "batch_size": 8, "progress": False}}

_SHAPES = {  # approximate geometries (Å): methane, water, ammonia, hydrogen fluoride
    "methane": ([6, 1, 1, 1, 1], [[0, 0, 0], [.63, .63, .63], [-.63, -.63, .63], [-.63, .63, -.63], [.63, -.63, -.63]]),
    "water": ([8, 1, 1], [[0, 0, 0], [.96, 0, 0], [-.24, .93, 0]]),
    "ammonia": ([7, 1, 1, 1], [[0, 0, .1], [.94, 0, -.27], [-.47, .81, -.27], [-.47, -.81, -.27]]),
    "hf": ([9, 1], [[0, 0, 0], [.92, 0, 0]]),
}


def _molecules(n: int = 16, props=DEFAULT_PROPERTIES) -> list[Molecule]:
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        name = list(_SHAPES)[i % len(_SHAPES)]
        z, p = _SHAPES[name]
        out.append(Molecule(z, np.asarray(p) + rng.normal(0, 0.02, (len(z), 3)),
                            properties={k: float(rng.normal(-6.0, 1.0)) for k in props}, name=f"{name}_{i}"))
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Saved UniGEM and EDM runs, the training SDF (with property fields) and a CLI config file."""
    root = tmp_path_factory.mktemp("molecules")
    mols = _molecules()
    UniGEM(**TINY).fit(mols).save(root / "unigem")
    EDM(**TINY).fit(mols).save(root / "edm")
    write_sdf(mols, root / "train.sdf")
    (root / "tiny.json").write_text(json.dumps(TINY))
    return root


@pytest.fixture(scope="module")
def model(runs):
    return UniGEM.load(runs / "unigem")


# ------------------------------------------------------------------ files (API)
def test_xyz_with_a_wrong_atom_count_line(tmp_path):
    p = tmp_path / "count.xyz"
    p.write_text("5\nmethane, one H short of five\nC 0 0 0\nH 0.63 0.63 0.63\n")
    with pytest.raises(MoleculeFileError, match=r"(?s)count\.xyz.*record 0 \(line 1\): truncated: 5 atoms announced, 2"):
        read_xyz(p)
    p.write_text("two\nc\nH 0 0 0\nH 0.74 0 0\n")
    with pytest.raises(MoleculeFileError, match="expected a positive atom count, got 'two'"):
        read_xyz(p)


def test_xyz_with_an_unknown_element_symbol(tmp_path):
    p = tmp_path / "xx.xyz"
    p.write_text("2\nc\nXx 0 0 0\nH 1 0 0\n")
    with pytest.raises(MoleculeFileError, match=r"(?s)xx\.xyz.*line 3: unknown element 'Xx'") as exc:
        read_xyz(p)
    assert exc.value.records[0][:2] == (0, 1)


def test_sdf_that_is_not_an_sdf(tmp_path):
    p = tmp_path / "notes.sdf"
    p.write_text("Meeting notes\nnot a molfile at all\n")
    with pytest.raises(MoleculeFileError, match=r"(?s)notes\.sdf.*RDKit cannot parse this mol block"):
        read_sdf(p)


@pytest.mark.parametrize("content", ["", "\n\n   \n"])
def test_empty_sdf_and_xyz(tmp_path, content):
    for name, reader, kind in (("empty.sdf", read_sdf, "SDF"), ("empty.xyz", read_xyz, "XYZ")):
        p = tmp_path / name
        p.write_text(content)
        with pytest.raises(InvalidInputError, match=rf"{name}: empty {kind} file"):
            reader(p)


def test_binary_folder_and_missing_molecule_files(tmp_path):
    png = tmp_path / "picture.sdf"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    pkl = tmp_path / "mols.xyz"
    pkl.write_bytes(pickle.dumps({"atoms": [6, 1]}))
    folder = tmp_path / "folder.sdf"
    folder.mkdir()
    with pytest.raises(InvalidInputError, match=r"picture\.sdf: not a text SDF file"):
        read_sdf(png)
    with pytest.raises(InvalidInputError, match=r"mols\.xyz: not a text XYZ file"):
        read_xyz(pkl)
    with pytest.raises(InvalidInputError, match=r"folder\.sdf: is a directory"):
        read_sdf(folder)
    with pytest.raises(MoleculeFileNotFoundError, match=r"gone\.xyz: no such file"):
        read_xyz(tmp_path / "gone.xyz")
    with pytest.raises(InvalidInputError, match=r"data\.png: expected a \.xyz or \.sdf file"):
        UniGEM.read_data(tmp_path / "data.png")


def test_nan_coordinates_in_files_and_molecules(tmp_path):
    p = tmp_path / "nan.xyz"
    p.write_text("2\nc\nC nan 0 0\nH 1 0 0\n")
    with pytest.raises(MoleculeFileError, match=r"(?s)nan\.xyz.*NaN or inf coordinates"):
        read_xyz(p)
    bad = _molecules(4)
    bad[2].positions[1, 0] = np.inf
    with pytest.raises(InvalidInputError, match=r"data\[2\]: NaN or inf coordinates at atom\(s\) \[1\]"):
        UniGEM(**TINY).fit(bad)


def test_molecule_with_zero_atoms(tmp_path, model):
    empty = Molecule(np.zeros(0, dtype=int), np.zeros((0, 3)))
    with pytest.raises(InvalidInputError, match=r"molecules\[1\]: has no atoms"):
        model.predict([_molecules(1)[0], empty])
    with pytest.raises(InvalidInputError, match="molecule 0: has no atoms"):
        MoleculeSet([[]], [np.zeros((0, 3))])
    p = tmp_path / "zero.xyz"
    p.write_text("0\nnothing\n")
    with pytest.raises(MoleculeFileError, match="expected a positive atom count, got '0'"):
        read_xyz(p)


def test_element_symbol_where_an_atomic_number_is_expected():
    with pytest.raises(InvalidInputError, match=r"atomic_numbers\[0\]\[0\]: .*the string 'C' \(atomic number 6\)"):
        MoleculeSet([["C", "H"]], [[[0, 0, 0], [1.1, 0, 0]]])
    with pytest.raises(InvalidInputError, match=r"atomic_numbers\[1\]: .*the string 'O' \(atomic number 8\)"):
        Molecule([1, "O"], [[0, 0, 0], [0.96, 0, 0]])


# ------------------------------------------------------------------ config, data, verbs (API)
@pytest.mark.parametrize(("fields", "match"), [
    ({"properties": ("foo",)}, r"UniGEMConfig.properties: .*unknown properties \['foo'\]; available: \['alpha'"),
    ({"method": "ancestral"}, r"UniGEMConfig.method: Input should be 'ddpm', 'ddim', 'dpmpp_2m'.*'ancestral'"),
    ({"colour": "red"}, r"UniGEMConfig.colour: unknown field"),
    ({"hidden": -1}, r"UniGEMConfig.hidden"),
    ({"nucleation_t": 30, "T": 20}, r"nucleation_t \(30\) must be < T \(20\)"),
    ({"train": {"batch_size": 7}}, r"train.batch_size must be even"),
    ({"train": {"batch_size": 0}}, r"UniGEMConfig.train.batch_size: Input should be greater than 0"),
    ({"steps": -1}, r"UniGEMConfig.steps"),
])
def test_bad_config_fields(fields, match):
    with pytest.raises(InvalidInputError, match=match):
        UniGEM(**fields)


def test_missing_property_column():
    mols = _molecules(8)
    ms = MoleculeSet([m.atomic_numbers for m in mols], [m.positions for m in mols],
                     {"alpha": [m.properties["alpha"] for m in mols]})
    with pytest.raises(InvalidInputError, match=r"data: property \['gap', 'homo', 'lumo', 'mu', 'Cv'\] not in the "
                                                r"dataset \(it has \['alpha'\]\)"):
        UniGEM(**TINY).fit(ms)
    del mols[3].properties["gap"]
    with pytest.raises(InvalidInputError, match=r"property 'gap' is missing on molecule\(s\) \[3\]"):
        UniGEM(**TINY).fit(mols)


@pytest.mark.parametrize(("values", "match"), [
    ([np.nan] + [1.0] * 7, r"properties\['alpha'\]: NaN or inf at molecule\(s\) \[0\]"),
    ([1.0] * 5 + [np.inf, 1.0, -np.inf], r"properties\['alpha'\]: NaN or inf at molecule\(s\) \[5, 7\]"),
    (["high"] + [1.0] * 7, r"properties\['alpha'\]: expected numbers"),
    ([1.0] * 3, r"properties\['alpha'\] has 3 values for 8 molecules"),
])
def test_bad_property_values(values, match):
    mols = _molecules(8)
    with pytest.raises(InvalidInputError, match=match):
        MoleculeSet([m.atomic_numbers for m in mols], [m.positions for m in mols], {"alpha": values})


def test_bad_sampling_requests(model):
    for n in (0, -1, 2.5, "10"):
        with pytest.raises(InvalidInputError, match="n_samples must be a positive int"):
            model.sample(n)
    with pytest.raises(InvalidInputError, match="steps must be a positive int, got -1"):
        model.sample(2, steps=-1)
    with pytest.raises(InvalidInputError, match=r"unknown sampler method 'ancestral'; valid: ") as exc:
        model.sample(2, method="ancestral")
    assert all(m in str(exc.value) for m in METHODS)  # the engine's solver names
    with pytest.raises(InvalidInputError, match="batch_size must be a positive int, got 0"):
        model.sample(2, batch_size=0)
    with pytest.raises(InvalidInputError, match=r"n_atoms: expected an int or a list of ints, got '5'"):
        model.sample(2, n_atoms="5")
    with pytest.raises(InvalidInputError, match=r"n_atoms: sizes must lie in \[1, max_atoms=29\]"):
        model.sample(2, n_atoms=[0, 3])
    with pytest.raises(InvalidInputError, match="n_atoms: 3 sizes given for n_samples=2"):
        model.sample(2, n_atoms=[3, 4, 5])
    with pytest.raises(InvalidInputError, match="seed must be an int"):
        model.sample(2, seed="abc")


def test_bad_prediction_requests(model, runs):
    with pytest.raises(NotTrainedError, match="untrained.*before predict"):
        UniGEM(**TINY).predict(_molecules(2))
    with pytest.raises(NotTrainedError, match="untrained.*before sample"):
        UniGEM(**TINY).sample(2)
    with pytest.raises(InvalidInputError, match=r"molecule 0: unknown element\(s\) \['Si'\] for this model"):
        model.predict([Molecule([14, 1, 1, 1, 1], _SHAPES["methane"][1])])
    with pytest.raises(InvalidInputError, match="molecule 0 has 40 atoms, more than the model's max_atoms=29"):
        model.predict([Molecule([1] * 40, np.random.default_rng(0).normal(size=(40, 3)))])
    with pytest.raises(InvalidInputError, match=r"molecules\.sdf: no such file"):
        model.predict("molecules.sdf")  # a path is read (issue 37), so a missing one is named
    with pytest.raises(InvalidInputError, match="molecules: expected a MoleculeSet, Molecule / RDKit Mol .* got int"):
        model.predict(3)
    with pytest.raises(InvalidInputError, match="batch_size must be a positive int, got 0"):
        model.predict(_molecules(2), batch_size=0)
    with pytest.raises(InvalidInputError, match=r"molecules/edm has no property head \(properties=\[\]\)"):
        EDM.load(runs / "edm").predict(_molecules(2))


def test_evaluate_checks_its_data_before_sampling(model, monkeypatch):
    def no_sampling(*a, **k):
        raise AssertionError("sampled before the data was checked")

    monkeypatch.setattr(model, "sample", no_sampling)
    with pytest.raises(InvalidInputError, match=r"unknown element\(s\) \['Si'\]"):
        model.evaluate([Molecule([14, 1], [[0, 0, 0], [1.5, 0, 0]], properties=dict.fromkeys(DEFAULT_PROPERTIES, 0.0))],
                       n_samples=5)


def test_bad_saved_runs(runs, tmp_path):
    with pytest.raises(CheckpointError, match=r"edm: holds a 'molecules/edm' system, not 'molecules/unigem'"):
        UniGEM.load(runs / "edm")
    with pytest.raises(CheckpointError, match=r"holds a 'molecules/unigem' system, not 'molecules/edm'"):
        EDM.load(runs / "unigem")
    with pytest.raises(CheckpointError, match="does not exist"):
        UniGEM.load(tmp_path / "norun")


# ------------------------------------------------------------------ CLI
def test_cli_bad_inputs_are_one_line_errors(runs, tmp_path):
    files = {
        "count.xyz": "5\nc\nC 0 0 0\nH 1 0 0\n", "xx.xyz": "2\nc\nXx 0 0 0\nH 1 0 0\n",
        "nan.xyz": "2\nc\nC 0 0 0\nH nan 0 0\n", "zero.xyz": "0\nnothing\n",
        "notes.sdf": "Meeting notes\nnot a molfile\n", "empty.sdf": "", "data.csv": "a,b\n1,2\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "pickled.sdf").write_bytes(pickle.dumps([1, 2, 3]))
    (tmp_path / "folder.sdf").mkdir()
    write_sdf(_molecules(4, props=()), tmp_path / "noprops.sdf")
    write_sdf([Molecule([14, 1], [[0, 0, 0], [1.5, 0, 0]], name="silane")], tmp_path / "si.sdf")
    for name, cfg in (("foo.json", {"properties": ["foo"]}), ("ancestral.json", {"method": "ancestral"}),
                      ("batch0.json", {**TINY, "train": {"batch_size": 0}})):
        (tmp_path / name).write_text(json.dumps(cfg))
    existing = tmp_path / "props.csv"
    existing.write_text("mine")
    t, cfg, uni, edm = tmp_path, str(runs / "tiny.json"), str(runs / "unigem"), str(runs / "edm")
    train = ["molecules", "unigem", "train", "--config", cfg]
    cases = [
        (train + ["--out", str(t / "o1"), "--data", str(t / "count.xyz")], ["count.xyz", "truncated: 5 atoms"]),
        (train + ["--out", str(t / "o2"), "--data", str(t / "xx.xyz")], ["xx.xyz", "unknown element 'Xx'"]),
        (train + ["--out", str(t / "o3"), "--data", str(t / "nan.xyz")], ["nan.xyz", "NaN or inf"]),
        (train + ["--out", str(t / "o4"), "--data", str(t / "zero.xyz")], ["zero.xyz", "positive atom count"]),
        (train + ["--out", str(t / "o5"), "--data", str(t / "notes.sdf")], ["notes.sdf", "cannot parse"]),
        (train + ["--out", str(t / "o6"), "--data", str(t / "empty.sdf")], ["empty.sdf", "empty SDF file"]),
        (train + ["--out", str(t / "o7"), "--data", str(t / "pickled.sdf")], ["pickled.sdf", "not a text SDF"]),
        (train + ["--out", str(t / "o8"), "--data", str(t / "folder.sdf")], ["folder.sdf", "is a directory"]),
        (train + ["--out", str(t / "o9"), "--data", str(t / "gone.sdf")], ["gone.sdf", "no such file"]),
        (train + ["--out", str(t / "o10"), "--data", str(t / "data.csv")], ["data.csv", ".xyz or .sdf"]),
        (train + ["--out", str(t / "o11"), "--data", str(t / "noprops.sdf")], ["not in the dataset", "'alpha'"]),
        (train + ["--out", str(t / "o12"), "--data", str(runs / "train.sdf"), "--max-steps", "0"], ["max_steps"]),
        (["molecules", "unigem", "train", "--out", str(t / "o13"), "--config", str(t / "foo.json"),
          "--data", str(runs / "train.sdf")], ["unknown properties ['foo']"]),
        (["molecules", "unigem", "train", "--out", str(t / "o14"), "--config", str(t / "ancestral.json"),
          "--data", str(runs / "train.sdf")], ["method", "'ancestral'", "'ddpm'"]),
        (["molecules", "unigem", "train", "--out", str(t / "o15"), "--config", str(t / "batch0.json"),
          "--data", str(runs / "train.sdf")], ["batch_size"]),
        (["molecules", "unigem", "sample", "--run", uni, "--out", str(t / "s.sdf"), "--n-samples", "0"],
         ["--n-samples", "0"]),
        (["molecules", "unigem", "sample", "--run", uni, "--out", str(t / "s.sdf"), "--n-samples", "-1"],
         ["--n-samples", "-1"]),
        (["molecules", "unigem", "sample", "--run", edm, "--out", str(t / "s.sdf")], ["molecules/edm", "unigem"]),
        (["molecules", "unigem", "sample", "--run", str(t / "norun"), "--out", str(t / "s.sdf")], ["norun"]),
        (["molecules", "unigem", "predict", "--run", uni, "--data", str(runs / "train.sdf"), "--out", str(existing)],
         ["props.csv", "already exists"]),
        (["molecules", "unigem", "predict", "--run", uni, "--data", str(t / "si.sdf"), "--out", str(t / "p.csv")],
         ["unknown element(s) ['Si']"]),
        (["molecules", "unigem", "predict", "--run", uni, "--data", str(runs / "train.sdf"), "--out",
          str(t / "folder.sdf")], ["folder.sdf", "is a directory"]),
        (["molecules", "edm", "predict", "--run", edm, "--data", str(runs / "train.sdf"), "--out", str(t / "p.csv")],
         ["molecules/edm has no property head"]),
        (["molecules", "unigem", "evaluate", "--run", uni, "--data", str(t / "empty.sdf")], ["empty.sdf"]),
        (["molecules", "unigem", "evaluate", "--run", uni, "--data", str(t / "noprops.sdf")], ["not in the dataset"]),
    ]
    for args, needles in cases:
        assert_one_line_error(cli(*args), *needles)
    assert existing.read_text() == "mine"  # never replaced
    assert not any((t / f"o{k}").exists() for k in range(1, 16))
    assert not (t / "s.sdf").exists() and not (t / "p.csv").exists()


def test_cli_predict_overwrite_replaces_the_file(runs, tmp_path):
    out = tmp_path / "props.csv"
    out.write_text("mine")
    res = cli("molecules", "unigem", "predict", "--run", str(runs / "unigem"), "--data", str(runs / "train.sdf"),
              "--out", str(out), "--overwrite")
    assert res.exit_code == 0, res.output
    import pandas as pd

    table = pd.read_csv(out, index_col=0)
    assert list(table.columns) == list(DEFAULT_PROPERTIES) and len(table) == 16


def test_kill_9_during_sample_leaves_no_file_under_the_final_name(runs, tmp_path):
    """Killed while the SDF is being written (its temporary file seen beside it), the final name stays
    absent; a file that does appear there must hold every molecule (written beside, renamed into place)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from rdkit import Chem

    n = 2500
    out = tmp_path / "x.sdf"
    cmd = [sys.executable, "-m", "scigen.core.cli", "molecules", "unigem", "sample", "--run", str(runs / "unigem"),
           "--out", str(out), "--n-samples", str(n)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})
    seen: list[str] = []
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        seen = [e.name for e in os.scandir(tmp_path)]
        if seen:  # the writer has started: the temporary file (or, if not atomic, x.sdf itself)
            break
        time.sleep(0.0005)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert seen, "the sampler wrote nothing before it ended"
    if out.exists():  # it finished before the kill: then the file must be whole
        assert len(Chem.SDMolSupplier(str(out), sanitize=False, removeHs=False)) == n
    else:
        assert proc.returncode == -signal.SIGKILL and seen != ["x.sdf"]
