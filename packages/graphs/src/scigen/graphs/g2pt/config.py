"""G2PT settings with the paper's defaults (Chen et al. ICML 2025, Table 7)."""

from __future__ import annotations

from typing import Literal

import pydantic

from scigen.core.system import SystemConfig


class G2PTConfig(SystemConfig):
    """Model size, sequence format and optimisation of G2PT.

    ``size`` picks layers/heads/width (``small`` 6/6/384 is the paper's default; ``tiny`` 2/2/64 is for
    CPU); ``n_layer``/``n_head``/``d_model`` override it. ``copies`` is the number of random
    permutations per graph per pass over the data (the paper re-samples them every epoch).
    ``family`` selects the validity check used by :meth:`G2PT.evaluate` (``"molecule"`` switches to
    the MOSES metrics).
    """

    size: Literal["tiny", "small", "base", "large"] = "small"
    n_layer: int | None = pydantic.Field(None, gt=0)
    n_head: int | None = pydantic.Field(None, gt=0)
    d_model: int | None = pydantic.Field(None, gt=0)
    ordering: Literal["deg", "bfs", "uniform"] = "deg"
    family: Literal["any", "planar", "tree", "lobster", "sbm", "community", "molecule"] = "any"
    max_nodes: int | None = pydantic.Field(None, gt=0)
    length_margin: float = pydantic.Field(1.25, ge=1.0)
    copies: int = pydantic.Field(100, gt=0)
    lr: float = pydantic.Field(1e-4, gt=0)
    weight_decay: float = pydantic.Field(0.1, ge=0)
    betas: tuple[float, float] = (0.9, 0.95)
    warmup_steps: int = pydantic.Field(2000, ge=0)
    batch_size: int = pydantic.Field(60, gt=0)
    max_steps: int = pydantic.Field(300_000, gt=0)
    grad_clip: float = pydantic.Field(1.0, ge=0)
    temperature: float = pydantic.Field(1.0, ge=0)
    top_k: int | None = pydantic.Field(None, gt=0)
    kekulize: bool = True
    seed: int = 0
