"""Metrics against hand computation, shapely polygon unions and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from shapely.geometry import box
from shapely.ops import unary_union

from scigen.kernels import box_overlap_energy
from scigen.placement.bookshelf import read_bookshelf
from scigen.placement.metrics import (
    evaluate_placement,
    hpwl,
    legality_score,
    macro_hpwl,
    total_overlap,
    union_area,
)
from scigen.placement.netlist import Netlist


def _boxes(pos, size, canvas=(0.0, 0.0, 10.0, 10.0)):
    v = len(pos)
    return Netlist(names=[f"o{i}" for i in range(v)], size=size, lower_left=np.asarray(pos) - np.asarray(size) / 2,
                   terminal=np.zeros(v, bool), fixed=np.zeros(v, bool), pin_obj=np.zeros(0, np.int64),
                   pin_offset=np.zeros((0, 2)), net_ptr=[0], canvas=canvas)


def test_hpwl_by_hand(tiny_aux):
    nl = read_bookshelf(tiny_aux)
    # lower-left a(0,0) 20x30, b(30,0) 10x10, c(50,50) 40x20, p0(0,100) 0x0, m(60,0) 30x30
    # n0 pins: b centre (35,5)+0; a (10,15)+(5,-5) = (15,10); p0 (0,100) -> x 0..35, y 5..100 -> 35 + 95
    # n1 pins: c (70,60)+(-10,5) = (60,65); m (75,15)+(2.5,0) = (77.5,15) -> 17.5 + 50
    assert hpwl(nl) == pytest.approx(130 + 67.5)
    # macros a, c, m: n0 keeps a only (0), n1 keeps both
    assert macro_hpwl(nl) == pytest.approx(67.5)


def test_legality_one_for_disjoint_inside():
    nl = _boxes([[1, 1], [3, 1], [5, 5]], [[2, 2], [2, 2], [1, 3]])  # a and b touch along x = 2
    assert legality_score(nl) == 1.0
    assert total_overlap(nl) == 0.0


def test_legality_outside_canvas():
    nl = _boxes([[0, 5]], [[2, 2]])  # half the box lies left of x = 0
    assert legality_score(nl) == pytest.approx(0.5)


@pytest.mark.parametrize("seed", range(4))
def test_legality_matches_shapely(seed):
    rng = np.random.default_rng(seed)
    v = 25
    size = rng.uniform(0.5, 3.0, (v, 2))
    pos = rng.uniform(-0.5, 10.5, (v, 2))
    nl = _boxes(pos, size)
    polys = [box(*(pos[i] - size[i] / 2), *(pos[i] + size[i] / 2)) for i in range(v)]
    ref = unary_union(polys).intersection(box(0, 0, 10, 10)).area / size.prod(1).sum()
    assert legality_score(nl) == pytest.approx(ref, rel=1e-10)
    pair = sum(polys[i].intersection(polys[j]).area for i in range(v) for j in range(i + 1, v))
    assert total_overlap(nl) == pytest.approx(pair, rel=1e-9)
    assert union_area(pos - size / 2, pos + size / 2) == pytest.approx(unary_union(polys).area, rel=1e-10)


def test_evaluate_keys(tiny_aux):
    m = evaluate_placement(read_bookshelf(tiny_aux))
    assert set(m) == {"hpwl", "macro_hpwl", "legality", "overlap"}


def test_overlap_energy_gradient_matches_finite_differences():
    g = torch.Generator().manual_seed(0)
    pos = (torch.rand(7, 2, generator=g, dtype=torch.float64) - 0.5) * 1.6
    size = torch.rand(7, 2, generator=g, dtype=torch.float64) * 0.6 + 0.1
    pos.requires_grad_(True)
    e = box_overlap_energy(pos, size, sharpness=15.0)
    (grad,) = torch.autograd.grad(e, pos)
    h = 1e-6
    fd = torch.zeros_like(pos)
    with torch.no_grad():
        for i in range(7):
            for k in range(2):
                p1, p2 = pos.detach().clone(), pos.detach().clone()
                p1[i, k] += h
                p2[i, k] -= h
                fd[i, k] = (box_overlap_energy(p1, size, sharpness=15.0) - box_overlap_energy(p2, size, sharpness=15.0)) / (2 * h)
    torch.testing.assert_close(grad, fd, atol=1e-6, rtol=1e-5)


def test_bad_positions_shape(tiny_aux):
    nl = read_bookshelf(tiny_aux)
    with pytest.raises(ValueError, match="pos must be"):
        hpwl(nl, np.zeros((3, 2)))
