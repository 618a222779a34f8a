"""Channel estimation with a trained SBGM: the conditional mean of the sparse coefficients.

CSGMM (Böck et al., NeurIPS 2024, Eq. 9; ICML 2025, Sec. 3.4): ``ŝ = Σ_k p(k | y) μ_k(y)`` with
``μ_k(y) = diag(γ_k) Φᴴ C_k⁻¹ y`` — the MMSE estimate of ``s`` under the mixture prior. CSVAE: ``ŝ =
μ_{s | y, z = μ_φ(y)}`` (the encoder's mean plugged into the Gaussian posterior). Either way
``ĥ = D ŝ``, with the dictionary of the configuration the observations come from (no retraining).
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.wireless.gaussian import diag_prior_posterior
from scigen.wireless.sbgm.csgmm import CSGMMNet, responsibilities
from scigen.wireless.sbgm.csvae import CSVAENet

__all__ = ["csgmm_coefficients", "csvae_coefficients"]


@torch.no_grad()
def csgmm_coefficients(net: CSGMMNet, y: Tensor, zeta: Tensor, phi: Tensor) -> Tensor:
    """``ŝ [B, S] = Σ_k p(k|y) μ_k(y)``."""
    post = diag_prior_posterior(y, phi, net.gamma, zeta)
    r = responsibilities(post.log_lik, net.log_pi)
    return (r.to(post.mean.dtype)[:, :, None] * post.mean).sum(1)


@torch.no_grad()
def csvae_coefficients(net: CSVAENet, y: Tensor, zeta: Tensor, phi: Tensor) -> Tensor:
    """``ŝ [B, S]``: the posterior mean of ``s`` given ``y`` and ``z = μ_φ(y)``."""
    mu, _ = net.encode(y, zeta)
    gamma = torch.exp(net.log_gamma(mu)).double()
    return diag_prior_posterior(y, phi, gamma, zeta, per_sample=True).mean[:, 0]
