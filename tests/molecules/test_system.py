"""UniGEM / EDM systems: save-load-sample round trip, SDF output, bad inputs, learnability (slow), demo."""

import numpy as np
import pytest
import torch

from scigen.molecules import EDM, Molecule, UniGEM, load_qm9, read_sdf
from scigen.molecules.metrics import molecule_metrics

TINY = dict(hidden=16, n_layers=2, lr=2e-3, ema_decay=None, batch_size=16, sample_steps=20, properties=("gap",))


@pytest.fixture(scope="module")
def qm9():
    return load_qm9("all", limit=120)


@pytest.fixture(scope="module")
def trained(qm9):
    return UniGEM(**TINY).fit(qm9, max_steps=5)


def test_save_load_sample_round_trip(trained, qm9, tmp_path):
    trained.save(tmp_path / "run")
    back = UniGEM.load(tmp_path / "run")
    a = trained.sample(3, seed=7)
    b = back.sample(3, seed=7)
    for x, y in zip(a, b, strict=True):
        assert x.atomic_numbers.tolist() == y.atomic_numbers.tolist()
        np.testing.assert_allclose(x.positions, y.positions, atol=1e-5)
        assert set(x.properties) == {"gap"}
    sizes = {m.n_atoms for m in a}
    assert sizes <= {int(k) for k in trained.metadata["size_histogram"]}
    np.testing.assert_allclose(back.predict(qm9.subset(range(4)))["gap"], trained.predict(qm9.subset(range(4)))["gap"])
    path = trained.write_samples(a, tmp_path / "s.sdf")
    mols = read_sdf(path)
    assert len(mols) == 3 and mols[0].n_atoms == a[0].n_atoms
    # given sizes, DDIM sampler
    c = trained.sample(2, n_atoms=[4, 6], method="ddim", steps=5)
    assert [m.n_atoms for m in c] == [4, 6]
    assert all(abs(m.positions.mean(0)).max() < 1e-4 for m in c)  # zero centre of mass


@pytest.mark.parametrize("method", ["dpmpp_2m", "unipc"])
def test_engine_samplers_on_a_trained_model(trained, method):
    out = trained.sample(4, method=method, steps=5, seed=3)
    assert len(out) == 4
    for m in out:
        assert np.isfinite(m.positions).all() and abs(m.positions.mean(0)).max() < 1e-4
        assert set(m.atomic_numbers.tolist()) <= set(trained.config.atom_vocab)
        assert set(m.properties) == {"gap"} and np.isfinite(m.properties["gap"])
    with pytest.raises(ValueError, match="method: expected one of"):
        trained.sample(2, method="rk45")
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
    with pytest.raises(ValueError, match="n must be"):
        trained.sample(0)
    with pytest.raises(ValueError, match="no property head"):
        EDM(hidden=8, n_layers=2).predict(qm9)


def test_edm_mode_trains_and_samples(qm9):
    m = EDM(hidden=16, n_layers=2, ema_decay=None, batch_size=16, sample_steps=10).fit(qm9, max_steps=3)
    out = m.sample(4, seed=1)
    assert len(out) == 4 and all(set(x.atomic_numbers.tolist()) <= {1, 6, 7, 8, 9} for x in out)


@pytest.mark.slow
def test_learnability_stability_and_property_mae():
    """A tiny UniGEM on 1,000 QM9 molecules (300 steps): samples' atom stability far above an untrained
    model and property MAE below the predict-the-mean baseline. Measured: 0.21 vs 0.003; gap MAE 738 vs
    1089 meV; alpha 4.7 vs 10.5 Bohr^3."""
    torch.manual_seed(0)
    data = load_qm9("all", limit=1200)
    train, test = data.subset(range(1000)), data.subset(range(1000, 1200))
    m = UniGEM(hidden=32, n_layers=3, lr=3e-3, ema_decay=0.99, batch_size=32, sample_steps=100,
               properties=("gap", "alpha"))
    m.metadata["size_histogram"] = {str(k): v for k, v in train.size_histogram().items()}
    before = molecule_metrics(m.sample(50))
    m.fit(train, max_steps=300)
    after = m.evaluate(test, n_samples=50)
    assert after["atom_stability"] > before["atom_stability"] + 0.1
    for p in ("gap", "alpha"):
        assert after[f"mae_{p}"] < 0.85 * after[f"mae_mean_baseline_{p}"]


@pytest.mark.slow
@pytest.mark.parametrize("cls", [UniGEM, EDM])
def test_demo_quick(cls, tmp_path):
    res = cls.demo(tmp_path, quick=True)
    assert (tmp_path / "samples.sdf").is_file() and (tmp_path / "report.json").is_file()
    assert res.metrics["atom_stability"] > res.metrics["atom_stability_untrained"]


def test_cli_predict(trained, qm9, tmp_path):
    from typer.testing import CliRunner

    from scigen.core.cli.main import build_app
    from scigen.molecules import write_xyz

    trained.save(tmp_path / "run")
    write_xyz(qm9.to_molecules()[:3], tmp_path / "m.xyz")
    args = ["molecules", "unigem", "predict", "--run", str(tmp_path / "run"),
            "--data", str(tmp_path / "m.xyz"), "--out", str(tmp_path / "p.csv")]
    res = CliRunner().invoke(build_app(args), args)
    assert res.exit_code == 0, res.output
    rows = (tmp_path / "p.csv").read_text().splitlines()
    assert rows[0] == "name,gap" and len(rows) == 4
    want = trained.predict(qm9.subset(range(3)))["gap"]
    np.testing.assert_allclose([float(r.split(",")[1]) for r in rows[1:]], want, rtol=1e-4)
