"""The diffusion placer: loss masking, guided sampling + legalisation, save/load/place, bad inputs, demo."""

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

FAST = dict(copies=8, lr=2e-3, sample_steps=12, inner_steps=2, legalize_steps=800, ema_decay=None)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    torch.manual_seed(0)
    model = DiffusionPlacer(DiffusionPlacerConfig.preset("tiny", **FAST))
    model.fit(DiffusionPlacer.default_data(n=6, objects=10), max_steps=30)
    return model


def test_loss_ignores_ports(trained):
    """Changing the network's output on port rows must not change the loss (ports are masked)."""
    nl = generate_netlist(3, SynthConfig.for_size(10))
    nl.terminal[:2] = True
    nl.fixed[:2] = True
    nl.size[:2] = 0.0
    from scigen.placement.diffusion.system import _Circuit

    circ = _Circuit(nl)
    assert circ.port[:2].all() and not circ.port[2:].any()

    class Wrap(torch.nn.Module):
        def __init__(self, net, bump):
            super().__init__()
            self.net, self.bump = net, bump

        def forward(self, x, t, g):
            out = self.net(x, t, g)
            return out + self.bump * torch.isin(torch.arange(x.shape[1]), torch.tensor([0, 1]))[None, :, None]

    losses = []
    for bump in (0.0, 100.0):
        torch.manual_seed(1)
        losses.append(float(trained.loss(Wrap(trained.network, bump), circ)))
    assert losses[0] == pytest.approx(losses[1], rel=1e-6)


def test_loss_is_eps_mse_for_exact_predictor():
    """A network returning the true noise (recovered from x_t and the known x0) has loss 0."""
    model = DiffusionPlacer(DiffusionPlacerConfig.preset("tiny", **FAST))
    nl = generate_netlist(4, SynthConfig.for_size(10))
    from scigen.placement.diffusion.system import T_EPS, _Circuit, _path

    circ = _Circuit(nl)
    path = _path()

    class Oracle(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.p = torch.nn.Parameter(torch.zeros(1))

        def forward(self, x, t, g):
            return (x - path.alpha(t)[:, None, None] * circ.x0) / path.sigma(t)[:, None, None]

    assert T_EPS > 0
    assert float(model.loss(Oracle(), circ)) < 1e-8


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
        m = DiffusionPlacer(trained.config.model_copy(update={"hpwl_weight": w, "sample_steps": 20}))
        m.network = trained.network
        _, metrics = m.place(nl, n=4, legalize_steps=0)
        hp[w] = metrics["hpwl_guided"]
    assert hp[20.0] < 0.8 * hp[0.0]
    free = DiffusionPlacer(trained.config.model_copy(update={"guidance": False}))
    free.network = trained.network
    x, _ = free.sample_positions(nl, 4, legalize_steps=0)
    assert float(x.abs().max()) <= 1.0
