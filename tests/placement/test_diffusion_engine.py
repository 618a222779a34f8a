"""The placer on the engine's ``Diffusion`` binding equals its own former eps-MSE and guided DDPM sampler
(``_reference_diffusion.py``, the code before the move) on the same batch and the same noise."""

from __future__ import annotations

import pytest
import torch

from scigen.core.streams import SampleStreams
from scigen.placement import generate_netlist
from scigen.placement.diffusion.config import DiffusionPlacerConfig
from scigen.placement.diffusion.process import Circuit, guidance_transforms, placement_process
from scigen.placement.diffusion.system import DiffusionPlacer
from scigen.placement.synthetic import SynthConfig

from ._reference_diffusion import T_EPS, reference_loss, reference_sample

FAST = dict(copies=8, steps=12, inner_steps=2, legalize_steps=0, train={"lr": 2e-3, "ema_decay": None})


def _circuit_with_fixed(seed: int, objects: int = 10):
    nl = generate_netlist(seed, SynthConfig.for_size(objects))
    nl.terminal[:2] = True  # two ports of zero size and two fixed macros
    nl.fixed[:4] = True
    nl.size[:2] = 0.0
    return nl


@pytest.fixture(scope="module")
def trained():
    model = DiffusionPlacer(DiffusionPlacerConfig.preset("tiny", **FAST))
    model.fit(DiffusionPlacer.default_data(n=4, objects=10), max_steps=15, progress=False)
    return model


def test_loss_equals_the_former_eps_mse_on_the_same_draws(trained):
    nl = _circuit_with_fixed(3)
    circ = Circuit(nl)
    assert circ.clean[:4].all() and not circ.clean[4:].any()
    for seed in range(3):
        torch.manual_seed(seed)
        old = reference_loss(trained.network, circ.x0, circ.clean, circ.graph, copies=8)
        torch.manual_seed(seed)
        new = circ.loss(trained.process, trained.network, 8)
        torch.testing.assert_close(new, old, rtol=1e-6, atol=1e-7)
    torch.manual_seed(0)  # and the system's training loss on a batch of one circuit is the same number
    old = reference_loss(trained.network, circ.x0, circ.clean, circ.graph, copies=8)
    torch.manual_seed(0)
    torch.testing.assert_close(trained.training_loss(trained.network, [circ]), old, rtol=1e-6, atol=1e-7)


def test_loss_is_zero_for_the_exact_noise_predictor_and_ignores_held_clean_rows():
    """Closed form: a network returning the true noise ``(x_t - alpha x0) / sigma`` has loss 0; changing its
    output on ports/fixed rows never changes the loss (they are held clean and masked out)."""
    nl = _circuit_with_fixed(4)
    circ = Circuit(nl)
    process = placement_process(torch.nn.Identity())
    path = process.path

    class Oracle(torch.nn.Module):
        def __init__(self, bump: float):
            super().__init__()
            self.bump = bump

        def forward(self, x, t, graph):
            eps = (x - path.alpha(t)[:, None, None] * circ.x0) / path.sigma(t)[:, None, None]
            return eps + self.bump * circ.clean[None, :, None]

    for bump in (0.0, 100.0):
        assert float(circ.loss(process, Oracle(bump), 16)) < 1e-8


def _engine_sample(model, c, nl, n, steps, seed, times=None, method=None):
    circ = Circuit(nl)
    gen = torch.Generator().manual_seed(seed)
    if times is None:
        return circ.sample(model.process, guidance_transforms(c, circ, n), n, generator=gen, steps=steps,
                           method=method, progress=False)
    process = model.process  # the former float32 grid, given explicitly
    x1 = process.prior((n, nl.num_objects, 2), generator=gen, t=1.0)
    x = process.sample(x1, times=times, guidance=guidance_transforms(c, circ, n), generator=gen, progress=False,
                       graph=circ.graph, fixed=circ.clean[None, :, None].expand(n, -1, 2), known=circ.x0)
    return circ.potentials.pin(x.clamp(-2, 2))


@pytest.mark.parametrize("guided", [True, False])
def test_sampling_equals_the_former_sampler_from_the_same_noise(trained, guided):
    """Bit for bit on the former float32 time grid; within 1e-3 on the engine's float64 grid (the only
    difference: t rounded to float32 before, which guidance's Adam steps amplify to ~2.5e-4 here)."""
    nl = _circuit_with_fixed(5, 12)
    c = trained.config.model_copy(update={"guidance": guided})
    old = reference_sample(trained.network, c, nl, 3, 12, torch.Generator().manual_seed(7))
    same_grid = _engine_sample(trained, c, nl, 3, 12, 7, times=torch.linspace(1 - T_EPS, 0.0, 13))
    assert torch.equal(same_grid, old)
    new = _engine_sample(trained, c, nl, 3, 12, 7)
    torch.testing.assert_close(new, old, rtol=0, atol=1e-3)
    torch.testing.assert_close(new[:, :4], Circuit(nl).x0[None, :4].expand(3, -1, -1))  # fixed objects kept
    if guided:  # the system's own sampling (no legalisation) is Circuit.sample from placement i's stream (7, i)
        m = DiffusionPlacer(c)
        m.network, m.history = trained.network, trained.history
        x, _ = m.sample_positions(nl, 3, steps=12, legalize_steps=0, seed=7, progress=False)
        circ = Circuit(nl)
        for i in range(3):  # one placement at a time
            keyed = circ.sample(trained.process, guidance_transforms(c, circ, 1), 1, generator=SampleStreams(7, [i]),
                                steps=12, progress=False)
            torch.testing.assert_close(x[i:i + 1], keyed, rtol=0, atol=0)


def test_other_engine_methods_keep_fixed_objects(trained):
    nl = _circuit_with_fixed(6)
    for method in ("ddim", "dpmpp_2m", "heun"):
        x = _engine_sample(trained, trained.config, nl, 2, 6, 1, method=method)
        assert x.shape == (2, nl.num_objects, 2) and bool(torch.isfinite(x).all())
        torch.testing.assert_close(x[:, :4], Circuit(nl).x0[None, :4].expand(2, -1, -1))


def _tensor_devices(obj, prefix=""):
    out = {}
    for k, v in vars(obj).items():
        if isinstance(v, torch.Tensor):
            out[prefix + k] = v.device
        elif hasattr(v, "__dict__") and not isinstance(v, type) and not k.startswith("_"):
            out.update(_tensor_devices(v, f"{prefix}{k}."))
    return out


def test_a_batch_of_circuits_follows_the_network_to_its_device():
    """Training circuits are built on the CPU; Lightning moves the batch (a list of circuits) to the network's
    device through ``Circuit.to`` (the first GPU run failed with a CPU tensor in a cuda matmul). The meta
    device stands in for a GPU here: every tensor of the moved circuit must be on it."""
    from lightning.fabric.utilities.apply_func import move_data_to_device

    circ = Circuit(_circuit_with_fixed(3))
    (moved,) = move_data_to_device([circ], torch.device("meta"))
    devices = _tensor_devices(moved)
    assert len(devices) >= 10 and set(devices.values()) == {torch.device("meta")}, devices
    assert set(_tensor_devices(circ).values()) == {torch.device("cpu")}  # the original is left where it was
    assert circ.to("cpu") is circ
