"""What System carries for every system: training options -> fit, history, presets, seeds, devices."""

from __future__ import annotations

from typing import Any, ClassVar

import pydantic
import pytest
import torch
from torch import nn

from scigen.core.errors import CheckpointError, InvalidInputError, NotTrainedError, UnknownNameError
from scigen.core.system import System, SystemConfig, TrainingOptions, training_defaults
from scigen.core.system.training import FINAL_LOSS_WINDOW


class MeanConfig(SystemConfig):
    dim: int = pydantic.Field(2, gt=0)
    train: TrainingOptions = training_defaults(max_steps=30, batch_size=8, lr=0.1, grad_clip=None, optimizer="sgd")
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"tiny": {"dim": 1, "train": {"max_steps": 5}}}


class Mean(System):
    """Learns the data mean by SGD on (w - x)^2: loss curve known in closed form."""

    domain = "testing"
    name = "mean"
    Config = MeanConfig

    def build_network(self):
        net = nn.Linear(1, self.config.dim, bias=False)
        nn.init.zeros_(net.weight)
        return net

    def prepare_data(self, data, *, role):
        if not isinstance(data, torch.Tensor):
            raise InvalidInputError(f"{role} must be a tensor")
        return data.to(self.device)

    def training_loss(self, network, batch):
        return ((network.weight[:, 0] - batch) ** 2).sum(-1).mean()

    def fit_options(self):
        return {"logger": None}

    def sample(self, n_samples, *, seed=None):
        self.require_trained()
        return self.network.weight[:, 0].detach().expand(n_samples, -1) + torch.randn(
            n_samples, self.config.dim, generator=self.generator(seed), device=self.device)

    def evaluate(self, data):
        return {}


def test_options_map_onto_fit_and_never_write_into_the_config():
    m = Mean()
    data = torch.full((64, 2), 3.0)
    m.fit(data, max_steps=12, lr=0.05, progress=False)
    assert m.config.train.lr == 0.1 and m.config.train.max_steps == 30  # the override was per call
    # heavy-ball SGD (momentum 0.9) on 2 coordinates of (w - 3)²: d = w - 3, v <- 0.9 v + 2 d, d <- d - lr v
    d, v, expected = -3.0, 0.0, []
    for _ in range(12):
        expected.append(2 * d**2)
        v = 0.9 * v + 2 * d
        d = d - 0.05 * v
    assert m.history.steps == 12
    assert m.history.losses == pytest.approx(expected, rel=1e-5)
    assert m.history.final_loss == pytest.approx(sum(expected[-FINAL_LOSS_WINDOW:]) / len(expected), rel=1e-5)
    m.fit(data, progress=False)  # the configured 30 steps, appended
    assert m.history.steps == 42 and m.history.fits == 2 and m.is_trained


def test_bad_options_are_refused_not_replaced():
    m = Mean()
    data = torch.zeros(8, 2)
    with pytest.raises(InvalidInputError, match="max_steps"):
        m.fit(data, max_steps=0)
    with pytest.raises(InvalidInputError, match="lr"):
        m.fit(data, lr=float("nan"))
    with pytest.raises(InvalidInputError, match=r"unknown training option\(s\) \['learning_rate'\]"):
        m.fit(data, learning_rate=1.0)
    with pytest.raises(InvalidInputError, match="batch_size"):
        Mean(train={"batch_size": 0})
    assert not m.is_trained


def test_partial_train_section_keeps_the_systems_defaults():
    m = Mean(train={"lr": 0.01})
    assert m.config.train.lr == 0.01 and m.config.train.batch_size == 8 and m.config.train.max_steps == 30


def test_history_round_trips_and_untrained_sampling_is_one_clear_error(tmp_path):
    m = Mean()
    with pytest.raises(NotTrainedError, match=r"Mean \(testing/mean\) is untrained: call fit"):
        m.sample(3)
    m.fit(torch.full((16, 2), 1.0), max_steps=7, progress=False)
    m.save(tmp_path / "run")
    again = Mean.load(tmp_path / "run", device="cpu")
    assert again.history.losses == m.history.losses and again.history.final_loss == m.history.final_loss
    assert again.is_trained and again.device == torch.device("cpu")
    assert torch.equal(again.sample(4, seed=3), m.sample(4, seed=3))


def test_seed_rule_and_presets():
    m = Mean().fit(torch.zeros(8, 2), max_steps=1, progress=False)
    assert torch.equal(m.sample(5), m.sample(5, seed=0))  # None means config.train.seed (0)
    assert not torch.equal(m.sample(5, seed=1), m.sample(5, seed=2))
    tiny = MeanConfig.preset("tiny", train={"lr": 0.2})
    assert (tiny.dim, tiny.train.max_steps, tiny.train.lr, tiny.train.batch_size) == (1, 5, 0.2, 8)
    with pytest.raises(UnknownNameError, match="no preset 'huge'; valid presets: tiny"):
        MeanConfig.preset("huge")


