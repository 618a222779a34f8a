"""The block-count model: how many blocks, of which sizes, make a graph of ``N`` nodes (ours).

``"balanced"``: ``k = ceil(N / b)`` near-equal blocks (sizes differ by at most one) — the rule the
METIS partitioner uses, so generation at any ``N`` lands in the block sizes seen in training.
``"empirical"``: block sizes drawn i.i.d. from the training histogram until they reach ``N`` (the
last one cut to fit) — the natural rule for Louvain communities. The node count itself, when not
given, is drawn from the training graphs' sizes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from scigen.core.errors import InvalidInputError


def block_plan(n_nodes: int, block_size: int, rule: str, histogram: Sequence[int], rng: np.random.Generator) -> list[int]:
    """Block sizes (each in ``[1, block_size]``) that add up to ``n_nodes``."""
    if rule == "balanced":
        k = math.ceil(n_nodes / block_size)
        base, extra = divmod(n_nodes, k)
        return [base + (1 if i < extra else 0) for i in range(k)]
    hist = np.asarray(histogram, dtype=np.float64)  # hist[s] = count of training blocks of size s
    if hist.sum() <= 0:
        raise InvalidInputError("the block-size histogram is empty (train the model first)")
    p = hist / hist.sum()
    sizes: list[int] = []
    left = n_nodes
    while left > 0:
        s = int(rng.choice(len(p), p=p))
        s = min(s, left)
        sizes.append(s)
        left -= s
    return sizes
