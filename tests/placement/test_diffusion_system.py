"""The diffusion placer: guided sampling + legalisation, the sample/place vocabulary, save/load/place, bad inputs,
the place command, demo. (Loss and sampler equivalence with the former code: test_diffusion_engine.py.)"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from scigen.core.errors import CheckpointError, InvalidInputError
from scigen.placement import generate_netlist, place, read_bookshelf, write_bookshelf
from scigen.placement.diffusion.config import DiffusionPlacerConfig
from scigen.placement.diffusion.system import DiffusionPlacer
from scigen.placement.legalize import LegalizerConfig, legalize
from scigen.placement.metrics import evaluate_placement
from scigen.placement.potentials import Potentials
from scigen.placement.synthetic import SynthConfig

FAST = dict(copies=8, steps=12, inner_steps=2, legalize_steps=800, train={"lr": 2e-3, "ema_decay": None, "progress": False})


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    torch.manual_seed(0)
    model = DiffusionPlacer(DiffusionPlacerConfig.preset("tiny", **FAST))
    model.fit(DiffusionPlacer.default_data(n=6, objects=10), max_steps=30)
    return model


def test_guided_sampling_is_legal_on_heldout(trained):
    nl = generate_netlist(12345, SynthConfig.for_size(10))
    placed, m = trained.place(nl)
    assert m["legality"] >= 0.99
    assert set(m) >= {"hpwl", "macro_hpwl", "legality", "overlap"}
    ref = evaluate_placement(placed)
    assert ref["hpwl"] == pytest.approx(m["hpwl"])


def test_fixed_objects_respected(trained):
    nl = generate_netlist(77, SynthConfig.for_size(10))
    nl.fixed[[0, 3]] = True
    placed, m = trained.place(nl)
    np.testing.assert_array_equal(placed.lower_left[[0, 3]], nl.lower_left[[0, 3]])
    assert not np.allclose(placed.lower_left[[1, 2]], nl.lower_left[[1, 2]])
    assert m["legality"] >= 0.99


def test_legalize_removes_overlap():
    nl = generate_netlist(5, SynthConfig.for_size(15))
    pot = Potentials.from_graph(nl.to_graph())
    x = torch.zeros(1, 15, 2)  # every object stacked at the centre
    y, info = legalize(x, pot, LegalizerConfig(steps=3000, hpwl_weight=0.0))
    assert evaluate_placement(nl, nl.denormalize_pos(y[0]))["legality"] >= 0.99


def test_save_load_place_round_trip(trained, tmp_path):
    trained.save(tmp_path / "run")
    loaded = DiffusionPlacer.load(tmp_path / "run")
    nl = generate_netlist(99, SynthConfig.for_size(8))
    a, ma = trained.place(nl, seed=3)
    b, mb = place(nl, tmp_path / "run", seed=3)
    np.testing.assert_allclose(a.lower_left, b.lower_left, atol=1e-9)
    assert ma["hpwl"] == pytest.approx(mb["hpwl"])
    assert loaded.config == trained.config
    # Bookshelf out and back
    nl2 = read_bookshelf(write_bookshelf(b, tmp_path / "placed"))
    np.testing.assert_array_equal(nl2.lower_left, b.lower_left)


def test_macro_only_placement_keeps_cells(trained, tiny_aux):
    nl = read_bookshelf(tiny_aux)  # b is a one-row standard cell, p0 a port, m a fixed macro
    placed, m = trained.place(nl)
    for k in ("b", "p0", "m"):
        i = nl.names.index(k)
        np.testing.assert_array_equal(placed.lower_left[i], nl.lower_left[i])


def test_bad_inputs(trained, tmp_path):
    nl = generate_netlist(1, SynthConfig.for_size(8))
    big = nl.copy()
    big.size[:] = 600.0  # 8 objects of 600 x 600 on a 1000 x 1000 canvas
    with pytest.raises(InvalidInputError, match="infeasible"):
        trained.place(big)
    with pytest.raises(InvalidInputError, match="Netlist"):
        trained.place("not a netlist")
    with pytest.raises(InvalidInputError, match="hidden"):
        DiffusionPlacer(hidden=-1)
    with pytest.raises(CheckpointError):
        DiffusionPlacer.load(tmp_path)
    with pytest.raises(InvalidInputError, match="trained model"):
        place(nl)


@pytest.mark.slow
def test_demo(tmp_path):
    res = DiffusionPlacer.demo(tmp_path, quick=True)
    assert res.metrics["legality"] >= 0.99
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["system"] == "placement/diffusion"
    assert (tmp_path / "placement.png").stat().st_size > 1000


def test_wa_wirelength_tends_to_hpwl_from_below():
    """Weighted-average wirelength (Hsu et al. 2011) underestimates each net's HPWL and converges to it."""
    nl = generate_netlist(8, SynthConfig.for_size(12))
    g = nl.to_graph()
    pot = Potentials.from_graph(g, dtype=torch.float64)
    x = g.pos.double()[None]
    exact = float(pot.hpwl(x))
    assert exact == pytest.approx(evaluate_placement(nl)["hpwl"] * 2 / 1000, rel=1e-6)  # canvas 1000 -> width 2
    wa = [float(pot.hpwl(x, gamma)) for gamma in (0.1, 0.01, 1e-4)]
    assert all(w <= exact + 1e-9 for w in wa)
    assert wa[0] < wa[1] < wa[2] and wa[2] == pytest.approx(exact, rel=1e-3)


