"""Sparse Bayesian generative modelling of wireless channels (SBGM; Böck et al., ICML 2025).

Public API (imported lazily, so ``scigen list`` stays fast):

* :class:`SBGM` / :class:`SBGMConfig` — CSGMM and CSVAE channel models trained on compressed pilots;
* :class:`Dictionary` — ULA or UPA angle / OFDM delay–Doppler dictionaries (Kronecker);
* :func:`generate_channels`, :func:`make_site` — the geometric multipath generator with planted clusters;
* :func:`pilot_matrix`, :func:`observe` — pilot / compression matrices and noisy observations;
* :func:`read_dataset`, :func:`write_dataset`, :func:`as_channels` — xarray channels and their files;
* :func:`observations_from_arrays` — observations (and their channel layout) from your own arrays;
* baselines (:mod:`scigen.wireless.baselines`) and metrics (:mod:`scigen.wireless.metrics`).
"""

from __future__ import annotations

from scigen.core.lazy import lazy_names

__version__ = "0.1.0"

SYSTEMS = {"sbgm": "scigen.wireless.sbgm.system:SBGM"}

#: extra CLI verbs per system (``estimate``), registered without importing the system class
CLI_COMMANDS = {"sbgm": "scigen.wireless.sbgm.cli:register"}

_LAZY = {
    **dict.fromkeys(("SBGM", "SBGMConfig"), "scigen.wireless.sbgm.system"),
    "Dictionary": "scigen.wireless.dictionaries",
    **dict.fromkeys(("generate_channels", "make_site", "Site"), "scigen.wireless.synthetic"),
    **dict.fromkeys(("pilot_matrix", "observe", "snr_to_noise_var"), "scigen.wireless.pilots"),
    **dict.fromkeys(("read_dataset", "write_dataset", "as_channels", "as_observations", "observations_from_arrays"),
                   "scigen.wireless.channels"),
}

__all__ = sorted([*_LAZY, "SYSTEMS", "CLI_COMMANDS"])

__getattr__, __dir__ = lazy_names(__name__, _LAZY)
