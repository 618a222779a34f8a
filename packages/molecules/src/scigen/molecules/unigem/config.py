"""Configuration of UniGEM (Feng et al., ICLR 2025) and its EDM baseline (Hoogeboom et al., ICML 2022).

Defaults are the paper's QM9 settings (README command of ``fengshikun/UniGEM``): 9 blocks, width
256, T = 1000, polynomial_2 schedule with precision 1e-5, nucleation time t_n = 10, AdamW lr 1e-4,
batch 64, EMA 0.9999. Tiny CPU runs override ``hidden``/``n_layers``/``lr``/``ema_decay``.

Ours, not the paper's: ``properties`` may list several targets (one output each, the L1 term averaged
over them; the paper trains one model per property, i.e. a one-element list); the eps error is a
per-molecule mean over its atoms (EDM divides a padded sum by ``3·N_max``); gradient clipping is the
engine's fixed-norm clip instead of EDM's adaptive queue.
"""

from __future__ import annotations

from typing import Literal

import pydantic

from scigen.core.system import SystemConfig
from scigen.molecules.data.qm9 import QM9_PROPERTIES
from scigen.molecules.elements import QM9_ATOMS

__all__ = ["UniGEMConfig", "EDMConfig", "DEFAULT_PROPERTIES"]

DEFAULT_PROPERTIES = ("alpha", "gap", "homo", "lumo", "mu", "Cv")


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
    lr: float = pydantic.Field(1e-4, gt=0)
    weight_decay: float = pydantic.Field(1e-12, ge=0)
    batch_size: int = pydantic.Field(64, ge=2)
    max_steps: int = pydantic.Field(2000, gt=0)
    ema_decay: float | None = pydantic.Field(0.9999, ge=0, lt=1)
    grad_clip: float | None = 1.0
    # "ancestral"/"ddim": EDM's discrete samplers; the others: scigen.core.samplers on the zero-CoM subspace
    sampler: Literal["ancestral", "ddim", "dpmpp_2m", "unipc", "ddpm", "heun", "euler", "euler_maruyama"] = "ancestral"
    sample_steps: int | None = pydantic.Field(None, ge=1)  # None: all T (ancestral/ddim) or 50 (engine samplers)
    seed: int = 0

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
        if self.batch_size % 2:
            raise ValueError(f"batch_size must be even (half of each batch has t <= t_n), got {self.batch_size}")
        return self


class EDMConfig(UniGEMConfig):
    """EDM: atom types (one-hot/4 and Z/10) diffused jointly with the coordinates; no heads."""

    mode: Literal["unigem", "edm"] = "edm"
    properties: tuple[str, ...] = ()
