"""Settings of the diffusion placer; defaults are the paper's "large" model and its guidance schedule
(Lee et al., ICML 2025, App. A-D), with the potentials of :mod:`scigen.placement.potentials`."""

from __future__ import annotations

import pydantic

from scigen.core.system import SystemConfig

PRESETS = {
    "tiny": {"hidden": 32, "n_blocks": 1, "gnn_layers": 1},
    "small": {"hidden": 64, "n_blocks": 2, "gnn_layers": 2},
    "medium": {"hidden": 128, "n_blocks": 2, "gnn_layers": 2},
    "large": {"hidden": 256, "n_blocks": 3, "gnn_layers": 2},
}


class DiffusionPlacerConfig(SystemConfig):
    """Network, training, guided-sampling and legalisation settings."""

    # network (AttGNN); "large" = 256 hidden, 3 blocks of (2 GATv2 + MLP + GATv2/attention + MLP)
    hidden: int = pydantic.Field(256, gt=0)
    n_blocks: int = pydantic.Field(3, gt=0)
    gnn_layers: int = pydantic.Field(2, gt=0)
    heads: int = pydantic.Field(4, gt=0)
    att_heads: int = pydantic.Field(4, gt=0)
    # training: one circuit per step expanded to `copies` noisy copies (paper: 64), Adam 3e-4
    copies: int = pydantic.Field(64, gt=0)
    lr: float = pydantic.Field(3e-4, gt=0)
    max_steps: int = pydantic.Field(100_000, gt=0)
    ema_decay: float | None = 0.999
    train_circuits: int = pydantic.Field(2000, gt=0)
    train_objects: int = pydantic.Field(200, gt=1)  # synthetic circuits of about this many objects
    # sampling (cosine schedule alpha = cos(pi t / 2), DDPM steps on [1e-4, 1 - 1e-4])
    sample_steps: int = pydantic.Field(1000, gt=0)
    num_samples: int = pydantic.Field(1, gt=0)
    # guidance: `inner_steps` Adam steps on w * HPWL / (pins per object) + alpha * L_legal of the clipped x0
    # estimate; alpha = 0 for t > dual_t_max, then dual ascent (paper: alpha_critical_factor 0.5). The paper's
    # w = 1e-4..1.6e-3 multiplies raw HPWL against its squared-penetration potential with alpha <= 15; ours
    # multiplies the per-pin HPWL against the area-valued kernel energy, chosen on validation circuits
    # (seeds 70000+, never the benchmark's) for wirelength at legality >= 0.99.
    guidance: bool = True
    clip_x0: float | None = pydantic.Field(1.0, gt=0)
    inner_steps: int = pydantic.Field(5, gt=0)
    guidance_lr: float = pydantic.Field(2e-2, gt=0)
    hpwl_weight: float = pydantic.Field(20.0, ge=0)
    guidance_gamma: float | None = pydantic.Field(None, gt=0)  # WA wirelength smoothing; None = exact HPWL
    legality_sharpness: float = pydantic.Field(50.0, gt=0)
    dual_t_max: float = pydantic.Field(0.5, ge=0, le=1)
    dual_target: float = pydantic.Field(1e-4, ge=0)
    dual_step: float = pydantic.Field(5.0, gt=0)
    alpha_max: float = pydantic.Field(1e3, gt=0)
    # legalisation (Adam on alpha * L_legal + w * HPWL / (pins per object), sharpness ramp, dual ascent)
    legalize_steps: int = pydantic.Field(3000, ge=0)
    legalize_lr: float = pydantic.Field(1e-2, gt=0)
    legalize_hpwl_weight: float = pydantic.Field(10.0, ge=0)
    seed: int = 0

    @classmethod
    def preset(cls, name: str, **overrides) -> DiffusionPlacerConfig:
        """A config with the network size ``name`` (tiny | small | medium | large) and overrides."""
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}; valid: {', '.join(PRESETS)}")
        return cls(**{**PRESETS[name], **overrides})
