"""MMSFM: Multi-Marginal Stochastic Flow Matching (Lee, Moradijamei & Shakeri, ICML 2025)."""

from scigen.singlecell.mmsfm.config import MMSFMConfig
from scigen.singlecell.mmsfm.objective import couple_windows, mmsfm_loss, stratified_times, windows
from scigen.singlecell.mmsfm.spline import SPLINE_KINDS, Spline
from scigen.singlecell.mmsfm.system import MMSFM

__all__ = ["MMSFM", "MMSFMConfig", "SPLINE_KINDS", "Spline", "couple_windows", "mmsfm_loss", "stratified_times",
           "windows"]
