"""Couplings between minibatches: independent, exact OT (POT ``emd``), log-domain Sinkhorn, and
row-aligned multi-marginal chaining.

Pairing functions return ``(x0, x1_paired)`` (row ``i`` is one pair); ``*_indices`` return the
indices into ``x1``; ``*_plan`` return the ``[n, m]`` transport plan. POT is imported lazily.
"""

from scigen.core.couplings.chain import chain_coupling, chain_indices
from scigen.core.couplings.cost import pairwise_cost
from scigen.core.couplings.exact import emd_plan, exact_ot_cost, exact_ot_plan
from scigen.core.couplings.pairing import (
    independent_coupling,
    independent_indices,
    ot_coupling,
    ot_indices,
)
from scigen.core.couplings.sampling import sample_conditional, sample_plan
from scigen.core.couplings.sinkhorn import sinkhorn_plan, sinkhorn_plan_from_cost

__all__ = [
    "chain_coupling",
    "chain_indices",
    "emd_plan",
    "exact_ot_cost",
    "exact_ot_plan",
    "independent_coupling",
    "independent_indices",
    "ot_coupling",
    "ot_indices",
    "pairwise_cost",
    "sample_conditional",
    "sample_plan",
    "sinkhorn_plan",
    "sinkhorn_plan_from_cost",
]
