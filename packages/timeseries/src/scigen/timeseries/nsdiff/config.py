"""NsDiff settings (Ye et al. 2025). Network sizes are the reference defaults; the schedule is ours.

The reference schedule (``T = 20``, linear ``β`` 1e-4 → 0.01) ends at ``ᾱ_T ≈ 0.90``, nowhere near
the ``N(f, g)`` prior sampling starts from; our default ``T = 100``, ``β`` 1e-4 → 0.15 ends at
``ᾱ_T ≈ 3.7e-4``. A schedule with ``ᾱ_T > prior_tolerance`` is rejected (raise the tolerance to 1 to
reproduce the reference). ``mode="tmdm"`` fixes ``g = σ = 1`` (TMDM, Li et al. 2024) on the same code.

Presets (:meth:`NsDiffConfig.preset`): ``"tiny"`` trains in about a minute on one CPU core, ``"small"``
is the demo's model (a few minutes), ``"paper"`` the released configuration: network sizes, Adam (lr
1e-3, batch 32), the reference schedule (``T = 20``, β 1e-4 → 0.01, accepted with
``prior_tolerance = 1``), the paper's reverse variance and an unclipped ``Ŷ0``. Every setting, its
source and the measurement behind each default that differs: ``paper_preset.json`` beside this file.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import pydantic

from scigen.core.system import SystemConfig, TrainingOptions, training_defaults
from scigen.timeseries.methods import check_method

_SMALL_NET = dict(context_length=48, horizon=12, rolling_length=12, diffusion_steps=50, beta_end=0.3, d_model=32,
                  n_heads=4, e_layers=1, d_layers=1, d_ff=64, g_hidden=64, denoiser_hidden=64, n_samples=50)


class NsDiffConfig(SystemConfig):
    """Fields: windows, schedule, sampler, networks, evaluation, and the training section ``train``."""

    # windows
    context_length: int = pydantic.Field(96, gt=1)
    horizon: int = pydantic.Field(24, gt=0)
    stride: int = pydantic.Field(1, gt=0)
    rolling_length: int = pydantic.Field(24, gt=1)  # window of the rolling variances (g input, σ_Y0)
    # diffusion
    mode: Literal["nsdiff", "tmdm"] = "nsdiff"
    diffusion_steps: int = pydantic.Field(100, gt=1)
    beta_start: float = pydantic.Field(1e-4, gt=0, lt=1)
    beta_end: float = pydantic.Field(0.15, gt=0, lt=1)
    prior_tolerance: float = pydantic.Field(0.01, gt=0, le=1)
    sigma_source: Literal["denoiser", "g"] = "denoiser"  # σ_Y0 at sampling: root of σ̂ (paper) or g (NsDiff-PE)
    # reverse variance: "analytic" adds γ0² Σ2_k/ᾱ_k Γ_k (Analytic-DPM; see sampling.py), "posterior" = the paper
    reverse_variance: Literal["analytic", "posterior"] = "analytic"
    # Ŷ0 clipped to the training targets' range widened by this share of it on each side (ours, the static
    # thresholding of Ho et al. 2020); None = unclipped, the paper's sampler. See sampling.py.
    clip_margin: float | None = pydantic.Field(0.5, ge=0, allow_inf_nan=False)
    # sampler: the paper's ancestral chain on every step; other engine methods need sigma_source="g" or tmdm
    method: str = "ddpm"
    steps: int | None = pydantic.Field(None, gt=0)  # None = all diffusion_steps
    # f: Non-stationary Transformer
    d_model: int = pydantic.Field(512, gt=0)
    n_heads: int = pydantic.Field(8, gt=0)
    e_layers: int = pydantic.Field(2, ge=1)
    d_layers: int = pydantic.Field(1, ge=1)
    d_ff: int = pydantic.Field(1024, gt=0)
    dropout: float = pydantic.Field(0.05, ge=0, lt=1)
    projector_hidden: int = pydantic.Field(64, gt=0)
    label_len: int | None = None  # default context_length // 2
    # g and the denoiser
    g_hidden: int = pydantic.Field(512, gt=0)
    denoiser_hidden: int = pydantic.Field(128, gt=0)
    # evaluation
    n_samples: int = pydantic.Field(100, gt=0)
    # training (early_stopping applies only when fit gets val_data)
    train: TrainingOptions = training_defaults(max_steps=2000, batch_size=32, lr=1e-3, grad_clip=1.0, val_every=100,
                                               early_stopping=5)

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "tiny": {**_SMALL_NET, "d_model": 16, "n_heads": 2, "d_ff": 32, "g_hidden": 32, "denoiser_hidden": 48, "steps": 20,
                 "train": {"max_steps": 150, "batch_size": 64, "lr": 2e-3, "val_every": 50, "early_stopping": 3}},
        "small": {**_SMALL_NET, "steps": 20,
                  "train": {"max_steps": 600, "batch_size": 64, "lr": 2e-3, "val_every": 50, "early_stopping": 3}},
        # the released code (wwy155/NsDiff): schedule of src/models/NsDiff.py, Adam of torch_timeseries, the paper's
        # sampler (posterior variance, Ŷ0 unclipped)
        "paper": {"diffusion_steps": 20, "beta_end": 0.01, "prior_tolerance": 1.0, "reverse_variance": "posterior",
                  "clip_margin": None, "train": {"optimizer": "adam"}},
    }

    @pydantic.field_validator("method")
    @classmethod
    def _known_method(cls, v: str) -> str:
        return check_method(v)

    @pydantic.model_validator(mode="after")
    def _consistent(self) -> NsDiffConfig:
        if self.rolling_length > self.context_length:
            raise ValueError(f"rolling_length {self.rolling_length} must not exceed context_length {self.context_length}")
        if self.label_len is not None and not 0 <= self.label_len <= self.context_length:
            raise ValueError(f"label_len {self.label_len} must lie in [0, context_length={self.context_length}]")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model {self.d_model} must be divisible by n_heads {self.n_heads}")
        if self.beta_end < self.beta_start:
            raise ValueError(f"beta_end {self.beta_end} must be >= beta_start {self.beta_start}")
        from scigen.core.paths import DiscreteSchedule

        ab = float(DiscreteSchedule.linear(self.diffusion_steps, self.beta_start, self.beta_end).alphas_cumprod[-1])
        if ab > self.prior_tolerance:
            raise ValueError(f"the schedule ends at alpha_bar_T = {ab:.3g} > prior_tolerance {self.prior_tolerance}: "
                             "the forward chain would not reach the N(f, g) prior that sampling starts from; "
                             "raise diffusion_steps or beta_end (or prior_tolerance to accept it)")
        return self

    @property
    def label(self) -> int:
        return self.context_length // 2 if self.label_len is None else self.label_len
