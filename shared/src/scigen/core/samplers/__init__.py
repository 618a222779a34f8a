"""Samplers: ``sample(...)`` over every solver, time grids and exact likelihoods.

Time convention: ``t ∈ [0, 1]``, ``t = 0`` data, ``t = 1`` noise; samplers integrate from the
first (largest) time of a decreasing grid to the last. See docs/engine-api.md.
"""

from scigen.core.samplers._progress import no_progress_bars, progress_bar
from scigen.core.samplers.denoiser import Denoiser
from scigen.core.samplers.grids import GRID_KINDS, time_grid
from scigen.core.samplers.likelihood import likelihood, standard_normal_log_prob
from scigen.core.samplers.methods import DENOISER_METHODS, METHODS, Solver, check_method, nfe
from scigen.core.samplers.sample import sample

__all__ = ["DENOISER_METHODS", "GRID_KINDS", "METHODS", "Denoiser", "Solver", "check_method", "likelihood", "nfe",
           "no_progress_bars", "progress_bar", "sample", "standard_normal_log_prob", "time_grid"]
