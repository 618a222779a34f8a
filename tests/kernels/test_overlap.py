"""box_overlap_energy / total_overlap_area: reference against brute force, shapely and limits."""

import math

import numpy as np
import pytest
import torch

from scigen.kernels.overlap import box_overlap_energy, total_overlap_area
from scigen.kernels.reference import overlap as ref

shapely = pytest.importorskip("shapely")
from shapely.geometry import box as sbox  # noqa: E402


def _boxes(v, seed, lo=0.05, hi=0.6, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    pos = (torch.rand(v, 2, generator=g, dtype=dtype) * 2 - 1) * 1.1  # some outside the canvas
    size = torch.rand(v, 2, generator=g, dtype=dtype) * (hi - lo) + lo
    mask = torch.rand(v, generator=g) > 0.25
    return pos, size, mask


def _sp(z, k):
    return np.logaddexp(0.0, k * z) / k


def _energy_numpy(pos, size, mask, k, canvas):
    p, s, m = pos.numpy(), size.numpy(), mask.numpy()
    e = 0.0
    v = len(p)
    for i in range(v):
        for j in range(i + 1, v):
            if m[i] and m[j]:
                ox = (s[i, 0] + s[j, 0]) / 2 - abs(p[i, 0] - p[j, 0])
                oy = (s[i, 1] + s[j, 1]) / 2 - abs(p[i, 1] - p[j, 1])
                e += _sp(ox, k) * _sp(oy, k)
    x_lo, x_hi, y_lo, y_hi = canvas
    for i in range(v):
        if m[i]:
            (x, y), (w, h) = p[i], s[i]
            e += h * (_sp(x + w / 2 - x_hi, k) + _sp(x_lo - x + w / 2, k))
            e += w * (_sp(y + h / 2 - y_hi, k) + _sp(y_lo - y + h / 2, k))
    return e


def _area_shapely(pos, size, mask):
    bs = [
        sbox(x - w / 2, y - h / 2, x + w / 2, y + h / 2) if a else None
        for (x, y), (w, h), a in zip(pos.tolist(), size.tolist(), mask.tolist(), strict=True)
    ]
    return sum(
        bs[i].intersection(bs[j]).area
        for i in range(len(bs))
        for j in range(i + 1, len(bs))
        if bs[i] is not None and bs[j] is not None
    )


@pytest.mark.parametrize("v,k,canvas", [(11, 7.0, (-1, 1, -1, 1)), (23, 30.0, (-0.8, 1.2, -1.0, 0.5))])
def test_energy_matches_double_loop(v, k, canvas):
    pos, size, mask = _boxes(v, seed=v)
    expected = _energy_numpy(pos, size, mask, k, canvas)
    got_op = box_overlap_energy(pos, size, mask, k, canvas)
    got_tiled = ref.overlap_energy_reference(pos, size, mask, k, canvas, tile_elements=4 * v)
    assert got_op.item() == pytest.approx(expected, rel=1e-10)
    assert got_tiled.item() == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("v,seed", [(1, 0), (15, 1), (40, 2)])
def test_total_overlap_area_matches_shapely(v, seed):
    pos, size, mask = _boxes(v, seed, hi=0.9)
    size[0] = torch.tensor([1.5, 0.05], dtype=size.dtype)  # long thin box: nested along x in some pairs
    expected = _area_shapely(pos, size, mask)
    assert total_overlap_area(pos, size, mask).item() == pytest.approx(expected, rel=1e-10, abs=1e-14)
    assert ref.total_overlap_area_reference(pos, size, mask, tile_elements=3 * v).item() == pytest.approx(expected, rel=1e-10, abs=1e-14)


def test_area_nested_box_is_the_small_box():
    pos = torch.tensor([[0.0, 0.0], [0.1, -0.05]], dtype=torch.float64)
    size = torch.tensor([[1.0, 1.0], [0.2, 0.3]], dtype=torch.float64)
    assert total_overlap_area(pos, size).item() == pytest.approx(0.06)


def test_energy_tends_to_exact_overlap_area():
    # equal sizes: no box is nested in another along an axis, so the k -> inf limit is the exact area
    g = torch.Generator().manual_seed(3)
    v = 30
    pos = (torch.rand(v, 2, generator=g, dtype=torch.float64) * 2 - 1) * 0.6
    size = torch.full((v, 2), 0.3, dtype=torch.float64)
    mask = torch.ones(v, dtype=torch.bool)
    exact = _area_shapely(pos, size, mask)
    assert exact > 0.1
    errs = [abs(box_overlap_energy(pos, size, mask, k).item() - exact) for k in (10.0, 100.0, 1e3, 1e4)]
    assert errs == sorted(errs, reverse=True)
    # sp_k - relu <= log2/k per factor; number of pairs * bound is a (loose) certificate
    assert errs[-1] < v * v * 2 * math.log(2) / 1e4
    assert errs[-1] < 1e-3 * exact


def test_energy_zero_for_legal_placement_in_the_limit():
    pos = torch.tensor([[-0.5, -0.5], [0.5, 0.5], [0.5, -0.5]], dtype=torch.float64)
    size = torch.full((3, 2), 0.8, dtype=torch.float64)
    assert box_overlap_energy(pos, size, sharpness=1e4).item() < 1e-6
    # moving box 0 half out of the canvas: boundary term -> protrusion (0.5) * height (0.8)
    pos[0, 0] = -1.1
    assert box_overlap_energy(pos, size, sharpness=1e5).item() == pytest.approx(0.5 * 0.8, abs=1e-4)


def test_masked_objects_are_ignored():
    pos, size, mask = _boxes(12, seed=5)
    full = box_overlap_energy(pos[mask], size[mask], None, 9.0)
    assert box_overlap_energy(pos, size, mask, 9.0).item() == pytest.approx(full.item(), rel=1e-12)
    assert total_overlap_area(pos, size, mask).item() == pytest.approx(
        total_overlap_area(pos[mask], size[mask]).item(), rel=1e-12, abs=1e-15
    )


def test_gradcheck_float64():
    pos, size, mask = _boxes(9, seed=7)
    pos.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda p: box_overlap_energy(p, size, mask, 4.0), (pos,))


