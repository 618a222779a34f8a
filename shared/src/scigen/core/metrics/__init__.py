"""Distribution distances and probabilistic-forecast scores, defined once for every domain.

Each docstring gives the exact formula and says what is returned (``W2`` vs ``W2²``, biased vs
unbiased MMD², fractions vs percent). Torch tensors in; 0-d tensors (or per-item tensors where
stated) out. POT is imported lazily.
"""

from scigen.core.metrics.crps import crps_ensemble, crps_sum
from scigen.core.metrics.energy import energy_distance
from scigen.core.metrics.image import psnr, ssim
from scigen.core.metrics.mmd import linear_mmd, mmd_rbf, rbf_bandwidths
from scigen.core.metrics.multivariate import energy_score, variogram_score
from scigen.core.metrics.quantile import picp, qice, quantile_loss
from scigen.core.metrics.wasserstein import sinkhorn_cost, w1, w2, w2_squared

__all__ = [
    "crps_ensemble",
    "crps_sum",
    "energy_distance",
    "energy_score",
    "linear_mmd",
    "mmd_rbf",
    "picp",
    "psnr",
    "qice",
    "quantile_loss",
    "rbf_bandwidths",
    "sinkhorn_cost",
    "ssim",
    "variogram_score",
    "w1",
    "w2",
    "w2_squared",
]
