"""G2PT settings with the paper's defaults (Chen et al. ICML 2025, Table 7) and the three presets."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import pydantic

from scigen.core.system import SystemConfig, TrainingOptions, training_defaults


class G2PTConfig(SystemConfig):
    """Model size, sequence format, sampling and training of G2PT.

    ``size`` picks layers/heads/width from the paper's Table 7 (``small`` 6/6/384, ``base`` 12/12/768,
    ``large`` 24/16/1024) or ``tiny`` 2/2/64 for CPU; ``n_layer``/``n_head``/``d_model`` override it.
    ``copies`` is the number of random permutations per graph per pass over the data (the paper
    re-samples them every epoch). ``family`` selects the validity check of :meth:`G2PT.evaluate`
    (``"molecule"`` switches to the MOSES metrics). ``temperature``/``top_k`` are the defaults of
    :meth:`G2PT.sample` (G2PT samples tokens autoregressively: the engine's ODE/SDE ``method`` and
    ``steps`` do not apply). ``betas`` are AdamW's; weight decay (``train.weight_decay``) applies
    to weight matrices and embeddings only, as in GPT-2. ``node_ids="first_seen"`` (ours, not the
    paper's) renumbers nodes by first appearance in the edge sequence, so new nodes take the next
    free label and copying labels from the context gets easy (see :mod:`.tokenizer`).

    The defaults are the paper's G2PT-small run (``lr`` 1e-4, batch 60 × 8 accumulation = 480, 300k steps, warm-up 2000,
    cosine decay); ``Config.preset("tiny")`` trains on small graphs in about a minute on one CPU core.
    """

    size: Literal["tiny", "small", "base", "large"] = "small"
    n_layer: int | None = pydantic.Field(None, gt=0)
    n_head: int | None = pydantic.Field(None, gt=0)
    d_model: int | None = pydantic.Field(None, gt=0)
    ordering: Literal["deg", "bfs", "uniform"] = "deg"
    node_ids: Literal["random", "first_seen"] = "random"
    family: Literal["any", "planar", "tree", "lobster", "sbm", "community", "molecule"] = "any"
    max_nodes: int | None = pydantic.Field(None, gt=0)
    length_margin: float = pydantic.Field(1.25, ge=1.0)
    copies: int = pydantic.Field(100, gt=0)
    betas: tuple[float, float] = (0.9, 0.95)
    temperature: float = pydantic.Field(1.0, ge=0)
    top_k: int | None = pydantic.Field(None, gt=0)
    kekulize: bool = True
    train: TrainingOptions = training_defaults(max_steps=300_000, batch_size=480, lr=1e-4, weight_decay=0.1,
                                               lr_schedule="cosine", warmup_steps=2000, grad_clip=1.0)

    #: sampling presets (SystemConfig.sampling, issue 36): the fields only sampling reads
    SAMPLING_FIELDS: ClassVar[tuple[str, ...]] = ()
    SAMPLER_NOTES: ClassVar[dict[str, str]] = {
        "fast": "G2PT samples tokens autoregressively (temperature, top_k): no solver and no step count, fast = the paper sampler",
    }
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        # the demo's recipe: 10-node trees learn in ~600 steps on one CPU core (about a minute)
        "tiny": {"size": "tiny", "copies": 50,
                 "train": {"max_steps": 600, "batch_size": 32, "lr": 3e-3, "warmup_steps": 20}},
        # G2PT-small on a short budget (a GPU run of minutes, hours on a CPU)
        "small": {"size": "small", "train": {"max_steps": 20_000, "batch_size": 32, "lr": 3e-4, "warmup_steps": 500}},
        # the published configuration (Table 7: G2PT-small, AdamW 1e-4, batch 60 x 8 accumulated, 300k steps)
        "paper": {},
    }
