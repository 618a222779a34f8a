"""Circular complex Gaussians with a sparse (diagonal) prior: the linear algebra every SBGM part shares.

Model (Böck et al., ICML 2025, Sec. 3; Wipf & Rao 2004 for SBL): ``y = Φ s + n`` with ``Φ = A D``
``[M, S]``, ``s ~ CN(0, diag γ)`` and ``n ~ CN(0, ζ I)``. Then ``y ~ CN(0, C)`` with
``C = Φ diag(γ) Φᴴ + ζ I`` and ``log CN(y; 0, C) = −M log π − log det C − yᴴ C⁻¹ y``; the posterior of
``s`` is Gaussian with mean ``μ = diag(γ) Φᴴ C⁻¹ y`` and covariance ``diag(γ) − diag(γ) Φᴴ C⁻¹ Φ diag(γ)``
(the matrix-inversion lemma), of which EM needs only the diagonal ``c = γ − γ² ⊙ diag(Φᴴ C⁻¹ Φ)``.

Everything is batched: ``y [B, M]``, ``zeta [B]`` (one noise variance per observation), ``gamma
[K, S]`` (K prior components, e.g. the mixture's) or ``[B, S]`` with ``per_sample=True`` (SBL, CSVAE).
Shared components go through one eigendecomposition each; per-observation priors through Cholesky
factors, in blocks whose ``[b, M, S]`` intermediates stay within :data:`BLOCK_ENTRIES` entries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

__all__ = ["BLOCK_ENTRIES", "Posterior", "cn_log_density", "diag_prior_posterior"]

#: at most this many complex entries in one ``[b, K, M, S]`` intermediate (memory bound of a block)
BLOCK_ENTRIES = 4_000_000


@dataclass
class Posterior:
    """Per observation and component: ``log_lik [B, K]`` (``log CN(y; 0, C)``), the posterior mean
    ``mean [B, K, S]`` and the posterior variances ``var [B, K, S]`` (diagonal) of ``s``."""

    log_lik: Tensor
    mean: Tensor | None
    var: Tensor | None


def cn_log_density(y: Tensor, cov: Tensor) -> Tensor:
    """``log CN(y; 0, cov) = −M log π − log det cov − yᴴ cov⁻¹ y`` for ``y [..., M]`` and Hermitian
    positive-definite ``cov [..., M, M]`` (broadcast). Real-valued result ``[...]``."""
    L = torch.linalg.cholesky(cov)
    w = torch.linalg.solve_triangular(L, y.unsqueeze(-1), upper=False).squeeze(-1)
    logdet = 2.0 * torch.log(torch.diagonal(L, dim1=-2, dim2=-1).real).sum(-1)
    m = y.shape[-1]
    return -m * math.log(math.pi) - logdet - (w.abs() ** 2).sum(-1)


def diag_prior_posterior(y: Tensor, phi: Tensor, gamma: Tensor, zeta: Tensor, *, per_sample: bool = False,
                         moments: bool = True) -> Posterior:
    """Evidence and posterior of ``s`` under ``y = Φ s + n`` for every observation and component.

    Args:
        y: ``[B, M]`` complex observations.
        phi: ``[M, S]`` complex effective dictionary ``A D``.
        gamma: ``[K, S]`` prior variances (``per_sample=False``: every observation against every
            component) or ``[B, S]`` (``per_sample=True``: one prior per observation; ``K = 1`` in the result).
        zeta: ``[B]`` noise variances (> 0).
        moments: also return the posterior mean and variances (else only ``log_lik``).

    Shared components use one eigendecomposition ``Φ diag(γ_k) Φᴴ = U_k Λ_k U_kᴴ`` per component, so
    ``C_ik = U_k (Λ_k + ζ_i I) U_kᴴ`` for every noise level at the cost of a diagonal; a prior per
    observation uses a Cholesky factor per observation (differentiable, for the CSVAE objective).
    """
    if per_sample:
        return _per_sample(y, phi, gamma, zeta, moments)
    M = y.shape[1]
    P = torch.einsum("ms,ks,ns->kmn", phi, gamma.to(phi.dtype), phi.conj())  # Φ diag γ_k Φᴴ
    lam, U = torch.linalg.eigh(0.5 * (P + P.mH))
    lam = lam.clamp_min(0.0)  # PSD up to round-off
    Uh = U.mH  # [K, M, M]
    uy = torch.einsum("kmn,bn->bkm", Uh, y)  # U_kᴴ y
    d = lam[None] + zeta[:, None, None]  # [B, K, M] eigenvalues of C_ik
    ll = -M * math.log(math.pi) - torch.log(d).sum(-1) - ((uy.abs() ** 2) / d).sum(-1)
    if not moments:
        return Posterior(ll, None, None)
    V = Uh @ phi  # [K, M, S]
    w = uy / d  # U_kᴴ C⁻¹ y
    mean = gamma[None].to(y.dtype) * torch.einsum("kms,bkm->bks", V.conj(), w)
    quad = torch.einsum("kms,bkm->bks", V.abs() ** 2, 1.0 / d)  # diag(Φᴴ C⁻¹ Φ)
    var = (gamma[None] - gamma[None] ** 2 * quad).clamp_min(0.0)
    return Posterior(ll, mean, var)


def _per_sample(y: Tensor, phi: Tensor, gamma: Tensor, zeta: Tensor, moments: bool) -> Posterior:
    B, M = y.shape
    S = phi.shape[1]
    step = max(1, BLOCK_ENTRIES // max(1, M * S))
    eye = torch.eye(M, dtype=y.dtype, device=y.device)
    lls, means, vars_ = [], [], []
    for lo in range(0, B, step):
        yb, zb, gb = y[lo : lo + step], zeta[lo : lo + step], gamma[lo : lo + step]
        C = torch.einsum("ms,bs,ns->bmn", phi, gb.to(phi.dtype), phi.conj()) + zb.to(y.dtype)[:, None, None] * eye
        L = torch.linalg.cholesky(0.5 * (C + C.mH))
        Linv = torch.linalg.inv(L)  # batched triangular solves are slow on CPU; the inverse of L is not
        w = (Linv @ yb[:, :, None])[:, :, 0]
        logdet = 2.0 * torch.log(torch.diagonal(L, dim1=-2, dim2=-1).real).sum(-1)
        lls.append(-M * math.log(math.pi) - logdet - (w.abs() ** 2).sum(-1))
        if moments:
            V = Linv @ phi  # [b, M, S]
            means.append(gb.to(y.dtype) * (V.conj() * w[:, :, None]).sum(1))
            vars_.append((gb - gb**2 * (V.abs() ** 2).sum(1)).clamp_min(0.0))
    ll = torch.cat(lls)[:, None]
    if not moments:
        return Posterior(ll, None, None)
    return Posterior(ll, torch.cat(means)[:, None], torch.cat(vars_)[:, None])