def test_lightning_logger_objects_are_accepted(tmp_path):
    from lightning.pytorch.loggers import CSVLogger

    logger = CSVLogger(save_dir=str(tmp_path), name="mine", version="v")
    m = Mean()
    m.fit(torch.zeros(8, 2), max_steps=4, progress=False, logger=logger)
    assert any(p.name == "metrics.csv" for p in (tmp_path / "mine" / "v").iterdir())


def test_a_reused_checkpoint_folder_never_returns_another_models_weights(tmp_path):
    ck = tmp_path / "ck"
    first = Mean().fit(torch.full((16, 2), 1.0), max_steps=5, progress=False, checkpoint_dir=str(ck))
    with pytest.raises(CheckpointError, match="already holds a checkpoint.*resume=True"):
        Mean().fit(torch.full((16, 2), 1.0), max_steps=5, progress=False, checkpoint_dir=str(ck))
    shifted = torch.full((160, 2), 51.0)
    with pytest.raises(CheckpointError, match="holds a checkpoint of another run \\(training data differ"):
        Mean().fit(shifted, max_steps=8, progress=False, checkpoint_dir=str(ck), resume=True)
    with pytest.raises(CheckpointError, match="config differ"):
        Mean(train={"seed": 7}).fit(torch.full((16, 2), 1.0), max_steps=8, progress=False,
                                    checkpoint_dir=str(ck), resume=True)
    cont = Mean().fit(torch.full((16, 2), 1.0), max_steps=8, progress=False, checkpoint_dir=str(ck), resume=True)
    straight = Mean().fit(torch.full((16, 2), 1.0), max_steps=8, progress=False)
    assert torch.equal(cont.network.weight, straight.network.weight)
    assert cont.history.losses[:5] == first.history.losses


@pytest.mark.parametrize("kind", ["truncated", "png", "pickle", "tensor"])
def test_bad_resume_checkpoints_are_refused_and_execute_nothing(tmp_path, kind):
    from scigen.core.train import fit

    ck = tmp_path / "ck"
    net = nn.Linear(1, 1)
    fit(net, lambda m, b: (m(b) ** 2).mean(), torch.randn(8, 1), max_steps=2, checkpoint_dir=ck,
        progress=False, logger=None)
    last = ck / "last.ckpt"
    marker = tmp_path / "pwned"
    if kind == "truncated":
        last.write_bytes(last.read_bytes()[:100])
    elif kind == "png":
        last.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    elif kind == "pickle":
        class Evil:
            def __reduce__(self):
                return (open, (str(marker), "w"))

        import pickle

        last.write_bytes(pickle.dumps({"state_dict": Evil(), "global_step": 1}))
    else:
        torch.save({"w": torch.ones(2)}, last)
    with pytest.raises(CheckpointError, match=f"cannot resume from {last}"):
        fit(net, lambda m, b: (m(b) ** 2).mean(), torch.randn(8, 1), max_steps=4, checkpoint_dir=ck,
            progress=False, logger=None)
    assert not marker.exists()


def test_a_callable_optimizer_is_passed_through_for_one_call():
    """``fit(optimizer=callable)`` uses the callable (plain SGD here: d <- (1 - 2 lr) d in closed form)."""
    m = Mean()
    data = torch.full((64, 2), 3.0)
    m.fit(data, max_steps=6, optimizer=lambda params: torch.optim.SGD(params, lr=0.05), progress=False)
    expected = [2 * (3.0 * 0.9**k) ** 2 for k in range(6)]  # no momentum: differs from the configured "sgd"
    assert m.history.losses == pytest.approx(expected, rel=1e-5)
    assert m.config.train.optimizer == "sgd"
    with pytest.raises(InvalidInputError, match="optimizer"):
        m.fit(data, max_steps=1, optimizer="lbfgs")


def test_resuming_the_same_run_in_the_same_object_does_not_count_its_steps_twice(tmp_path):
    ck = str(tmp_path / "ck")
    data = torch.full((16, 2), 1.0)
    m = Mean().fit(data, max_steps=5, progress=False, checkpoint_dir=ck)
    first = list(m.history.losses)
    m.fit(data, max_steps=8, progress=False, checkpoint_dir=ck, resume=True)
    straight = Mean().fit(data, max_steps=8, progress=False)
    assert m.history.steps == 8 and m.history.losses[:5] == first
    assert m.history.losses == pytest.approx(straight.history.losses, rel=1e-6)


def test_device_of_a_parameter_free_network_is_where_its_buffers_are():
    """An EM-fitted mixture (SBGM's CSGMM) keeps its state in buffers: after ``to(device)`` the system's
    ``device`` (and so its generator) must follow them, not fall back to the CPU (the first GPU run drew
    with a CPU generator on cuda weights). The meta device stands in for a GPU."""

    class Buffers(Mean):
        def build_network(self):
            net = nn.Module()
            net.register_buffer("w", torch.zeros(self.config.dim))
            return net

    m = Buffers()
    assert m.device == torch.device("cpu")
    m.network.to("meta")
    assert m.device == torch.device("meta")
    assert Mean().device == torch.device("cpu")
