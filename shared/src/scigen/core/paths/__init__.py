"""Probability paths (``t = 0`` data, ``t = 1`` noise; ``x_t = alpha(t)·x0 + sigma(t)·eps``).

* :class:`GaussianPath` (abstract) with ``alpha, sigma, d_alpha, d_sigma, log_snr, marginal,
  target, convert`` for the kinds ``eps, x0, v, velocity, score``;
* VP: :class:`VPLinear`, :class:`VPCosine`, :class:`VPPolynomial`; VE/EDM: :class:`VEPath`;
  straight lines: :class:`LinearPath`, :class:`OTCFMPath`;
* :class:`LocationScalePath` (NsDiff endpoint ``N(mu, Sigma)``), :class:`BrownianBridge`;
* discrete DDPM schedules :class:`DiscreteSchedule`, :func:`sum_of_products`, and
  :class:`DiscreteSchedulePath` (``schedule.as_path()``) to sample them with every solver;
* convention converters :func:`flip_time`, :func:`reverse_velocity`, :func:`step_to_time`,
  :func:`time_to_step`; :func:`broadcast_time`.
"""

from scigen.core.paths.bridge import BrownianBridge
from scigen.core.paths.conventions import flip_time, reverse_velocity, step_to_time, time_to_step
from scigen.core.paths.discrete import DiscreteSchedule, sum_of_products
from scigen.core.paths.discrete_path import DiscreteSchedulePath
from scigen.core.paths.gaussian import PREDICTION_KINDS, GaussianPath, check_kind
from scigen.core.paths.linear import LinearPath, OTCFMPath
from scigen.core.paths.location_scale import LocationScalePath
from scigen.core.paths.ve import VEPath
from scigen.core.paths.vp import VPCosine, VPLinear, VPPolynomial
from scigen.core.validation import broadcast_time

__all__ = [
    "PREDICTION_KINDS",
    "BrownianBridge",
    "DiscreteSchedule",
    "DiscreteSchedulePath",
    "GaussianPath",
    "LinearPath",
    "LocationScalePath",
    "OTCFMPath",
    "VEPath",
    "VPCosine",
    "VPLinear",
    "VPPolynomial",
    "broadcast_time",
    "check_kind",
    "flip_time",
    "reverse_velocity",
    "step_to_time",
    "sum_of_products",
    "time_to_step",
]
