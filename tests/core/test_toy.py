"""The built-in toy system: its data match their definitions; both objectives learn."""

from __future__ import annotations

import math

import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.core.metrics import w2
from scigen.core.toy import DATASETS, toy_data
from scigen.core.toy.system import ToySystem


def test_eight_gaussians_modes_and_spread():
    x = toy_data("eight_gaussians", 8000, seed=0)
    angle = torch.atan2(x[:, 1], x[:, 0])
    k = torch.round(angle / (2 * math.pi / 8)) % 8
    centers = 2.0 * torch.stack([torch.cos(k * 2 * math.pi / 8), torch.sin(k * 2 * math.pi / 8)], 1)
    resid = x - centers
    assert abs(float(resid.std()) - 0.25) < 0.01  # isotropic std 0.25 around the 8 centres
    counts = torch.bincount(k.long(), minlength=8).float() / 8000
    assert float((counts - 0.125).abs().max()) < 0.02  # equal weights


def test_checkerboard_is_uniform_on_black_cells():
    x = toy_data("checkerboard", 20000, seed=1)
    assert float(x.min()) >= -2 and float(x.max()) <= 2
    col, row = torch.floor(x[:, 0] + 2).long(), torch.floor(x[:, 1] + 2).long()
    assert bool(((col + row) % 2 == 0).all())  # only one colour of the 4 x 4 board
    cells = torch.bincount(row * 4 + col, minlength=16).float()
    occupied = cells[cells > 0] / 20000
    assert occupied.numel() == 8 and float((occupied - 1 / 8).abs().max()) < 0.015


def test_moons_and_mixture_shapes_and_seeding():
    assert toy_data("moons", 10, seed=3).shape == (10, 2)
    a, b = toy_data("gaussian_mixture_32d", 50, seed=4), toy_data("gaussian_mixture_32d", 50, seed=4)
    assert a.shape == (50, 32) and torch.equal(a, b)
    assert not torch.equal(a, toy_data("gaussian_mixture_32d", 50, seed=5))
    assert set(DATASETS) == {"eight_gaussians", "moons", "checkerboard", "gaussian_mixture_32d"}


@pytest.mark.parametrize(("objective", "dataset"), [("diffusion", "moons"), ("flow_matching", "checkerboard")])
def test_training_beats_the_untrained_model(objective, dataset):
    model = ToySystem(objective=objective, dataset=dataset, width=64, depth=2, steps=10,
                      train={"max_steps": 600, "lr": 3e-3})
    train, test = toy_data(dataset, 4000, seed=0), toy_data(dataset, 500, seed=1)
    before = float(w2(model._generate(500), test))
    after = model.fit(train, progress=False, logger=None).evaluate(test)["W2"]
    assert after < 0.6 * before, (before, after)


def test_bad_inputs_are_named():
    with pytest.raises(InvalidInputError, match="unknown toy dataset 'spiral'"):
        ToySystem(dataset="spiral")
    with pytest.raises(InvalidInputError, match=r"data must have shape \[n>0, 2\]"):
        ToySystem().fit(torch.zeros(10, 3), max_steps=1)
    with pytest.raises(InvalidInputError, match="NaN or inf"):
        ToySystem().fit(torch.full((10, 2), float("nan")), max_steps=1)
    with pytest.raises(InvalidInputError, match="n_samples must be a positive"):
        ToySystem().sample(0)
    with pytest.raises(InvalidInputError, match="untrained"):
        ToySystem().sample(10)
    with pytest.raises(InvalidInputError, match="unknown sampler method 'rk5'"):
        ToySystem(method="rk5")


def test_sample_always_returns_points_and_trajectory_returns_the_states():
    model = ToySystem(ToySystem.Config.preset("tiny")).fit(toy_data("eight_gaussians", 256, seed=0), max_steps=3,
                                                           progress=False, logger=None)
    x = model.sample(3, steps=4, seed=1)
    end, states = model.trajectory(3, steps=4, seed=1)
    assert isinstance(x, torch.Tensor) and x.shape == (3, 2) and states.shape == (5, 3, 2)  # steps + 1 states
    torch.testing.assert_close(end, x)
    torch.testing.assert_close(states[-1], x)  # the trajectory ends where sample ends
    with pytest.warns(DeprecationWarning, match=r"return_trajectory=True.*use ToySystem.trajectory"):
        old = model.sample(3, steps=4, seed=1, return_trajectory=True)
    torch.testing.assert_close(old[1], states)
