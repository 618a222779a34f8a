"""Capture and restore every global random state; moved to :mod:`scigen.core.rng` (no Lightning import),
re-exported here for the training code."""

from scigen.core.rng import get_rng_state, preserved_rng, seeded_rng, set_rng_state

__all__ = ["get_rng_state", "preserved_rng", "seeded_rng", "set_rng_state"]
