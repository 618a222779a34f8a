"""Old (MMSFM's own bridge targets, loss and integrator, kept in ``_reference_mmsfm.py``) vs new (the
engine's ``sf2m_loss`` + ``BrownianBridge``; torchdiffeq's fixed-step solvers; the documented
Euler–Maruyama loop): the same loss on the same batch, times and noise, and the same trajectories from
the same start and generator, to float tolerance."""

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from scigen.singlecell.mmsfm.integrate import integrate
from scigen.singlecell.mmsfm.model import DriftScore
from scigen.singlecell.mmsfm.objective import couple_windows, mmsfm_loss, stratified_times

_spec = importlib.util.spec_from_file_location("_reference_mmsfm", Path(__file__).with_name("_reference_mmsfm.py"))
old = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = old  # dataclasses look their module up in sys.modules
_spec.loader.exec_module(old)

D = 3


def _batch(b=48, seed=0):
    g = torch.Generator().manual_seed(seed)
    marginals = [torch.randn(b, D, generator=g) + 2.0 * m for m in range(4)]
    times = torch.tensor([0.0, 0.2, 0.55, 1.0])
    return couple_windows(marginals, times, 2)  # two windows of three marginals, row-aligned exact OT


@pytest.mark.parametrize("spline", ["pchip", "cubic", "linear"])
@pytest.mark.parametrize(("sigma", "bridge"), [(0.15, "brownian"), (0.4, "constant"), (0.0, "brownian")])
@pytest.mark.parametrize("stratified", [True, False])
def test_loss_equals_the_old_bridge_targets_and_loss(spline, sigma, bridge, stratified):
    traj, knots = _batch()
    torch.manual_seed(1)
    net = DriftScore(D, width=32, depth=1, score=True)
    eps = torch.randn(traj[:, 0].shape, generator=torch.Generator().manual_seed(2))
    t_old = old.stratified_times(knots, stratified=stratified, generator=torch.Generator().manual_seed(3))
    t_new = stratified_times(knots, stratified=stratified, generator=torch.Generator().manual_seed(3))
    ref = old.mmsfm_loss(net.drift, net.score, old.bridge_targets(traj, knots, t_old, sigma=sigma, spline=spline,
                                                                  bridge=bridge, noise=eps))
    new = mmsfm_loss(net.drift, net.score, traj, knots, t_new, sigma=sigma, spline=spline, bridge=bridge, noise=eps)
    for key in ("flow", "score", "loss"):
        torch.testing.assert_close(new[key], ref[key], rtol=1e-5, atol=1e-6)
    assert float(ref["flow"].detach()) > 0
    assert (float(ref["score"].detach()) > 0) == (sigma > 0 and bridge == "brownian")


def test_loss_gradients_equal_the_old_ones():
    traj, knots = _batch(seed=4)
    torch.manual_seed(5)
    net = DriftScore(D, width=32, depth=1)
    eps = torch.randn(traj[:, 0].shape, generator=torch.Generator().manual_seed(6))
    t = stratified_times(knots, generator=torch.Generator().manual_seed(7))
    grads = []
    for fn in (lambda: old.mmsfm_loss(net.drift, net.score, old.bridge_targets(traj, knots, t, sigma=0.15, noise=eps)),
               lambda: mmsfm_loss(net.drift, net.score, traj, knots, t, sigma=0.15, noise=eps)):
        net.zero_grad()
        fn()["loss"].backward()
        grads.append(torch.cat([p.grad.flatten() for p in net.parameters()]))
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize(("new_method", "old_method", "tol"),
                         [("euler", "euler", 0.0), ("dopri5", "dopri5", 0.0), ("rk4", "rk4", 1e-6), ("rk4_38", "rk4", 2e-6),
                          ("euler_maruyama", "sde", 0.0)])
def test_trajectories_equal_the_old_integrator(new_method, old_method, tol):
    torch.manual_seed(8)
    net = DriftScore(D, width=32, depth=2)
    x0 = torch.randn(40, D, generator=torch.Generator().manual_seed(9))
    times = torch.tensor([0.0, 1 / 3, 0.5, 1.0, 1.25], dtype=torch.float64)  # 0 = the start; 1.25 beyond the last
    kw = {"score": net.score, "diffusion": 0.15}
    ref = old.integrate(net.drift, x0, 0.0, times, method=old_method, step=0.01,
                        generator=torch.Generator().manual_seed(10), **kw)
    new = integrate(net.drift, x0, 0.0, times, method=new_method, steps=100,
                    generator=torch.Generator().manual_seed(10), **kw)
    assert new.shape == ref.shape == (5, 40, D)
    torch.testing.assert_close(new, ref, rtol=0, atol=tol)
    torch.testing.assert_close(new[0], x0, rtol=0, atol=0)


def test_rk4_38_gives_what_rk4_gave_before_issue_32():
    """MMSFM's ``rk4`` was torchdiffeq's fixed-grid ``rk4`` (the 3/8 rule); it is now ``rk4_38`` through the
    engine's tableau, with the same states (float64: to rounding), and ``rk4`` is classical RK4 everywhere."""
    from torchdiffeq import odeint

    from scigen.singlecell.mmsfm.integrate import fixed_grid

    torch.manual_seed(8)
    net = DriftScore(D, width=32, depth=2).double()
    x0 = torch.randn(40, D, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    times = torch.tensor([1 / 3, 0.5, 1.0, 1.25], dtype=torch.float64)
    knots = torch.cat([torch.zeros(1, dtype=torch.float64), times])
    grid = fixed_grid(knots, 1.0 / 20)
    before = odeint(lambda t, x: net.drift(x, t.expand(x.shape[0])), x0, knots, method="rk4",
                    options={"grid_constructor": lambda *_: grid})[1:]
    now = integrate(net.drift, x0, 0.0, times, method="rk4_38", steps=20)
    torch.testing.assert_close(now, before, rtol=0, atol=1e-12)
    classical = integrate(net.drift, x0, 0.0, times, method="rk4", steps=20)
    assert (classical - before).abs().max() > 1e-12
