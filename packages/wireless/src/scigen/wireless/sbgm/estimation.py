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
from scigen.wireless.sbgm.csgmm import CSGMMNet, default_chunk_size, responsibilities
from scigen.wireless.sbgm.csvae import CSVAENet

__all__ = ["csgmm_coefficients", "csvae_coefficients"]


@torch.no_grad()
def csgmm_coefficients(net: CSGMMNet, y: Tensor, zeta: Tensor, phi: Tensor, *, chunk_size: int | None = None) -> Tensor:
    """``ŝ [B, S] = Σ_k p(k|y) μ_k(y)``, with ``μ_k(y) = γ_k ⊙ Φᴴ C_k⁻¹ y`` written through the cached
    per-component eigendecomposition (:meth:`CSGMMNet.factorisation`): ``ŝ_i = Σ_{k,m} r_ik (U_kᴴ y_i /
    (λ_k + ζ_i))_m · γ_k ⊙ conj(U_kᴴ Φ)_m``, one ``[b, K·M] @ [K·M, S]`` product per chunk of observations
    (``chunk_size`` rows; ``None``: bounded by memory)."""
    fact = net.factorisation(phi)
    B, M = y.shape
    K, S = net.gamma.shape
    est = fact.estimator
    step = int(chunk_size) if chunk_size else default_chunk_size(K, M)
    out = []
    for lo in range(0, B, step):
        ur, ui, inv, ll = fact.project(y[lo : lo + step], zeta[lo : lo + step])
        w = responsibilities(ll, net.log_pi)[:, :, None] * inv  # r_ik / d_ik
        s = torch.cat([(ur * w).flatten(1), (ui * w).flatten(1)], 1) @ est  # [Re ŝ, Im ŝ]
        out.append(torch.complex(s[:, :S], s[:, S:]))
    return torch.cat(out)


@torch.no_grad()
def csvae_coefficients(net: CSVAENet, y: Tensor, zeta: Tensor, phi: Tensor) -> Tensor:
    """``ŝ [B, S]``: the posterior mean of ``s`` given ``y`` and ``z = μ_φ(y)``."""
    mu, _ = net.encode(y, zeta)
    gamma = torch.exp(net.log_gamma(mu)).double()
    return diag_prior_posterior(y, phi, gamma, zeta, per_sample=True).mean[:, 0]