def test_grad_matches_autograd_of_double_loop():
    pos, size, mask = _boxes(10, seed=8)
    p = pos.clone().requires_grad_(True)
    box_overlap_energy(p, size, mask, 12.0).backward()
    p2 = pos.clone().requires_grad_(True)
    e = torch.zeros((), dtype=torch.float64)
    for i in range(10):
        for j in range(i + 1, 10):
            if mask[i] and mask[j]:
                o = (size[i] + size[j]) / 2 - (p2[i] - p2[j]).abs()
                e = e + ref.smooth_relu(o, 12.0).prod()
    b, _ = ref.boundary_energy_and_grad(p2, size, mask, 12.0, (-1, 1, -1, 1))
    (e + b).backward()
    torch.testing.assert_close(p.grad, p2.grad)


def test_empty_and_single():
    z = torch.zeros(0, 2)
    assert box_overlap_energy(z, z).item() == 0.0
    assert total_overlap_area(z, z).item() == 0.0
    one = torch.tensor([[0.0, 0.0]])
    assert total_overlap_area(one, torch.ones(1, 2)).item() == 0.0
    assert box_overlap_energy(one, torch.ones(1, 2), sharpness=1e4).item() < 1e-3


@pytest.mark.parametrize(
    "args,exc,match",
    [
        ((torch.zeros(3, 3), torch.zeros(3, 3)), ValueError, "pos"),
        ((torch.zeros(3, 2), torch.zeros(4, 2)), ValueError, "size"),
        ((torch.zeros(3, 2, dtype=torch.long), torch.zeros(3, 2)), TypeError, "pos"),
        ((torch.zeros(3, 2), torch.zeros(3, 2), torch.ones(3)), TypeError, "mask"),
        ((torch.zeros(3, 2), torch.zeros(3, 2), torch.ones(2, dtype=torch.bool)), ValueError, "mask"),
    ],
)
def test_validation(args, exc, match):
    with pytest.raises(exc, match=match):
        box_overlap_energy(*args)
    with pytest.raises(exc, match=match):
        total_overlap_area(*args)


def test_validation_scalars():
    with pytest.raises(ValueError, match="sharpness"):
        box_overlap_energy(torch.zeros(2, 2), torch.ones(2, 2), sharpness=0.0)
    with pytest.raises(ValueError, match="canvas"):
        box_overlap_energy(torch.zeros(2, 2), torch.ones(2, 2), canvas=(1, -1, -1, 1))


@pytest.mark.slow
def test_torch_compile_fullgraph_cpu():
    from scigen.kernels.wirelength import net_hpwl

    pos, size, mask = _boxes(13, seed=9)
    ptr = torch.tensor([0, 3, 7])
    off = torch.zeros(7, 2, dtype=pos.dtype)
    obj = torch.tensor([0, 1, 2, 3, 4, 5, 6])

    def f(p):
        return box_overlap_energy(p, size, mask, 8.0) + net_hpwl(p, off, obj, ptr).sum()

    p1 = pos.clone().requires_grad_(True)
    p2 = pos.clone().requires_grad_(True)
    torch.compile(f, fullgraph=True)(p1).backward()
    f(p2).backward()
    torch.testing.assert_close(p1.grad, p2.grad)
