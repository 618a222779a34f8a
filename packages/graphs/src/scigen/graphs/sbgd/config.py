"""SBGD settings (Su & Wu, ICML 2025) and the three presets.

No paper body or code was retrievable (see ``/work/shared/research/graphs.md``): the *idea* is the
paper's (diffusion in a block-graph space: graphs cut into blocks ``C_i = G[V_i]`` of at most ``b``
nodes, one shared score model over the blocks, a stochastic-block model of the edges between them,
size generalisation by choosing the number of blocks); every concrete choice below is ours and sits
behind a field:

* ``partition``: ``"metis"`` (pymetis, ``k = ceil(N / b)`` parts), ``"louvain"`` (networkx Louvain
  communities) or ``"spectral"`` (recursive Fiedler bisection); oversized parts are bisected until
  every block has at most ``block_size`` nodes;
* ``full_graph=True``: the full-graph baseline in the same code (one block = the whole graph, padded
  to the largest training graph; GDSS-style, Jo et al. 2022);
* the block score model is GDSS-style (separate node and adjacency score networks on the noisy
  ``(X_t, A_t)``, Jo et al. 2022 §3), trained with the engine's denoising loss on a VP path;
* ``block_sizes``: ``"balanced"`` (a target of ``N`` nodes gives ``ceil(N / b)`` near-equal blocks,
  the rule METIS was trained with) or ``"empirical"`` (block sizes drawn from the training
  histogram until they add up to ``N``);
* ``inter_block_scaling`` (ours): ``"none"`` applies the learned block-pair densities ``p_ij`` as they
  are at any block count ``k`` (a plain SBM: inter-block degree per node grows ∝ ``k − 1``);
  ``"per_block_count"`` holds the expected inter-block degree per node at its value for the nearest
  block count seen in training, ``k_ref = clip(k, k_min, k_max)``: ``p_ij`` is evaluated with
  ``1 / k_ref`` and multiplied by ``(k_ref − 1) / (k − 1)`` (the identity inside the training range;
  see :func:`scigen.graphs.sbgd.sampling.inter_block_scale`). Default ``"per_block_count"`` (measured:
  degree MMD² 0.045 vs 0.555 at N = 1000 trained on N ≤ 125, ``results/sbgd_size.md``); ``preset("paper")``
  has ``"none"``. Every setting and its source: ``paper_preset.json`` beside this file.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import pydantic

from scigen.core.system import SystemConfig, TrainingOptions, training_defaults


class SBGDConfig(SystemConfig):
    """Partition, block score model, inter-block model, sampler and training of SBGD."""

    # block space
    block_size: int = pydantic.Field(32, ge=2)
    partition: Literal["metis", "louvain", "spectral"] = "metis"
    block_sizes: Literal["balanced", "empirical"] = "balanced"
    full_graph: bool = False
    # block score model (GDSS-style: node and adjacency networks)
    hidden: int = pydantic.Field(64, gt=0)
    layers: int = pydantic.Field(3, ge=1)
    edge_hidden: int = pydantic.Field(64, gt=0)
    # inter-block (stochastic block) model
    block_embedding: int = pydantic.Field(32, gt=0)
    inter_weight: float = pydantic.Field(1.0, ge=0)
    inter_block_scaling: Literal["none", "per_block_count"] = "per_block_count"
    #: how the loss averages (``objective``): over the batch's blocks (ours, default) or per graph, then over graphs
    loss_reduction: Literal["blocks", "graphs"] = "blocks"
    # diffusion (engine VP path, eps prediction)
    beta_min: float = pydantic.Field(0.1, gt=0)
    beta_max: float = pydantic.Field(20.0, gt=0)
    method: str = "euler_maruyama"
    steps: int = pydantic.Field(200, gt=0)
    # evaluation
    family: Literal["any", "sbm", "planar", "tree", "lobster", "community"] = "any"
    train: TrainingOptions = training_defaults(max_steps=20_000, batch_size=16, lr=5e-3, grad_clip=1.0,
                                               ema_decay=0.999)

    #: sampling presets (SystemConfig.sampling, issue 36): the fields only sampling reads
    SAMPLING_FIELDS: ClassVar[tuple[str, ...]] = ("method", "steps")
    #: ``sampling("fast")``: Heun's probability-flow ODE with 25 steps (49 score calls against Euler-Maruyama's 1000),
    #: spectre MMD² within seed noise over seeds 3-5 (benchmarks/core/results/system_samplers_fast.md)
    SAMPLERS: ClassVar[dict[str, Any]] = {"fast": {"method": "heun", "steps": 25}}
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # the demo's recipe: small SBM graphs, blocks of <= 16 nodes, about a minute on one CPU core
        "tiny": {"block_size": 16, "partition": "louvain", "hidden": 32, "layers": 2, "edge_hidden": 32,
                 "block_embedding": 16, "steps": 50, "train": {"max_steps": 400, "batch_size": 8, "lr": 5e-3}},
        # a GPU run of minutes
        "small": {"block_size": 32, "hidden": 64, "layers": 3, "steps": 200,
                  "train": {"max_steps": 5000, "batch_size": 16}},
        # our paper-scale recipe (GDSS-sized networks; the paper's own settings are unknown) with our switches off:
        # the block-pair densities as learned (a plain SBM)
        "paper": {"block_size": 64, "hidden": 128, "layers": 4, "edge_hidden": 128, "block_embedding": 64,
                  "inter_block_scaling": "none", "steps": 1000, "train": {"max_steps": 100_000, "batch_size": 32, "lr": 5e-3}},
    }

    @pydantic.field_validator("method")
    @classmethod
    def _method(cls, value: str) -> str:
        from scigen.core.samplers import check_method

        return check_method(value, error=ValueError)  # an engine sampler (all but consistency)
