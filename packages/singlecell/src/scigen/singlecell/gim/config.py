"""Settings of GIM (Schneider, Lorch, Kilbertus, Schölkopf & Krause, ICML 2025).

The paper's defaults could not be read (``shared/research/singlecell.md`` §1); every default here is
**ours**, chosen on the synthetic screen (:mod:`scigen.singlecell.gim.synthetic`). The data keys
(``perturbation_key``, ``dose_key``, ``control``, ``features_key``, ``use_rep``/``layer``, ``split_key``)
are the defaults of :meth:`GIM.fit`.

``train.batch_size`` counts perturbation contexts per step (the control context joins every batch).
Presets: ``"tiny"`` (the quick demo), ``"small"`` (the full demo, about a minute on one core), ``"paper"``
(a longer run for the sci-Plex3 recipe in ``benchmarks/singlecell/paper.sh``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import pydantic

from scigen.core.system import SystemConfig, TrainingOptions, training_defaults

__all__ = ["GIMConfig"]


class GIMConfig(SystemConfig):
    """GIM configuration (see the module docstring)."""

    backend: Literal["linear_gaussian", "stationary_sde"] = pydantic.Field(
        "linear_gaussian", description="causal model: linear-Gaussian SCM (exact likelihood) or stationary linear SDE (KDS)")
    training: Literal["mc", "map"] = pydantic.Field(
        "mc", description="relaxed-Bernoulli Monte Carlo marginal likelihood, or MAP/EM (exact E-step; SDE: joint MAP)")
    target_prior: Literal["bernoulli", "categorical"] = pydantic.Field(
        "bernoulli", description="independent Bernoulli targets, or one target per perturbation (categorical)")
    hill: bool = pydantic.Field(True, description="monotone Hill dose response of the shift")
    noise_intervention: bool = pydantic.Field(False, description="interventions also scale the targets' noise")
    use_head: bool = pydantic.Field(True, description="False: per-context estimation without g(γ) (a baseline; MAP only)")
    width: int = pydantic.Field(64, gt=0)
    depth: int = pydantic.Field(2, ge=0)
    mc_samples: int = pydantic.Field(8, gt=0)
    temperature: float = pydantic.Field(0.5, gt=0)
    l1: float = pydantic.Field(0.005, ge=0, description="L1 weight on W (per cell)")
    acyclic: float = pydantic.Field(1.0, ge=0, description="weight of NOTEARS h(W) + h²/2; 0 allows cycles")
    target_l1: float = pydantic.Field(0.05, ge=0, description="weight of the mean target probability")
    map_prior_scale: float = pydantic.Field(0.5, gt=0, description="std of ψ around g's mean in MAP mode (SDE)")
    em_warmup: float = pydantic.Field(
        0.0, ge=0, le=1, description="EM: fraction of steps whose E-step uses per_context_prior (head fitted to it)")
    per_context_prior: tuple[float, float] = pydantic.Field(
        (0.1, 3.0), description="use_head=False under EM: (prior target probability, prior std of ψ)")
    normaliser: Literal["batch", "dataset"] = pydantic.Field(
        "batch", description="fit term over the batch's cells (control in every batch), or 'dataset': an unbiased "
        "estimate of the per-cell likelihood of all contexts, a per-context mean (DDP-decomposable; gim_loss)")
    kds_weight: float = pydantic.Field(10.0, gt=0)
    kds_bandwidth: float | None = pydantic.Field(None, gt=0, description="RBF bandwidth of KDS; None = sqrt(d)")
    max_cells_per_context: int = pydantic.Field(128, gt=1, description="cells kept per context for KDS")
    edge_threshold: float = pydantic.Field(0.2, ge=0, description="|W_ij| above this is an edge (graph, SHD)")
    predict_mode: Literal["map", "mixture"] = "map"
    perturbation_key: str = "compound"
    dose_key: str = "dose"
    control: str = "control"
    features_key: str | None = "perturbation_features"
    use_rep: str | None = None
    layer: str | None = None
    split_key: str | None = pydantic.Field("split", description="obs column; fit uses only train_split cells when present")
    train_split: str = "train"
    min_cells: int = pydantic.Field(2, ge=1)
    standardize: bool = pydantic.Field(True, description="model the control-standardised representation")
    train: TrainingOptions = training_defaults(max_steps=1500, batch_size=32, lr=5e-3)

    #: sampling presets (SystemConfig.sampling, issue 36): the fields only sampling reads
    SAMPLING_FIELDS: ClassVar[tuple[str, ...]] = ()
    SAMPLER_NOTES: ClassVar[dict[str, str]] = {
        "fast": "GIM draws from its causal model without an engine solver: fast = the paper sampler",
    }
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "tiny": {"width": 32, "train": {"max_steps": 300}},
        "small": {"width": 64, "train": {"max_steps": 1200}},
        "paper": {"width": 128, "depth": 3, "mc_samples": 16, "train": {"max_steps": 20000, "batch_size": 64}},
    }

    @pydantic.model_validator(mode="after")
    def _consistent(self) -> GIMConfig:
        if self.layer is not None and self.use_rep not in (None, "X"):
            raise ValueError(f"give layer= or use_rep=, not both (layer={self.layer!r}, use_rep={self.use_rep!r})")
        if not self.use_head and self.training != "map":
            raise ValueError("use_head=False (per-context estimation) needs training='map'")
        return self
