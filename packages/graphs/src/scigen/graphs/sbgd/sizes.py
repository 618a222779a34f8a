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


def block_plan(n_nodes: int, block_size: int, rule: str, histogram: Sequence[int],
               rng: np.random.Generator | np.ndarray) -> list[int]:
    """Block sizes (each in ``[1, block_size]``) that add up to ``n_nodes``.

    ``rng``: a NumPy generator, or (``G.sample``'s per-sample keyed draws) an array of uniforms in [0, 1): block
    ``j`` of ``"empirical"`` then takes the inverse-CDF image of ``rng[j]`` under the histogram, so a plan needs
    at most ``n_nodes`` of them (every training block has at least one node)."""
    if rule == "balanced":
        k = math.ceil(n_nodes / block_size)
        base, extra = divmod(n_nodes, k)
        return [base + (1 if i < extra else 0) for i in range(k)]
    hist = np.asarray(histogram, dtype=np.float64)  # hist[s] = count of training blocks of size s
    if hist.sum() <= 0:
        raise InvalidInputError("the block-size histogram is empty (train the model first)")
    p = hist / hist.sum()
    uniforms = None if isinstance(rng, np.random.Generator) else np.asarray(rng, dtype=np.float64)
    cdf = np.cumsum(p)
    sizes: list[int] = []
    left = n_nodes
    while left > 0:
        if uniforms is None:
            s = int(rng.choice(len(p), p=p))
        else:
            if len(sizes) >= len(uniforms):
                raise InvalidInputError(f"block_plan: {len(uniforms)} uniforms do not cover {n_nodes} nodes")
            s = min(int(np.searchsorted(cdf, uniforms[len(sizes)] * cdf[-1], side="right")), len(p) - 1)
        s = min(s, left)
        sizes.append(s)
        left -= s
    return sizes
