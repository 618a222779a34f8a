"""Configuration of UniGEM (Feng et al., ICLR 2025) and its EDM baseline (Hoogeboom et al., ICML 2022).

Defaults are the paper's QM9 settings (README command of ``fengshikun/UniGEM``): 9 blocks, width
256, T = 1000, polynomial_2 schedule with precision 1e-5, nucleation time t_n = 10, AdamW lr 1e-4,
batch 64, EMA 0.9999, and EDM's ancestral sampler over all T steps (``method="ddpm"``).
Presets: ``UniGEMConfig.preset("tiny" | "small" | "paper")``.

Ours, not the paper's: ``properties`` may list several targets (one output each, the L1 term averaged
over them; the paper trains one model per property, i.e. a one-element list: ``preset("paper")`` has the
README command's ``("lumo",)``; every setting and its source: ``paper_preset.json`` beside this file); the eps error is a
per-molecule mean over its atoms (EDM divides a padded sum by ``3·N_max``); gradient clipping is the
engine's fixed-norm clip instead of EDM's adaptive queue.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import pydantic

from scigen.core.system import SystemConfig, TrainingOptions, training_defaults
from scigen.molecules.data.qm9 import QM9_PROPERTIES
from scigen.molecules.elements import QM9_ATOMS

__all__ = ["UniGEMConfig", "EDMConfig", "DEFAULT_PROPERTIES", "METHODS"]

DEFAULT_PROPERTIES = ("alpha", "gap", "homo", "lumo", "mu", "Cv")

#: the engine's solvers UniGEM / EDM sample with; ``ddpm`` (the paper's) and ``ddim`` on the integer grid
METHODS = ("ddpm", "ddim", "dpmpp_2m", "unipc", "heun", "euler", "rk4", "rk4_38", "euler_maruyama")

#: EDM trains QM9 for 3,000 epochs of 100,000 molecules at batch 64
_PAPER_STEPS = 3000 * -(-100_000 // 64)


class UniGEMConfig(SystemConfig):
    """UniGEM: coordinates diffused, atom types and properties read from heads at t ≤ t_n."""

    mode: Literal["unigem", "edm"] = "unigem"
    hidden: int = pydantic.Field(256, gt=0)
    n_layers: int = pydantic.Field(9, ge=2)
    T: int = pydantic.Field(1000, ge=2)
    nucleation_t: int = pydantic.Field(10, ge=0)
    noise_precision: float = pydantic.Field(1e-5, gt=0, lt=0.5)
    properties: tuple[str, ...] = DEFAULT_PROPERTIES
    atom_vocab: tuple[int, ...] = QM9_ATOMS
    max_atoms: int = pydantic.Field(29, gt=0)
    # the engine's names; ddpm/ddim run on the integer grid k/T (all T steps unless ``steps``), the
    # others on a uniform grid of ``steps`` (default 50), all on the zero-CoM subspace
    method: Literal["ddpm", "ddim", "dpmpp_2m", "unipc", "heun", "euler", "rk4", "rk4_38", "euler_maruyama"] = "ddpm"
    steps: int | None = pydantic.Field(None, ge=1)
    train: TrainingOptions = training_defaults(max_steps=2000, batch_size=64, lr=1e-4, weight_decay=1e-12,
                                               ema_decay=0.9999, grad_clip=1.0)

    #: sampling presets (SystemConfig.sampling, issue 36): the fields only sampling reads
    SAMPLING_FIELDS: ClassVar[tuple[str, ...]] = ("method", "steps")
    #: ``sampling("fast")``: EDM's ancestral ddpm on a 50-step subset of the T = 1000 grid (51 calls against 1001),
    #: atom stability within seed noise over seeds 3-5 (benchmarks/core/results/system_samplers_fast.md)
    SAMPLERS: ClassVar[dict[str, Any]] = {"fast": {"method": "ddpm", "steps": 50}}
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # about a minute on one CPU core (the demo's model); 30 DPM-Solver++ steps instead of 1000 ancestral
        "tiny": {"hidden": 32, "n_layers": 3, "method": "dpmpp_2m", "steps": 30,
                 "train": {"max_steps": 300, "batch_size": 32, "lr": 3e-3, "ema_decay": 0.99}},
        "small": {"hidden": 64, "n_layers": 4, "method": "dpmpp_2m", "steps": 50,
                  "train": {"max_steps": 5000, "batch_size": 64, "lr": 1e-3, "ema_decay": 0.999}},
        # the README command: one model per property (--target_property lumo), 3,000 epochs
        "paper": {"properties": ("lumo",), "train": {"max_steps": _PAPER_STEPS}},
    }

    @pydantic.field_validator("properties")
    @classmethod
    def _known(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        bad = [p for p in v if p not in QM9_PROPERTIES]
        if bad:
            raise ValueError(f"unknown properties {bad}; available: {list(QM9_PROPERTIES)}")
        return tuple(v)

    @pydantic.model_validator(mode="after")
    def _consistent(self):
        if self.nucleation_t >= self.T:
            raise ValueError(f"nucleation_t ({self.nucleation_t}) must be < T ({self.T})")
        if self.train.batch_size % 2:
            raise ValueError(f"train.batch_size must be even (half of each batch has t <= t_n), "
                             f"got {self.train.batch_size}")
        return self


class EDMConfig(UniGEMConfig):
    """EDM: atom types (one-hot/4 and Z/10) diffused jointly with the coordinates; no heads."""

    mode: Literal["unigem", "edm"] = "edm"
    properties: tuple[str, ...] = ()

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        **UniGEMConfig.PRESETS, "paper": {"train": {"max_steps": _PAPER_STEPS}},  # EDM has no property head
    }
    #: ``sampling("fast")``: Heun's probability-flow ODE with 25 steps (51 calls against 1001): atom stability within
    #: seed noise over seeds 3-5, but a noisy match (0.225 ± 0.033 against 0.258 ± 0.009; README, "Fast sampling")
    SAMPLERS: ClassVar[dict[str, Any]] = {"fast": {"method": "heun", "steps": 25}}
