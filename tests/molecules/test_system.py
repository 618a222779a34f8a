"""UniGEM / EDM systems: presets, save-load-sample round trip, RDKit Mol output, DataFrame predictions,
CSV predictions, bad inputs, learnability (slow), demo (slow)."""

import numpy as np
import pandas as pd
import pytest
import torch
from rdkit import Chem

from scigen.core.errors import InvalidInputError, NotTrainedError
from scigen.core.streams import SampleStreams
from scigen.molecules import EDM, Molecule, UniGEM, load_qm9, read_sdf
from scigen.molecules.metrics import molecule_metrics
from scigen.molecules.unigem import EDMConfig, UniGEMConfig
from scigen.molecules.unigem.process import sample_molecules, size_streams

TINY = dict(hidden=16, n_layers=2, steps=20, properties=("gap",),
            train={"lr": 2e-3, "ema_decay": None, "batch_size": 16, "progress": False})


@pytest.fixture(scope="module")
def qm9():
    return load_qm9("all", limit=120)


@pytest.fixture(scope="module")
def trained(qm9):
    return UniGEM(**TINY).fit(qm9, max_steps=5)


def test_presets_validate_and_config_is_not_mutated(qm9):
    for cfg in (UniGEMConfig, EDMConfig):
        assert cfg.presets() == ["paper", "small", "tiny"]
        for name in cfg.presets():
            c = cfg.preset(name)
            assert c.method in ("ddpm", "dpmpp_2m") and c.train.batch_size % 2 == 0
    assert UniGEMConfig().method == "ddpm" and UniGEMConfig().steps is None  # the paper's sampler, all T steps
    assert UniGEMConfig.preset("paper").hidden == 256 and UniGEMConfig.preset("paper").n_layers == 9
    m = UniGEM(**TINY)
    before = m.config.model_dump()
    m.fit(qm9, max_steps=2, lr=1e-3, batch_size=8)
    assert m.config.model_dump() == before
    assert m.history.steps == 2 and m.history.final_loss is not None and "final_loss" not in m.metadata
    with pytest.raises(ValueError, match="batch_size must be even"):
        UniGEM(train={"batch_size": 15})


def test_untrained_sample_is_refused():
    with pytest.raises(NotTrainedError, match="untrained"):
        UniGEM(**TINY).sample(2)


def test_save_load_sample_round_trip(trained, qm9, tmp_path):
    trained.save(tmp_path / "run")
    back = UniGEM.load(tmp_path / "run", device="cpu")
    a = trained.sample(3, seed=7)
    b = back.sample(n_samples=3, seed=7)
    assert back.history.steps == trained.history.steps == 5
    for x, y in zip(a, b, strict=True):
        assert isinstance(x, Chem.Mol) and x.GetNumConformers() == 1
        assert [t.GetAtomicNum() for t in x.GetAtoms()] == [t.GetAtomicNum() for t in y.GetAtoms()]
        np.testing.assert_allclose(x.GetConformer().GetPositions(), y.GetConformer().GetPositions(), atol=1e-5)
        assert set(x.GetPropsAsDict()) == {"gap"} and np.isfinite(x.GetDoubleProp("gap"))
    sizes = {m.GetNumAtoms() for m in a}
    assert sizes <= {int(k) for k in trained.metadata["size_histogram"]}
    pd.testing.assert_frame_equal(back.predict(qm9.subset(range(4))), trained.predict(qm9.subset(range(4))))
    path = trained.write_samples(a, tmp_path / "s.sdf")
    mols = read_sdf(path)
    assert len(mols) == 3 and mols[0].n_atoms == a[0].GetNumAtoms()
    # given sizes, DDIM sampler
    c = trained.sample(2, n_atoms=[4, 6], method="ddim", steps=5)
    assert [m.GetNumAtoms() for m in c] == [4, 6]
    assert all(abs(m.GetConformer().GetPositions().mean(0)).max() < 1e-4 for m in c)  # zero centre of mass