def test_hpwl_aware_legaliser_shortens_wires():
    """From the same overlapping start, the legaliser with a wirelength term ends legal and shorter."""
    nl = generate_netlist(21, SynthConfig.for_size(15))
    pot = Potentials.from_graph(nl.to_graph())
    x = 0.3 * torch.randn(1, 15, 2, generator=torch.Generator().manual_seed(0))
    out = {}
    for w in (0.0, 10.0):
        y, _ = legalize(x, pot, LegalizerConfig(steps=3000, hpwl_weight=w))
        out[w] = evaluate_placement(nl, nl.denormalize_pos(y[0]))
        assert out[w]["legality"] >= 0.99
    assert out[10.0]["hpwl"] < 0.9 * out[0.0]["hpwl"]


def test_guidance_shortens_wires_and_clipping_keeps_samples_on_canvas(trained):
    """Before legalisation: HPWL guidance (w > 0) gives shorter wires than legality-only guidance (w = 0),
    and the clipped x0 estimate keeps the unguided chain inside the canvas."""
    nl = generate_netlist(4321, SynthConfig.for_size(12))
    hp = {}
    for w in (0.0, 20.0):
        m = DiffusionPlacer(trained.config.model_copy(update={"hpwl_weight": w, "steps": 20}))
        m.network, m.history = trained.network, trained.history
        _, metrics = m.place(nl, best_of=4, legalize_steps=0)
        hp[w] = metrics["hpwl_guided"]
    assert hp[20.0] < 0.8 * hp[0.0]
    free = DiffusionPlacer(trained.config.model_copy(update={"guidance": False}))
    free.network, free.history = trained.network, trained.history
    x, _ = free.sample_positions(nl, 4, legalize_steps=0)
    assert float(x.abs().max()) <= 1.0


def test_sample_returns_n_samples_netlists_and_place_returns_the_best(trained):
    from scigen.placement import Netlist

    nl = generate_netlist(321, SynthConfig.for_size(10))
    three = trained.sample(nl, n_samples=3, seed=5)
    assert isinstance(three, list) and len(three) == 3 and all(isinstance(p, Netlist) for p in three)
    assert all(p.names == nl.names for p in three)
    assert not np.allclose(three[0].lower_left, three[1].lower_left)  # independent draws
    scores = [evaluate_placement(p) for p in three]
    assert all(s["legality"] >= 0.99 for s in scores)
    best, metrics = trained.place(nl, best_of=3, seed=5)  # the same three draws: the shortest legal one is kept
    assert isinstance(best, Netlist)
    assert evaluate_placement(best)["hpwl"] == pytest.approx(min(s["hpwl"] for s in scores)) == metrics["hpwl"]
    with pytest.warns(DeprecationWarning, match=r"sample\(netlist, best_of=k\).*use DiffusionPlacer.place"):
        old = trained.sample(nl, best_of=3, seed=5)  # one return type: a list, here of the one best
    assert isinstance(old, list) and len(old) == 1 and np.allclose(old[0].lower_left, best.lower_left)
    assert len(trained.sample(nl, seed=5)) == 1
    with pytest.raises(InvalidInputError, match="not both"):
        trained.sample(nl, n_samples=2, best_of=2)
    for bad in ({"n_samples": 0}, {"n_samples": -1}, {"best_of": 0}, {"steps": -2}, {"method": "nope"}):
        with pytest.raises(InvalidInputError):
            trained.sample(nl, **bad)


