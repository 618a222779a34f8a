"""Baseline placers for the benchmark: random legal placement and an analytical placer.

* :func:`random_legal`: movable objects (largest first) at uniform random positions, redrawn up to
  ``attempts`` times until they overlap nothing placed; objects that never fit are legalised by
  :func:`scigen.placement.legalize.legalize` with zero wirelength weight.
* :func:`analytical`: force-directed / quadratic wirelength minimisation
  (:func:`scigen.placement.refine.quadratic_descent`: Adam on the squared driver-sink pin distances of
  every net, plus a weak density spreading term, from a random start),
  followed by the same legaliser as the diffusion placer (pass the placer's ``LegalizerConfig`` to
  compare like with like).
"""

from __future__ import annotations

import time

import numpy as np
import torch

from scigen.placement.legalize import LegalizerConfig, legalize
from scigen.placement.metrics import evaluate_placement
from scigen.placement.netlist import Netlist
from scigen.placement.potentials import Potentials
from scigen.placement.refine import quadratic_descent

__all__ = ["analytical", "random_legal"]


def random_legal(nl: Netlist, *, seed: int = 0, attempts: int = 200, legalize_steps: int = 2000):
    """``(placed netlist, metrics)`` of a random legal placement (module docstring)."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    g = nl.to_graph()
    size = g.x.double().numpy()
    pos = g.pos.double().numpy().copy()
    movable = ~(g.is_fixed | g.is_ports).numpy()
    placed = list(np.nonzero(~movable & (size.prod(1) > 0))[0])
    failed = False
    for i in sorted(np.nonzero(movable)[0], key=lambda k: -size[k].prod()):
        for _ in range(attempts):
            c = rng.uniform(-1 + size[i] / 2, 1 - size[i] / 2)
            ox = (size[i, 0] + size[placed, 0]) / 2 - np.abs(c[0] - pos[placed, 0])
            oy = (size[i, 1] + size[placed, 1]) / 2 - np.abs(c[1] - pos[placed, 1])
            if not ((ox > 0) & (oy > 0)).any():
                break
        else:
            failed = True
        pos[i] = c
        placed.append(i)
    x = torch.tensor(pos, dtype=torch.float32)[None]
    if failed:
        with torch.enable_grad():
            x, _ = legalize(x, Potentials.from_graph(g), LegalizerConfig(steps=legalize_steps, hpwl_weight=0.0))
    out = nl.with_positions(nl.denormalize_pos(x[0]))
    m = evaluate_placement(out)
    m["seconds"] = time.perf_counter() - t0
    return out, m


def analytical(nl: Netlist, *, seed: int = 0, steps: int = 500, lr: float = 0.02, spread: float = 0.05,
               legalizer: LegalizerConfig | None = None):
    """``(placed netlist, metrics)`` of quadratic wirelength minimisation + legalisation (module docstring)."""
    t0 = time.perf_counter()
    g = nl.to_graph()
    pot = Potentials.from_graph(g)
    gen = torch.Generator().manual_seed(seed)
    x = (torch.rand(1, nl.num_objects, 2, generator=gen) * 2 - 1) * 0.5
    x = quadratic_descent(x, pot, steps=steps, lr=lr, spread=spread)
    with torch.enable_grad():
        xl, _ = legalize(x, pot, legalizer or LegalizerConfig())
    out = nl.with_positions(nl.denormalize_pos(xl[0]))
    m = evaluate_placement(out)
    m["seconds"] = time.perf_counter() - t0
    return out, m