def test_mol_coordinates_and_properties_equal_the_internal_ones(trained):
    """The RDKit Mols of ``sample`` carry exactly the sampler's coordinates, types and de-normalised props."""
    mols = trained.sample(4, seed=11, method="ddim", steps=6)
    keyed = SampleStreams(11, torch.arange(4))  # molecule i keyed by (seed, i)
    sizes = trained._sizes(4, None, size_streams(keyed))
    res = sample_molecules(trained.process, sizes, mode="unigem", vocab=trained.config.atom_vocab, method="ddim",
                           steps=6, generator=keyed)
    ptr = res["ptr"].tolist()
    mean, mad = trained.metadata["prop_mean"][0], trained.metadata["prop_mad"][0]
    for b, m in enumerate(mols):
        want = res["pos"][ptr[b]:ptr[b + 1]].double().numpy()
        np.testing.assert_array_equal(m.GetConformer().GetPositions(), want)
        z = [trained.config.atom_vocab[int(i)] for i in res["types"][ptr[b]:ptr[b + 1]]]
        assert [a.GetAtomicNum() for a in m.GetAtoms()] == z
        assert m.GetDoubleProp("gap") == pytest.approx(float(res["props"][b, 0]) * mad + mean, rel=1e-6)
        assert m.GetProp("_Name") == f"unigem_{b}"


def test_predict_returns_a_dataframe_indexed_by_molecule(trained, qm9):
    sub = qm9.subset(range(5))
    df = trained.predict(sub)
    assert isinstance(df, pd.DataFrame) and list(df.columns) == ["gap"] and df.index.name == "molecule"
    assert list(df.index) == sub.names
    mols = [Chem.Mol(m) for m in trained.sample(3, seed=1)]
    assert list(trained.predict(mols).index) == ["unigem_0", "unigem_1", "unigem_2"]  # RDKit Mols in
    # samples carry no hidden hydrogens: RDKit adds none the model did not generate
    assert all(a.GetNoImplicit() and a.GetTotalNumHs() == 0 for m in mols for a in m.GetAtoms())


@pytest.mark.parametrize("method", ["dpmpp_2m", "unipc"])
def test_engine_samplers_on_a_trained_model(trained, method):
    out = trained.sample(4, method=method, steps=5, seed=3)
    assert len(out) == 4
    for m in out:
        pos = m.GetConformer().GetPositions()
        assert np.isfinite(pos).all() and abs(pos.mean(0)).max() < 1e-4
        assert {a.GetAtomicNum() for a in m.GetAtoms()} <= set(trained.config.atom_vocab)
        assert np.isfinite(m.GetDoubleProp("gap"))
    with pytest.raises(ValueError, match="unknown sampler method 'ancestral'; valid: "):
        trained.sample(2, method="ancestral")  # the old name: the engine's is "ddpm"
    with pytest.raises(ValueError, match="steps must be"):
        trained.sample(2, method=method, steps=0)


def test_bad_inputs(trained, qm9):
    with pytest.raises(ValueError, match="max_atoms"):
        trained.sample(1, n_atoms=40)
    with pytest.raises(ValueError, match="max_atoms"):
        UniGEM(**{**TINY, "max_atoms": 5}).fit(qm9, max_steps=1)
    with pytest.raises(ValueError, match="not in the dataset"):
        UniGEM(**{**TINY, "properties": ("gap",)}).fit(load_qm9("all", limit=4, properties=["homo"]), max_steps=1)
    with pytest.raises(ValueError, match="unknown properties"):
        UniGEM(properties=("bandgap",))
    with pytest.raises(ValueError, match="unknown element"):
        trained.predict([Molecule([6, 16], [[0, 0, 0], [1.8, 0, 0]])])
    with pytest.raises(ValueError, match="NaN"):
        trained.predict([Molecule([6, 1], [[0, 0, 0], [np.nan, 0, 0]])])
    with pytest.raises(ValueError, match="n_samples must be"):
        trained.sample(0)
    with pytest.raises(ValueError, match="no property head"):
        EDM(hidden=8, n_layers=2).predict(qm9)