def test_presets_and_untrained_sampling():
    from scigen.core.errors import NotTrainedError

    assert DiffusionPlacerConfig.presets() == ["paper", "small", "tiny"]
    paper = DiffusionPlacerConfig.preset("paper")
    assert paper == DiffusionPlacerConfig()  # the defaults are the paper's large model and budget
    assert (paper.hidden, paper.n_blocks, paper.copies, paper.train.max_steps, paper.steps, paper.method) == (
        256, 3, 64, 100_000, 1000, "ddpm")
    tiny = DiffusionPlacerConfig.preset("tiny", train={"max_steps": 7})
    assert tiny.hidden == 32 and tiny.train.max_steps == 7 and tiny.train.lr == 2e-3  # nested merge
    with pytest.raises(InvalidInputError, match="method"):
        DiffusionPlacer(method="ancestral")
    model = DiffusionPlacer(tiny)
    with pytest.raises(NotTrainedError):
        model.sample(generate_netlist(1, SynthConfig.for_size(8)))


def test_fit_refuses_bad_data_and_keeps_the_config():
    model = DiffusionPlacer(DiffusionPlacerConfig.preset("tiny", **FAST))
    before = model.config.model_copy(deep=True)
    with pytest.raises(InvalidInputError, match="Netlist"):
        model.fit([1, 2, 3], max_steps=2)
    frozen = generate_netlist(2, SynthConfig.for_size(8))
    frozen.fixed[:] = True
    with pytest.raises(InvalidInputError, match="no movable object"):
        model.fit([frozen], max_steps=2)
    model.fit(DiffusionPlacer.default_data(n=2, objects=8), max_steps=3, lr=1e-3)
    assert model.config == before and model.history.steps == 3 and model.history.final_loss is not None


def _cli(*args):
    from typer.testing import CliRunner

    from scigen.core.cli import build_app

    return CliRunner().invoke(build_app(list(args)), list(args))


def test_place_command_writes_one_folder_atomically_and_refuses_bad_counts(trained, tmp_path, tiny_aux):
    run = tmp_path / "run"
    trained.save(run)
    base = ["placement", "diffusion", "place", "--run", str(run), "--netlist", str(tiny_aux)]
    for flag, value, msg in (("--n-samples", "0", "--n-samples"), ("--n-samples", "-1", "--n-samples"),
                             ("--steps", "-2", "--steps")):
        res = _cli(*base, "--out", str(tmp_path / "bad"), flag, value)
        assert res.exit_code == 2, res.output
        lines = [ln for ln in res.output.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: ") and msg in lines[0]
        assert not (tmp_path / "bad").exists()
    out = tmp_path / "placed"
    res = _cli(*base, "--out", str(out), "--n-samples", "2", "--steps", "6")
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["metrics.json", "placement.png"] + [f"{nl_name}.{e}" for nl_name in [read_bookshelf(tiny_aux).name]
                                             for e in ("aux", "nodes", "nets", "pl", "scl", "wts")])
    metrics = json.loads((out / "metrics.json").read_text())
    placed = read_bookshelf(next(out.glob("*.aux")))
    assert metrics["hpwl"] == pytest.approx(evaluate_placement(placed)["hpwl"], rel=1e-6)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["run", "placed", "t.aux", "t.nodes", "t.nets",
                                                                  "t.pl", "t.scl", "t.wts"])  # no temporaries
    res = _cli(*base, "--out", str(out))
    assert res.exit_code == 2 and "exists" in res.output
    res = _cli(*base, "--out", str(out), "--overwrite", "--steps", "6")
    assert res.exit_code == 0, res.output


def test_write_samples_writes_one_folder_per_placement(trained, tmp_path):
    nl = generate_netlist(8, SynthConfig.for_size(8))
    placed = trained.sample(nl, n_samples=2, seed=0)
    out = trained.write_samples(placed, tmp_path / "s")
    assert sorted(p.name for p in out.iterdir()) == ["000", "001"]
    back = read_bookshelf(next((out / "001").glob("*.aux")))
    np.testing.assert_allclose(back.lower_left, placed[1].lower_left, atol=1e-6)
    with pytest.raises(InvalidInputError, match="exists"):
        trained.write_samples(placed, out)


def test_plot_draws_into_a_given_axes_without_touching_the_backend(tmp_path):
    import matplotlib
    import matplotlib.pyplot as plt

    from scigen.placement import plot_placement

    backend = matplotlib.get_backend()
    nl = generate_netlist(9, SynthConfig.for_size(8))
    fig, ax = plt.subplots()
    assert plot_placement(nl, ax=ax, title="x") is fig and len(ax.patches) >= 1 and ax.get_title() == "x"
    assert not list(tmp_path.iterdir())
    fig2 = plot_placement(nl, tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 1000 and matplotlib.get_backend() == backend
    plt.close(fig)
    plt.close(fig2)
