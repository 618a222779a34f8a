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

``sigma_s_far`` (ours, off by default: PMRF's ``sigma_s`` is one constant): a lead-dependent source noise
``sigma_l = sigma_s + (sigma_s_far − sigma_s)·l / (L − 1)`` (lead ``l`` 0-based), in the flow loss and in
sampling alike. Why: the ensemble's spread–skill ratio (``metrics.spread_skill``) measures how far the
members' spread falls short of the ensemble-mean error at each lead; the source noise is the flow's only
stochastic input, so a larger one at far leads is the direct knob on the spread where the error is largest.

``spread_inflation`` / ``spread_inflation_far`` (ours, off by default: the paper's members as sampled):
multiplicative inflation of each member's deviation from the ensemble mean, ``x_m <- x̄ + k_l·(x_m − x̄)``
with ``k_l`` linear in lead from ``spread_inflation`` to ``spread_inflation_far`` (constant without it),
applied to the sampled members in the data's units (mm/h, VIL, dBZ) and never in training: the ensemble
mean is kept and the spread multiplied by ``k_l`` exactly, except where a member would go below zero rain
(set to 0). Multiplicative inflation is the standard remedy for an
under-dispersive ensemble (Anderson & Anderson 1999, Mon. Wea. Rev. 127; spread calibration for CRPS:
Gneiting et al. 2005, Mon. Wea. Rev. 133): the flow's members are under-dispersive (spread–skill ratio
0.4–0.5 at leads 5–20 on the synthetic set) while their mean beats STEPS' at every lead.

Presets: ``tiny`` (a minute on one core, 32² grids), ``small`` (the demo / benchmark model), ``paper``
(the paper's setting: 5 -> 20 frames, wider U-Nets, 128² crops of SEVIR; not run here).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import pydantic

from scigen.core.system import SystemConfig, TrainingOptions, training_defaults
from scigen.core.system.stage_budget import (
    check_stage_shares,
    old_share_value,
    renamed_share,
    stage_shares_field,
)

__all__ = ["NowcastConfig", "check_method", "lead_linear"]


def lead_linear(first: float, last: float | None, horizon: int) -> list[float]:
    """``horizon`` values: ``first`` everywhere when ``last`` is None, else linear from ``first`` at lead 0
    to ``last`` at lead ``horizon − 1`` (``[last]`` for one lead)."""
    if last is None:
        return [first] * horizon
    if horizon == 1:
        return [last]
    return [first + (last - first) * l / (horizon - 1) for l in range(horizon)]


def check_method(method: object) -> str:
    """An engine ODE sampler for the flow (``euler``, ``heun``, ``rk4``); ``InvalidInputError`` otherwise."""
    from scigen.core.errors import InvalidInputError

    valid = ("euler", "heun", "rk4")
    if method not in valid:
        raise InvalidInputError(f"unknown flow sampler method {method!r}; valid: {', '.join(valid)}")
    return str(method)


class NowcastConfig(SystemConfig):
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
    # stage 2
    sigma_s: float = pydantic.Field(0.1, ge=0, allow_inf_nan=False)  # noise added to the mean (PMRF's sigma_s)
    # ours (see module doc): source noise at the farthest lead, linear in lead from sigma_s; None = constant
    sigma_s_far: float | None = pydantic.Field(None, ge=0, allow_inf_nan=False)
    # ours (see module doc): member spread inflation at the first lead and, linear in lead, at the last
    spread_inflation: float = pydantic.Field(1.0, gt=0, allow_inf_nan=False)
    spread_inflation_far: float | None = pydantic.Field(None, gt=0, allow_inf_nan=False)
    # share of fit's steps spent on stage 2 (stage "flow"; the rest trains stage "estimator"); 0 = stage 1 only.
    # Formerly flow_share (accepted with a DeprecationWarning for one release)
    stage_shares: dict[str, float] = stage_shares_field({"flow": 0.5})
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

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "tiny": {"base_channels": 16, "channel_mults": (1, 2), "n_res_blocks": 1, "attention": False, "steps": 4,
                 "n_members": 4, "train": {"max_steps": 200, "batch_size": 8, "lr": 2e-3, "ema_decay": 0.99}},
        "small": {"base_channels": 32, "channel_mults": (1, 2, 2), "n_res_blocks": 1, "attention": False,
                  "steps": 8, "n_members": 8,
                  "train": {"max_steps": 1200, "batch_size": 8, "lr": 1e-3, "ema_decay": 0.995}},
        "paper": {},
    }

    @pydantic.field_validator("stage_shares")
    @classmethod
    def _check_stage_shares(cls, value: dict[str, float]) -> dict[str, float]:
        return check_stage_shares(value, ("flow",))

    @pydantic.model_validator(mode="before")
    @classmethod
    def _renamed_share(cls, data: Any) -> Any:
        return renamed_share(data, "flow_share", "flow", cls.__name__)

    @property
    def flow_share(self) -> float:
        """Deprecated; use ``stage_shares["flow"]``."""
        return old_share_value(self, "flow_share", "flow")

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
        """``sigma_l`` for every lead ``l``: ``sigma_s`` everywhere (PMRF), or with ``sigma_s_far`` (ours) linear
        from ``sigma_s`` at the first lead to ``sigma_s_far`` at the last (see module doc)."""
        return lead_linear(self.sigma_s, self.sigma_s_far, self.horizon)

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
