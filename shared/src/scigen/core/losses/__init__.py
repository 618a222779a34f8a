"""Training losses (t = 0 data, t = 1 noise): denoising, flow matching, score matching, SF2M,
consistency training, loss weightings, time samplers and masked reductions.

All return scalar means over valid entries (``mask``: boolean, broadcastable, True = counts).
"""

from scigen.core.losses.consistency import (
    consistency_scalings,
    consistency_training_loss,
    ict_num_scales,
    ict_step_probabilities,
    ict_step_weights,
    karras_sigmas,
    pseudo_huber,
)
from scigen.core.losses.denoising import denoising_loss, flow_matching_loss
from scigen.core.losses.reductions import masked_mean
from scigen.core.losses.score_matching import score_matching_loss, sf2m_loss
from scigen.core.losses.time_samplers import (
    TIME_SAMPLERS,
    antithetic_times,
    edm_lognormal_times,
    logit_normal_times,
    sample_times,
    stratified_times,
    uniform_times,
)
from scigen.core.losses.weighting import WEIGHTINGS, loss_weight

__all__ = [
    "TIME_SAMPLERS",
    "WEIGHTINGS",
    "antithetic_times",
    "consistency_scalings",
    "consistency_training_loss",
    "denoising_loss",
    "edm_lognormal_times",
    "flow_matching_loss",
    "ict_num_scales",
    "ict_step_probabilities",
    "ict_step_weights",
    "karras_sigmas",
    "logit_normal_times",
    "loss_weight",
    "masked_mean",
    "pseudo_huber",
    "sample_times",
    "score_matching_loss",
    "sf2m_loss",
    "stratified_times",
    "uniform_times",
]
