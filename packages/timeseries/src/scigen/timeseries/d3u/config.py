"""D3U settings (Li et al., ICLR 2025, "Diffusion-based Decoupled Deterministic and Uncertain framework").

Stage 1 trains the point forecaster with MSE; stage 2 freezes it and trains a conditional diffusion
over the residual ``r0 = Y − Ŷ``. The paper's values: linear ``β`` 1e-4 → 0.1, ``T = 100``
(``ᾱ_T ≈ 0.0056``), x0-parameterised, antithetic steps; PatchDN with patches 16 / stride 8, one
adaLN-zero block, 8 heads, MLP ratio 1; DPM-Solver 20 steps (the engine's ``dpmpp_2m``), 100 samples.

Presets (:meth:`D3UConfig.preset`): ``"tiny"`` trains in well under a minute on one CPU core,
``"small"`` is the demo's model, ``"paper"`` the released configuration (96 → 192 windows, forecaster
d_model 512, PatchDN width 256, Adam, batch 128, lr 1e-4 halved every epoch — ``lr_schedule="step"``, the
official ``lradj type1`` —, PatchTST with its BatchNorm encoder) with every switch of ours off (no
calibration, uncentred draws). Measured on the demo's recipe, same weights (``benchmarks/timeseries/results/d3u_switches.md``):
the defaults CRPS 0.499 / 0.497 and PICP 0.83 / 0.82 against the paper's switches 0.534 / 0.536 and 0.58 / 0.56
(training seeds 0 / 1). Every setting, its source, and the measurement behind each default that differs:
``paper_preset.json`` beside this file.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import pydantic

from scigen.core.system import TrainingOptions, training_defaults
from scigen.core.system.stage_budget import StagedConfig, deprecated_share, stage_shares_field

__all__ = ["D3UConfig"]


_SMALL = dict(context_length=48, horizon=12, f_d_model=32, f_n_heads=4, f_e_layers=1, f_d_ff=64, f_dropout=0.05,
              d_model=32, n_heads=4, n_samples=50)


class D3UConfig(StagedConfig):
    """Fields: windows, forecaster (``f_*``), residual diffusion, PatchDN, sampler, evaluation, training."""

    # windows
    context_length: int = pydantic.Field(96, gt=1)
    horizon: int = pydantic.Field(24, gt=0)
    stride: int = pydantic.Field(1, gt=0)
    # stage 1: the point forecaster ("custom" = a user nn.Module given to D3U(forecaster=...))
    forecaster: Literal["patchtst", "itransformer", "nstransformer", "custom"] = "patchtst"
    f_d_model: int = pydantic.Field(128, gt=0)
    f_n_heads: int = pydantic.Field(8, gt=0)
    f_e_layers: int = pydantic.Field(2, ge=1)
    f_d_layers: int = pydantic.Field(1, ge=1)  # NS-Transformer decoder
    f_d_ff: int = pydantic.Field(256, gt=0)
    f_dropout: float = pydantic.Field(0.2, ge=0, lt=1)  # the official scripts; tiny/small set 0.05
    f_patch_len: int = pydantic.Field(16, gt=0)  # PatchTST
    f_patch_stride: int = pydantic.Field(8, gt=0)
    f_projector_hidden: int = pydantic.Field(64, gt=0)  # NS-Transformer's tau/delta learners
    # PatchTST's encoder norm: "layer" (ours: PyTorch's pre-norm LayerNorm layer) or "batch" (the paper's
    # post-norm BatchNorm layer, Nie et al. 2023 §3.1; the official code's default)
    f_norm: Literal["layer", "batch"] = "layer"
    # NS-Transformer's calendar ("timeF") embedding, as the official code's (read by forecaster="nstransformer"
    # only): minute / hour / weekday / day / day-of-year features of every context and horizon step
    f_time_features: bool = True
    # share of fit's step budget that trains the forecaster (stage "forecaster"); the rest trains the diffusion
    # (stage "residual"). Formerly forecaster_share (accepted with a DeprecationWarning for one release)
    stage_shares: dict[str, float] = stage_shares_field({"forecaster": 0.5})
    SHARE_STAGES: ClassVar[tuple[str, ...]] = ("forecaster",)
    RENAMED_SHARE: ClassVar[tuple[str, str] | None] = ("forecaster_share", "forecaster")
    forecaster_share = deprecated_share("forecaster_share", "forecaster")
    # condition of PatchDN: the forecaster's per-variable tokens, or Ŷ (also the fallback without tokens)
    condition: Literal["tokens", "forecast"] = "tokens"
    # ours: the diffusion runs on the residual divided by each variable's context sd (process.py); False = the
    # paper's and the default: with the per-step calibration below the unit lost CRPS on the synthetic set
    # (300 steps per stage, 40 test windows: iTransformer 0.5087 vs 0.5068 without, PatchTST 0.5053 vs 0.5031)
    residual_scale: bool = False
    # ours: with val_data, fit scales the residual draws per variable so their second moment matches the
    # validation residuals' (std scaling, Levi et al. 2022); False = the paper's uncalibrated draws
    calibrate: bool = True
    # ours: the calibration's granularity: one factor per variable, or one per horizon step and variable (the
    # same 2-D grid as the constant-variance baseline's sigma_{h,n}, so the draws' spread per step matches the
    # held-out residuals' and PatchDN contributes the across-window shape of the spread)
    calibrate_by: Literal["variable", "step"] = "step"
    # ours: the calibration pass's size: up to calibrate_windows validation windows (a seeded subsample) with
    # calibrate_draws residual draws each, each draw a full sampler run (method, steps). Its cost is
    # windows · draws · steps PatchDN evaluations without gradient; 128 × 8 keeps it a small fraction of
    # stage 2's training (benchmarks/timeseries/d3u_cost.py) at a relative standard error of each factor of
    # about sqrt((1 + 1/draws) / (2 · windows)) = 6.6 % (process.kappa_relative_se; 512 × 32, the size
    # before issue 36.3: 3.1 %, at 16× the cost)
    calibrate_windows: int = pydantic.Field(128, gt=0)
    calibrate_draws: int = pydantic.Field(8, ge=2)
    # ours: the n residual draws of a window are centred on their mean, so the forecast's mean is Ŷ exactly
    # (E[r0 | X] = 0 for an MSE-trained forecaster; a short-trained PatchDN otherwise adds its own bias and
    # raises the MSE: 0.645 -> 0.69 on the synthetic set); False = the paper's draws
    center_residuals: bool = True
    # stage 2: residual diffusion (DDPM, linear beta)
    diffusion_steps: int = pydantic.Field(100, gt=1)
    beta_start: float = pydantic.Field(1e-4, gt=0, lt=1)
    beta_end: float = pydantic.Field(0.1, gt=0, lt=1)
    prediction: Literal["x0", "eps"] = "x0"
    # PatchDN
    patch_len: int = pydantic.Field(16, gt=0)
    patch_stride: int = pydantic.Field(8, gt=0)
    d_model: int = pydantic.Field(128, gt=0)
    n_heads: int = pydantic.Field(8, gt=0)
    depth: int = pydantic.Field(1, ge=1)
    mlp_ratio: float = pydantic.Field(1.0, gt=0)
    t_embed_dim: int = pydantic.Field(256, gt=1)
    # sampler: any engine method on the discrete schedule's path
    method: str = "dpmpp_2m"
    steps: int = pydantic.Field(20, gt=0)
    # evaluation
    n_samples: int = pydantic.Field(100, gt=0)
    # training (both stages; early_stopping applies only when fit gets val_data)
    train: TrainingOptions = training_defaults(max_steps=2000, batch_size=64, lr=1e-3, grad_clip=1.0, val_every=100,
                                               early_stopping=5)

    #: sampling presets (SystemConfig.sampling, issue 36): the fields only sampling reads
    SAMPLING_FIELDS: ClassVar[tuple[str, ...]] = ("method", "steps")
    #: ``sampling("fast")``: DPM-Solver++(2M) with 10 steps, half the paper sampler's calls, CRPS within seed noise
    #: over seeds 3-5 (benchmarks/core/results/system_samplers_fast.md). The calibration pass of ``fit`` (ours,
    #: ``calibrate=True``) draws with the config's sampler, so set the preset before ``fit`` to calibrate with it
    SAMPLERS: ClassVar[dict[str, Any]] = {"fast": {"method": "dpmpp_2m", "steps": 10}}
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "tiny": {**_SMALL, "f_d_model": 16, "f_n_heads": 2, "f_d_ff": 32, "d_model": 16, "n_heads": 2, "t_embed_dim": 32,
                 "train": {"max_steps": 200, "batch_size": 64, "lr": 3e-3, "val_every": 50, "early_stopping": 3}},
        "small": {**_SMALL, "train": {"max_steps": 600, "batch_size": 64, "lr": 2e-3, "val_every": 50,
                                      "early_stopping": 3}},
        "paper": {"context_length": 96, "horizon": 192, "f_d_model": 512, "f_n_heads": 8, "f_e_layers": 2,
                  "f_d_ff": 512, "f_dropout": 0.2, "d_model": 256, "n_heads": 8, "calibrate": False,
                  "center_residuals": False, "f_norm": "batch",
                  "train": {"max_steps": 20000, "batch_size": 128, "lr": 1e-4, "optimizer": "adam", "val_every": 500,
                            "early_stopping": 15, "lr_schedule": "step"}},
    }

    @pydantic.field_validator("method")
    @classmethod
    def _known_method(cls, v: str) -> str:
        from scigen.core.samplers import check_method

        return check_method(v)

    @pydantic.model_validator(mode="after")
    def _consistent(self) -> D3UConfig:
        for d, h, what in ((self.f_d_model, self.f_n_heads, "f_"), (self.d_model, self.n_heads, "")):
            if d % h:
                raise ValueError(f"{what}d_model {d} must be divisible by {what}n_heads {h}")
        if self.beta_end < self.beta_start:
            raise ValueError(f"beta_end {self.beta_end} must be >= beta_start {self.beta_start}")
        if self.steps > self.diffusion_steps:
            raise ValueError(f"steps {self.steps} must not exceed diffusion_steps {self.diffusion_steps} "
                             "(the sampler runs on the schedule's integer steps)")
        return self
