"""Nowcast settings: windows, the stage-1 estimator, the stage-2 rectified flow, lead-time weights, sampling.

Stage 1 is an MSE U-Net over stacked frames (``context`` frames in, ``horizon`` frames out, a residual on
the last context frame). Stage 2 is posterior-mean rectified flow (PMRF, Ohayon, Michaeli & Elad, ICLR
2025, Alg. 1; the ICML 2025 nowcasting paper's second stage): a rectified flow from
``x1 = mean + sigma_s·eps`` to the observed frames ``x0`` on the engine's linear path
``x_t = (1 − t)·x0 + t·x1``, its velocity net conditioned on the context and the mean. Lead times are
weighted by frame sampling: lead ``l`` (0-based, of ``L``) enters the loss with probability
``w_l = w_min + (1 − w_min)·(l / (L − 1))^power`` (``lead_weighting="linear"``; ``"uniform"``: all frames),
so distant frames weigh more in expectation.

``advection_input`` (ours, off by default: the paper's estimator sees the context only): pysteps'
Lucas-Kanade + semi-Lagrangian extrapolation of the context (:mod:`scigen.weather.nowcast.advection`)
enters both networks as ``horizon`` extra channels and the estimator predicts a residual on it instead of
on the last frame. Why: on small training sets the U-Net learns motion poorly and its mean lost to plain
extrapolation; the motion then comes from optical flow and the networks learn growth/decay and spread.
``advection_motion`` picks the motion: ``"lucas-kanade"`` (pysteps, the ``[pysteps]`` extra) or ``"global"``
(one phase-correlation vector per context, :mod:`scigen.weather.motion`; numpy/scipy only, exact for
uniformly moving storms as in the synthetic data, coarse for real radar).

``sigma_s_far`` (a lead-dependent source noise, ours) was removed after its sweep on validation seeds 2, 5, 6
(CRPS −0.002 ± 0.004, not kept; README "Differences"): the source noise is PMRF's one constant ``sigma_s``.

``spread_inflation`` / ``spread_inflation_far`` (ours, off by default: the paper's members as sampled):
multiplicative inflation of each member's deviation from the ensemble mean, ``x_m <- x̄ + k_l·(x_m − x̄)``
with ``k_l`` linear in lead from ``spread_inflation`` to ``spread_inflation_far`` (constant without it),
applied to the sampled members in the data's units (mm/h, VIL, dBZ) and never in training: the ensemble
mean is kept and the spread multiplied by ``k_l`` exactly, except where a member would go below zero rain
(set to 0). Multiplicative inflation is the standard remedy for an
under-dispersive ensemble (Anderson & Anderson 1999, Mon. Wea. Rev. 127; spread calibration for CRPS:
Gneiting et al. 2005, Mon. Wea. Rev. 133): the flow's members are under-dispersive (spread–skill ratio
0.4–0.5 at leads 5–20 on the synthetic set) while their mean beats STEPS' at every lead.

``probability_matching`` (ours, off by default: the paper's members as sampled): each sampled member
takes the values of the last observed context frame in its own rank order (in the data's units), so its
wet fraction and intensity distribution are the observed ones while its spatial structure is the flow's:
the empirical-CDF matching of STEPS (Seed 2003) and pysteps (``probmatching``), the standard
post-processing of rain ensembles. Why: a flow trained briefly leaves low-rate speckle where the truth
is dry (on the demo, twice the truth's wet area), which the matching removes.

Presets: ``tiny`` (a minute on one core, 32² grids), ``small`` (the demo / benchmark model), ``paper``
(the paper's setting: 5 -> 20 frames, wider U-Nets, 128² crops of SEVIR; not run here). ``preset("paper")``
equals the defaults; every setting and its source: ``paper_preset.json`` beside this file.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import pydantic

from scigen.core.system import TrainingOptions, training_defaults
from scigen.core.system.stage_budget import StagedConfig, deprecated_share, stage_shares_field

__all__ = ["FLOW_METHODS", "NowcastConfig", "check_method", "lead_linear"]


def lead_linear(first: float, last: float | None, horizon: int) -> list[float]:
    """``horizon`` values: ``first`` everywhere when ``last`` is None, else linear from ``first`` at lead 0
    to ``last`` at lead ``horizon − 1`` (``[last]`` for one lead)."""
    if last is None:
        return [first] * horizon
    if horizon == 1:
        return [last]
    return [first + (last - first) * l / (horizon - 1) for l in range(horizon)]


#: the engine ODE samplers the flow stage can use (a velocity model: Runge-Kutta only)
FLOW_METHODS = ("euler", "heun", "rk4", "rk4_38")


def check_method(method: object) -> str:
    """An engine ODE sampler for the flow (:data:`FLOW_METHODS`), through ``scigen.core.samplers.check_method``."""
    from scigen.core.samplers import check_method as engine_check

    return engine_check(method, FLOW_METHODS, what="flow sampler")


class NowcastConfig(StagedConfig):
    """Fields: windows, networks, flow, lead-time weights, evaluation, and ``train``."""

    # windows
    context_frames: int = pydantic.Field(5, ge=1)
    horizon: int = pydantic.Field(20, ge=1)
    stride: int = pydantic.Field(1, ge=1)
    # networks (scigen.core.nn.UNet); both stages share the layout
    base_channels: int = pydantic.Field(64, gt=0)
    channel_mults: tuple[int, ...] = (1, 2, 4)
    n_res_blocks: int = pydantic.Field(2, ge=1)
    attention: bool = True
    groups: int = pydantic.Field(8, ge=1)
    # ours (see module doc): pysteps' LK extrapolation as extra input channels, stage 1 a residual on it
    advection_input: bool = False
    # with advection_input: the motion estimator (pysteps' Lucas-Kanade, or one global phase-correlation vector)
    advection_motion: Literal["lucas-kanade", "global"] = "lucas-kanade"
    # stage 2
    sigma_s: float = pydantic.Field(0.1, ge=0, allow_inf_nan=False)  # noise added to the mean (PMRF's sigma_s)
    # ours (see module doc): member spread inflation at the first lead and, linear in lead, at the last
    spread_inflation: float = pydantic.Field(1.0, gt=0, allow_inf_nan=False)
    spread_inflation_far: float | None = pydantic.Field(None, gt=0, allow_inf_nan=False)
    # ours (see module doc): members take the last observed frame's intensity distribution (STEPS' CDF matching)
    probability_matching: bool = False
    # share of fit's steps spent on stage 2 (stage "flow"; the rest trains stage "estimator"); 0 = stage 1 only.
    # Formerly flow_share (accepted with a DeprecationWarning for one release)
    stage_shares: dict[str, float] = stage_shares_field({"flow": 0.5})
    SHARE_STAGES: ClassVar[tuple[str, ...]] = ("flow",)
    RENAMED_SHARE: ClassVar[tuple[str, str] | None] = ("flow_share", "flow")
    flow_share = deprecated_share("flow_share", "flow")
    lead_weighting: Literal["linear", "uniform"] = "linear"
    lead_weight_min: float = pydantic.Field(0.3, gt=0, le=1)
    lead_weight_power: float = pydantic.Field(1.0, gt=0)
    method: str = "euler"
    steps: int = pydantic.Field(10, ge=1)
    # evaluation
    n_members: int = pydantic.Field(8, ge=1)
    thresholds: tuple[float, ...] = (0.5, 2.0, 5.0, 10.0)
    fss_scale: int = pydantic.Field(8, ge=1)
    train: TrainingOptions = training_defaults(max_steps=4000, batch_size=16, lr=3e-4, grad_clip=1.0, ema_decay=0.999)

    REMOVED: ClassVar[dict[str, str]] = {
        "sigma_s_far": "a lead-dependent source noise, swept on validation seeds 2, 5, 6: CRPS -0.002 ± 0.004 (README)",
    }

    #: sampling presets (SystemConfig.sampling, issue 36): the fields only sampling reads
    SAMPLING_FIELDS: ClassVar[tuple[str, ...]] = ("method", "steps")
    #: ``sampling("fast")``: Heun with 4 steps (7 flow calls against Euler's 10), flow CRPS within seed noise over
    #: seeds 3-5 on the demo checkpoint (benchmarks/core/results/system_samplers_fast.md)
    SAMPLERS: ClassVar[dict[str, Any]] = {"fast": {"method": "heun", "steps": 4}}
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "tiny": {"base_channels": 16, "channel_mults": (1, 2), "n_res_blocks": 1, "attention": False, "steps": 4,
                 "n_members": 4, "train": {"max_steps": 200, "batch_size": 8, "lr": 2e-3, "ema_decay": 0.99}},
        "small": {"base_channels": 32, "channel_mults": (1, 2, 2), "n_res_blocks": 1, "attention": False,
                  "steps": 8, "n_members": 8,
                  "train": {"max_steps": 1200, "batch_size": 8, "lr": 1e-3, "ema_decay": 0.995}},
        "paper": {},
    }

    @pydantic.field_validator("method")
    @classmethod
    def _known_method(cls, v: str) -> str:
        return check_method(v)

    @pydantic.model_validator(mode="after")
    def _consistent(self) -> NowcastConfig:
        if not self.channel_mults or any(m < 1 for m in self.channel_mults):
            raise ValueError(f"channel_mults must be positive ints, got {self.channel_mults}")
        if self.base_channels % self.groups:
            raise ValueError(f"base_channels {self.base_channels} must be divisible by groups {self.groups}")
        if any(t < 0 for t in self.thresholds) or not self.thresholds:
            raise ValueError(f"thresholds must be non-negative rain values, got {self.thresholds}")
        return self

    @property
    def factor(self) -> int:
        """Grid sizes must be divisible by this (the U-Net's downsampling)."""
        return 2 ** (len(self.channel_mults) - 1)

    def source_noise(self) -> list[float]:
        """``sigma_l`` for every lead ``l``: PMRF's ``sigma_s`` at every lead."""
        return lead_linear(self.sigma_s, None, self.horizon)

    def inflation(self) -> list[float]:
        """``k_l`` for every lead ``l``: ``spread_inflation`` everywhere, or with ``spread_inflation_far``
        linear from it at the first lead to ``spread_inflation_far`` at the last (ours, see module doc)."""
        return lead_linear(self.spread_inflation, self.spread_inflation_far, self.horizon)

    def lead_weights(self) -> list[float]:
        """``w_l`` for every lead ``l`` (see module doc); the farthest lead has weight 1."""
        L = self.horizon
        if self.lead_weighting == "uniform" or L == 1:
            return [1.0] * L
        return [self.lead_weight_min + (1 - self.lead_weight_min) * (l / (L - 1)) ** self.lead_weight_power
                for l in range(L)]