def test_element_symbol_where_an_atomic_number_is_expected():
    with pytest.raises(InvalidInputError, match=r"atomic_numbers\[1\].*'C'.*atomic number 6"):
        Molecule([1, "C"], [[0, 0, 0], [1.1, 0, 0]])
    with pytest.raises(InvalidInputError, match=r"atomic_numbers\[0\]\[0\]: .*'H'"):
        from scigen.molecules import MoleculeSet

        MoleculeSet([["H", "H"]], [np.zeros((2, 3))])
    with pytest.raises(InvalidInputError, match="expected an atomic number"):
        Molecule([6.5], [[0, 0, 0]])


def test_edm_mode_trains_and_samples(qm9):
    m = EDM(hidden=16, n_layers=2, steps=10, train={"ema_decay": None, "batch_size": 16, "progress": False})
    m.fit(qm9, max_steps=3)
    out = m.sample(4, seed=1)
    assert len(out) == 4 and all({a.GetAtomicNum() for a in x.GetAtoms()} <= {1, 6, 7, 8, 9} for x in out)


@pytest.mark.slow
def test_learnability_stability_and_property_mae():
    """A tiny UniGEM on 1,000 QM9 molecules (300 steps): samples' atom stability far above an untrained
    model and property MAE below the predict-the-mean baseline. Measured: 0.21 vs 0.003; gap MAE 738 vs
    1089 meV; alpha 4.7 vs 10.5 Bohr^3."""
    torch.manual_seed(0)
    data = load_qm9("all", limit=1200)
    train, test = data.subset(range(1000)), data.subset(range(1000, 1200))
    m = UniGEM(hidden=32, n_layers=3, steps=100, properties=("gap", "alpha"),
               train={"lr": 3e-3, "ema_decay": 0.99, "batch_size": 32, "progress": False})
    m.metadata["size_histogram"] = {str(k): v for k, v in train.size_histogram().items()}
    before = molecule_metrics(m._generate(50))
    m.fit(train, max_steps=300)
    after = m.evaluate(test, n_samples=50)
    assert after["atom_stability"] > before["atom_stability"] + 0.1
    for p in ("gap", "alpha"):
        assert after[f"mae_{p}"] < 0.85 * after[f"mae_mean_baseline_{p}"]


@pytest.mark.slow
@pytest.mark.parametrize("cls", [UniGEM, EDM])
def test_demo_quick(cls, tmp_path):
    res = cls.demo(tmp_path, quick=True, threads=1)
    assert (tmp_path / "samples.sdf").is_file() and (tmp_path / "report.json").is_file()
    assert res.metrics["atom_stability"] > res.metrics["atom_stability_untrained"]


def test_cli_predict_csv_round_trips_names_with_commas(trained, qm9, tmp_path):
    from typer.testing import CliRunner

    from scigen.core.cli.main import build_app
    from scigen.molecules import write_xyz

    trained.save(tmp_path / "run")
    mols = qm9.to_molecules()[:3]
    names = ['benzene, "dry"', "ethanol,1", "plain"]
    for m, nm in zip(mols, names, strict=True):
        m.name = nm
    write_xyz(mols, tmp_path / "m.xyz")
    args = ["molecules", "unigem", "predict", "--run", str(tmp_path / "run"),
            "--data", str(tmp_path / "m.xyz"), "--out", str(tmp_path / "p.csv"), "--threads", "1"]
    res = CliRunner().invoke(build_app(args), args)
    assert res.exit_code == 0, res.output
    back = pd.read_csv(tmp_path / "p.csv", index_col=0)
    assert list(back.index) == names and list(back.columns) == ["gap"] and back.index.name == "molecule"
    want = trained.predict(qm9.subset(range(3)))["gap"].to_numpy()
    np.testing.assert_allclose(back["gap"].to_numpy(), want, rtol=1e-5)
    # a bad input is one line on stderr, exit status 2
    args[6], args[8] = str(tmp_path / "missing.xyz"), str(tmp_path / "p2.csv")  # p.csv now exists: refused
    res = CliRunner().invoke(build_app(args), args)
    assert res.exit_code == 2 and "missing.xyz" in res.output and "Traceback" not in res.output
