"""The engine's solver table and its one name check (issue 32, item 6): ``METHODS[name].nfe_per_step``,
``nfe``, ``check_method``; ``rk4`` is classical RK4 and the 3/8 rule is ``rk4_38`` (torchdiffeq's "rk4")."""

from __future__ import annotations

import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.core.paths import LinearPath
from scigen.core.samplers import DENOISER_METHODS, METHODS, check_method, nfe, sample, time_grid
from scigen.core.samplers.ode import rk_step


def test_cost_table_matches_the_stage_counts_of_each_solver():
    # Butcher stages: euler 1, heun 2, both RK4s 4; every multistep / ancestral / SDE solver calls the model once
    want = {"euler": 1, "heun": 2, "rk4": 4, "rk4_38": 4, "dopri5": None, "ddpm": 1, "ddim": 1, "dpmpp_2m": 1,
            "unipc": 1, "euler_maruyama": 1, "consistency": 1}  # dopri5: adaptive
    assert {m: s.nfe_per_step for m, s in METHODS.items()} == want
    assert set(DENOISER_METHODS) == set(METHODS) - {"consistency", "dopri5"}


@pytest.mark.parametrize("method", ["euler", "heun", "rk4", "rk4_38", "dpmpp_2m", "ddim"])
def test_nfe_counts_the_model_calls_of_a_run(method):
    calls = []

    def model(x, t):
        calls.append(1)
        return -x  # any x0 prediction

    path = LinearPath()
    sample(model, torch.randn(3, 2), time_grid(5, path=path), path=path, prediction="x0", method=method)
    assert len(calls) == nfe(method, 5)  # the grid ends at sigma = 0: RK's last step is first order
    with pytest.raises(ValueError, match="adaptive"):
        nfe("dopri5", 5)


def test_check_method_accepts_engine_names_and_names_the_valid_ones():
    assert check_method("heun") == "heun"
    assert check_method(None, allow_none=True) is None
    with pytest.raises(InvalidInputError, match=r"unknown sampler method 'map'; valid: euler, heun, rk4, rk4_38"):
        check_method("map")
    with pytest.raises(InvalidInputError, match="'consistency' \\(an engine solver this system cannot use\\)"):
        check_method("consistency")
    with pytest.raises(InvalidInputError, match=r"unknown flow sampler method 'ddpm' \(an engine .*\); valid: euler, heun$"):
        check_method("ddpm", ("euler", "heun"), what="flow sampler")
    with pytest.raises(ValueError, match="not engine solvers"):
        check_method("euler", ("euler", "dopri9"))
    with pytest.raises(InvalidInputError):
        check_method(None)


def test_rk4_38_is_torchdiffeqs_rk4_and_differs_from_classical_rk4():
    torchdiffeq = pytest.importorskip("torchdiffeq")

    def f(x, t):  # a nonlinear, time-dependent field
        return torch.sin(3 * x) * torch.cos(torch.as_tensor(t, dtype=x.dtype)) - 0.5 * x

    x0 = torch.linspace(-2, 2, 7, dtype=torch.float64)
    grid = torch.linspace(0.0, 1.5, 4, dtype=torch.float64)
    ref = torchdiffeq.odeint(lambda t, x: f(x, t), x0, grid, method="rk4",
                             options={"grid_constructor": lambda *_: grid})[-1]
    x = x0
    for a, b in zip(grid[:-1].tolist(), grid[1:].tolist(), strict=True):
        x = rk_step("rk4_38", f, x, a, b - a)
    torch.testing.assert_close(x, ref, rtol=0, atol=1e-13)
    x = x0
    for a, b in zip(grid[:-1].tolist(), grid[1:].tolist(), strict=True):
        x = rk_step("rk4", f, x, a, b - a)
    assert (x - ref).abs().max() > 1e-6  # the classical rule is a different method


def test_dopri5_reaches_the_closed_form_flow():
    """The adaptive solver on the probability-flow ODE of a Gaussian (closed-form solution, as in
    test_samplers.py): to its tolerance inside (0, 1), and through the final DDIM step into sigma = 0."""
    from scigen.core.paths import VPCosine
    from tests.core.test_samplers import exact_flow, exact_x0, prior_draw

    path = VPCosine()
    x = prior_draw(path, 0.999, 16, seed=3)
    grid = torch.tensor([0.999, 0.5, 0.05], dtype=torch.float64)
    traj = []
    out = sample(exact_x0(path), x, grid, path=path, prediction="x0", method="dopri5", rtol=1e-8, atol=1e-8,
                 callback=lambda i, t, xs, x0: traj.append(xs))
    torch.testing.assert_close(out, exact_flow(path, x, 0.999, 0.05), rtol=0, atol=1e-6)
    torch.testing.assert_close(traj[1], exact_flow(path, x, 0.999, 0.5), rtol=0, atol=1e-6)
    lin = LinearPath()
    x = prior_draw(lin, 1.0 - 1e-6, 16, seed=4)
    to_zero = torch.tensor([1.0 - 1e-6, 0.3, 1e-6, 0.0], dtype=torch.float64)  # DDIM's last step: O(1e-6)
    out = sample(exact_x0(lin), x, to_zero, path=lin, prediction="x0", method="dopri5", rtol=1e-8, atol=1e-8)
    torch.testing.assert_close(out, exact_flow(lin, x, 1.0 - 1e-6, 0.0), rtol=0, atol=1e-5)
    with pytest.raises(ValueError, match="shared time grid"):
        sample(exact_x0(lin), x, to_zero[:, None].expand(4, 16).contiguous(), path=lin, prediction="x0",
               method="dopri5")
