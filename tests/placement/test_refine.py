"""Quadratic-wirelength refinement (scigen.placement.refine) and the diffusion placer's refinement stage."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from scigen.placement import Netlist, generate_netlist
from scigen.placement.diffusion.config import DiffusionPlacerConfig
from scigen.placement.diffusion.system import DiffusionPlacer, _better_of_pairs
from scigen.placement.metrics import evaluate_placement
from scigen.placement.potentials import Potentials
from scigen.placement.refine import quadratic_descent, quadratic_wirelength
from scigen.placement.synthetic import SynthConfig


def _two_pads_one_macro(a, b, canvas=(0.0, 0.0, 100.0, 100.0)):
    """Pads at ``a`` and ``b`` (fixed, zero size), one movable 4 x 4 macro wired to each by a 2-pin net."""
    pos = np.array([a, b, [50.0, 50.0]])
    size = np.array([[0.0, 0.0], [0.0, 0.0], [4.0, 4.0]])
    return Netlist(names=["pa", "pb", "m"], size=size, lower_left=pos - size / 2,
                   terminal=np.array([True, True, False]), fixed=np.array([True, True, False]),
                   pin_obj=np.array([0, 2, 1, 2]), pin_offset=np.zeros((4, 2)), net_ptr=[0, 2, 4], canvas=canvas)


def test_quadratic_wirelength_is_the_sum_over_driver_sink_edges():
    nl = generate_netlist(3, SynthConfig.for_size(12))
    g = nl.to_graph()
    pot = Potentials.from_graph(g)
    x = torch.rand(2, nl.num_objects, 2, generator=torch.Generator().manual_seed(0)) * 2 - 1
    xp = pot.pin(x).double().numpy()
    # the forward half of the graph's edges is one driver -> sink edge per sink pin (Netlist.to_graph)
    src, dst = g.edge_index[:, : g.edge_index.shape[1] // 2].numpy()
    a = g.edge_attr[: g.edge_index.shape[1] // 2].double().numpy()
    ref = [float((((xb[src] + a[:, :2]) - (xb[dst] + a[:, 2:])) ** 2).sum()) for xb in xp]
    np.testing.assert_allclose(quadratic_wirelength(x, pot).double().numpy(), ref, rtol=1e-5)


def test_descent_without_spreading_reaches_the_quadratic_minimiser():
    # one macro between two pads: W2 = |x - a|^2 + |x - b|^2 is minimal at the midpoint (a + b) / 2
    nl = _two_pads_one_macro([10.0, 20.0], [70.0, 60.0])
    pot = Potentials.from_graph(nl.to_graph())
    x0 = torch.tensor(nl.normalize_pos(nl.pos), dtype=torch.float32)[None]
    x = quadratic_descent(x0, pot, steps=600, lr=0.01, spread=0.0)
    centre = nl.denormalize_pos(x[0])[2]
    np.testing.assert_allclose(centre, [40.0, 40.0], atol=0.2)
    np.testing.assert_array_equal(x[0, :2].numpy(), x0[0, :2].numpy())  # the pads never move


def test_better_of_pairs_prefers_legal_then_shorter():
    nl = _two_pads_one_macro([10.0, 20.0], [70.0, 60.0])
    norm = lambda p: torch.tensor(nl.normalize_pos(np.array(p)), dtype=torch.float32)  # noqa: E731
    near = norm([[10, 20], [70, 60], [40, 40]])     # legal, HPWL 2 * (30 + 20) = 100
    far = norm([[10, 20], [70, 60], [80, 90]])      # legal, longer
    off = norm([[10, 20], [70, 60], [40, 99.5]])    # half of the macro off the canvas: illegal
    a = torch.stack([far, near, off])
    b = torch.stack([near, far, far])
    kept, share = _better_of_pairs(nl, a, b)
    torch.testing.assert_close(kept, torch.stack([near, near, far]))
    assert share == pytest.approx(2 / 3)
    assert evaluate_placement(nl.with_positions(nl.denormalize_pos(near)))["hpwl"] == pytest.approx(100.0)


def test_placer_refinement_keeps_the_better_placement_per_sample():
    torch.manual_seed(0)
    fast = dict(copies=4, steps=6, inner_steps=1, legalize_steps=300, train={"lr": 2e-3, "ema_decay": None,
                                                                               "progress": False})
    model = DiffusionPlacer(DiffusionPlacerConfig.preset("tiny", **fast))
    model.fit(DiffusionPlacer.default_data(n=4, objects=10), max_steps=5)
    nl = generate_netlist(4321, SynthConfig.for_size(10))
    _, plain = model.place(nl, seed=3)
    model.config = model.config.model_copy(update={"refine_steps": 150})
    _, refined = model.place(nl, seed=3)
    assert "refined_kept" in refined and "refined_kept" not in plain
    assert refined["legality"] >= 0.99
    # a 5-step model places wires far worse than quadratic descent does: the refinement must be kept
    assert refined["refined_kept"] == 1.0 and refined["hpwl"] < plain["hpwl"]
    assert refined["hpwl_guided"] == pytest.approx(plain["hpwl_guided"])  # the same guided sample
    with pytest.raises(ValueError, match="refine_steps"):
        DiffusionPlacerConfig(refine_steps=-1)
