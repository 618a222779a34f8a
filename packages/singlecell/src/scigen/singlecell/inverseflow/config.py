"""Settings of Inverse Flow (Zhang & Zhou, ICML 2025) with the official code's defaults.

Official defaults (``configs.py``, ``toy_model.ipynb``): Karras grid N = 11, t_min = 0.002, ρ = 7,
t_max = 0.1 and σ_data (``t_data``) = 0.5 for images, t_max = 0.2 and σ_data = 0.7 for the 2-D toy;
AdamW, lr 1e-4 (images) / 1e-3 (toy), batch 32 crops of 256² (images) / 1000 points (toy), no EMA.
IFM denoises with 10 Euler steps on the same grid, ICM with one evaluation.

Presets: ``"tiny"`` (the quick demo and the tests: a few hundred CPU steps), ``"small"`` (the full demo,
about a minute on one core), ``"paper"`` (the official image recipe: U-Net widths 128–512 are not the
engine's small U-Net, so ``paper`` keeps the grid, lr, batch and crop and widens the engine's U-Net).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import pydantic

from scigen.core.system import SystemConfig, TrainingOptions, training_defaults
from scigen.singlecell.inverseflow.noise import noise_from_spec

__all__ = ["InverseFlowConfig"]


class InverseFlowConfig(SystemConfig):
    """Inverse Flow configuration. ``noise`` is a noise model's ``spec()`` (``{"kind": "gaussian",
    "sigma": 0.2}``); :class:`~scigen.singlecell.inverseflow.InverseFlow` also takes the object itself."""

    algorithm: Literal["icm", "ifm"] = pydantic.Field("icm", description="icm: one-step; ifm: Euler ODE")
    noise: dict[str, Any] = pydantic.Field(default_factory=lambda: {"kind": "gaussian", "sigma": 0.1})
    n_steps: int = pydantic.Field(11, ge=2, description="Karras grid points N (training and IFM denoising)")
    t_min: float = pydantic.Field(0.002, gt=0, allow_inf_nan=False)
    t_max: float = pydantic.Field(0.1, gt=0, le=1, allow_inf_nan=False)
    rho: float = pydantic.Field(7.0, gt=0, allow_inf_nan=False)
    sigma_data: float = pydantic.Field(0.5, gt=0, allow_inf_nan=False, description="c_skip/c_out's σ_d")
    network: Literal["auto", "mlp", "unet"] = pydantic.Field("auto", description="auto: MLP for vectors, U-Net for images")
    width: int = pydantic.Field(256, gt=0, description="residual MLP width")
    depth: int = pydantic.Field(4, ge=1, description="residual MLP blocks")
    time_dim: int = pydantic.Field(64, ge=2)
    base_channels: int = pydantic.Field(32, gt=0, description="U-Net channels at full resolution")
    channel_mults: tuple[int, ...] = (1, 2, 2)
    n_res_blocks: int = pydantic.Field(1, ge=1)
    groups: int = pydantic.Field(8, ge=1)
    patch: int = pydantic.Field(32, ge=4, description="training crop size for images")
    n_patches: int = pydantic.Field(2048, gt=0, description="random training crops drawn from the images")
    layer: str | None = pydantic.Field(None, description="adata.layers key of the noisy values (None: X)")
    key_added: str = pydantic.Field("inverse_flow", min_length=1, pattern=r"^[^/]+$",
                                    description="layer / uns key denoise writes (no '/': .h5ad cannot store it)")
    collapse_ratio: float = pydantic.Field(0.1, ge=0, lt=1, description="collapse if output var < ratio·input var")
    train: TrainingOptions = training_defaults(max_steps=2000, batch_size=256, lr=1e-3)

    #: sampling presets (SystemConfig.sampling, issue 36): the fields only sampling reads
    SAMPLING_FIELDS: ClassVar[tuple[str, ...]] = ()
    SAMPLER_NOTES: ClassVar[dict[str, str]] = {
        "fast": "Inverse Flow's ICM denoises in one network evaluation (nothing to cut); IFM integrates its Euler steps on the training's Karras grid (n_steps, a training field), and fewer steps are a call argument (denoise(steps=)), not measured here: fast = the paper sampler",
    }
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "tiny": {"width": 128, "depth": 3, "base_channels": 16, "n_patches": 512, "patch": 24,
                 "train": {"max_steps": 400, "batch_size": 128}},
        "small": {"width": 256, "depth": 4, "base_channels": 32, "n_patches": 2048,
                  "train": {"max_steps": 1500, "batch_size": 256}},
        "paper": {"t_max": 0.1, "sigma_data": 0.5, "base_channels": 128, "channel_mults": (1, 1, 2, 2, 4),
                  "patch": 256, "n_patches": 4096,
                  "train": {"max_steps": 200_000, "batch_size": 32, "lr": 1e-4}},
    }

    @pydantic.field_validator("noise", mode="before")
    @classmethod
    def _noise_spec(cls, v: Any) -> Any:
        if hasattr(v, "spec") and callable(v.spec):
            return v.spec()
        if isinstance(v, str):
            return {"kind": v}
        return v

    @pydantic.model_validator(mode="after")
    def _check(self) -> InverseFlowConfig:
        if not self.t_max > self.t_min:
            raise ValueError(f"t_max must exceed t_min, got t_min={self.t_min}, t_max={self.t_max}")
        if self.noise.get("kind") != "callable":
            noise_from_spec(self.noise)  # a bad kind or parameter fails here, naming it
        if any(m < 1 for m in self.channel_mults) or not self.channel_mults:
            raise ValueError(f"channel_mults must be positive, got {self.channel_mults}")
        if self.patch % (2 ** (len(self.channel_mults) - 1)):
            raise ValueError(f"patch {self.patch} must be divisible by 2^(len(channel_mults)-1) = "
                             f"{2 ** (len(self.channel_mults) - 1)} (the U-Net's downsampling)")
        return self
