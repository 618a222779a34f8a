"""NsDiff settings (Ye et al. 2025): the defaults are the released configuration (``wwy155/NsDiff``).

The reference schedule (``T = 20``, linear ``β`` 1e-4 → 0.01) ends at ``ᾱ_T ≈ 0.90``, far from the
``N(f, g)`` prior that sampling starts from, so the chain stays close to that prior. Measured on the demo's
quick recipe (``benchmarks/timeseries/results/nsdiff_switches.md``, training seeds 0 / 1) it nevertheless
scored better than our prior-reaching schedule (``T = 50``, β to 0.3: CRPS 0.505 / 0.514 vs 0.545 / 0.651),
so it is the default again. ``prior_tolerance`` (ours, a guard; 1 = off) refuses a schedule whose
``ᾱ_T`` exceeds it. ``mode="tmdm"`` fixes ``g = σ = 1`` (TMDM, Li et al. 2024) on the same code.

Presets (:meth:`NsDiffConfig.preset`): ``"tiny"`` trains in about a minute on one CPU core, ``"small"``
is the demo's model (a few minutes); both keep our CPU recipe: the schedule ``T = 50``, β to 0.3 (guarded by
``prior_tolerance = 0.01``), the Analytic-DPM reverse variance and the ``Ŷ0`` clamp (``clip_margin = 0.5``).
``"paper"`` is the released configuration (the defaults, with Adam). Every setting, its source and the
measurement behind each default that differs: ``paper_preset.json`` beside this file.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import pydantic

from scigen.core.system import TrainingOptions, training_defaults
from scigen.core.system.stage_budget import StagedConfig, stage_shares_field

# the CPU recipe of tiny/small (ours): a prior-reaching schedule, the Analytic-DPM reverse variance, the Ŷ0 clamp
_SMALL_NET = dict(context_length=48, horizon=12, rolling_length=12, diffusion_steps=50, beta_end=0.3,
                  prior_tolerance=0.01, reverse_variance="analytic", clip_margin=0.5, d_model=32,
                  n_heads=4, e_layers=1, d_layers=1, d_ff=64, g_hidden=64, denoiser_hidden=64, n_samples=50)


class NsDiffConfig(StagedConfig):
    """Fields: windows, schedule, sampler, networks, evaluation, and the training section ``train``."""

    # windows
    context_length: int = pydantic.Field(96, gt=1)
    horizon: int = pydantic.Field(24, gt=0)
    stride: int = pydantic.Field(1, gt=0)
    rolling_length: int = pydantic.Field(24, gt=1)  # window of the rolling variances (g input, σ_Y0)
    # diffusion
    mode: Literal["nsdiff", "tmdm"] = "nsdiff"
    diffusion_steps: int = pydantic.Field(20, gt=1)
    beta_start: float = pydantic.Field(1e-4, gt=0, lt=1)
    beta_end: float = pydantic.Field(0.01, gt=0, lt=1)
    prior_tolerance: float = pydantic.Field(1.0, gt=0, le=1)  # ours: refuse a schedule with alpha_bar_T above it
    sigma_source: Literal["denoiser", "g"] = "denoiser"  # σ_Y0 at sampling: root of σ̂ (paper) or g (NsDiff-PE)
    # reverse variance: "analytic" adds γ0² Σ2_k/ᾱ_k Γ_k (Analytic-DPM, ours; see sampling.py), "posterior" = the paper
    reverse_variance: Literal["analytic", "posterior"] = "posterior"
    # Ŷ0 clipped to the training targets' range widened by this share of it on each side (ours, the static
    # thresholding of Ho et al. 2020); None = unclipped, the paper's sampler. See sampling.py.
    clip_margin: float | None = pydantic.Field(None, ge=0, allow_inf_nan=False)
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
    # fit(parts="staged") (ours): stage "f" pre-trains the mean alone on this share of max_steps, then stage
    # "joint" trains f, g and the denoiser on every step left (training.py explains the choice; formerly the
    # module constant training.STAGE_SHARES)
    stage_shares: dict[str, float] = stage_shares_field({"f": 0.2})
    SHARE_STAGES: ClassVar[tuple[str, ...]] = ("f",)
    # training (early_stopping applies only when fit gets val_data)
    train: TrainingOptions = training_defaults(max_steps=2000, batch_size=32, lr=1e-3, grad_clip=1.0, val_every=100,
                                               early_stopping=5)

    #: sampling presets (SystemConfig.sampling, issue 36): the fields only sampling reads
    SAMPLING_FIELDS: ClassVar[tuple[str, ...]] = ("sigma_source", "method", "steps")
    #: ``sampling("fast")``: the paper's chain (σ̂ from the denoiser, ancestral ddpm) on a 10-step respaced grid, CRPS
    #: within seed noise of all T steps over seeds 3-5 (benchmarks/core/results/system_samplers_fast.md)
    SAMPLERS: ClassVar[dict[str, Any]] = {"fast": {"sigma_source": "denoiser", "method": "ddpm", "steps": 10}}
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "tiny": {**_SMALL_NET, "d_model": 16, "n_heads": 2, "d_ff": 32, "g_hidden": 32, "denoiser_hidden": 48, "steps": 20,
                 "train": {"max_steps": 150, "batch_size": 64, "lr": 2e-3, "val_every": 50, "early_stopping": 3}},
        "small": {**_SMALL_NET, "steps": 20,
                  "train": {"max_steps": 600, "batch_size": 64, "lr": 2e-3, "val_every": 50, "early_stopping": 3}},
        # the released code (wwy155/NsDiff) = the defaults, with torch_timeseries' Adam (AdamW at weight decay 0 is
        # the same update)
        "paper": {"train": {"optimizer": "adam"}},
    }

    @pydantic.field_validator("method")
    @classmethod
    def _known_method(cls, v: str) -> str:
        from scigen.core.samplers import check_method

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
