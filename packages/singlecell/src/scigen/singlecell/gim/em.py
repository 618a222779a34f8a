"""MAP/EM training of GIM with the linear-Gaussian SCM: an exact E-step over ``(I, ψ)`` per context.

Ours (the paper's approximation of the marginal likelihood could not be read, ``shared/research/
singlecell.md`` §1.2). Given θ the SCM's log-likelihood of a context factorises over variables
(:func:`scigen.singlecell.gim.scm.gaussian_loglik`: ``Σ_j log N(e_j; 0, σ̃_j²) + log|det A|`` with
``e = xA − b − I⊙ψ``), so every ``(I_kj, ψ_kj)`` touches one term only. With the head's prior
``I_kj ~ Bernoulli(π_kj)`` (or one target ``~ Categorical(π_k)``) and ``ψ_kj ~ N(μ_kj, s_kj²)`` the
posterior is closed form (conjugate Gaussian): for ``I_kj = 1``

    P = n/σ̃² + 1/s²,  m = (R₁/σ̃² + μ/s²)/P,  log Z₁ − log Z₀ = ℓ₁(m) − ℓ₀ − (m − μ)²/(2s²) − ½ log(s²P),

with ``R₁ = Σ_i e_ij`` at ``ψ = 0``; ``q_kj = σ(logit π_kj + log Z₁ − log Z₀)`` (a softmax over ``j``
for the categorical prior). The **E-step** computes ``(q, m, 1/P)`` without gradient; the **M-step**
is one optimiser step on the expected complete-data log joint

    Q = Σ_j (1 − q)(ℓ₀ + log(1 − π)) + q (E ℓ₁(ψ) + log π + E log N(ψ; μ, s²)) + n log|det A|,

whose gradient at the current θ, φ equals that of the exact marginal log-likelihood (Fisher's identity;
tested). ``use_head=False`` (the per-context baseline) replaces the head's prior by a fixed one
(``per_context_prior``: target probability, shift scale, zero mean). With ``noise_intervention`` the
targets' log noise scale is the head's point value (no posterior over it).

Warm-up (``em_warmup``, ours): with the head's prior, EM can settle on explaining a descendant's shift as
a second target (the head learns the E-step's own probabilities, so nothing penalises it; measured: SHD
13 on the synthetic screen). During the first ``em_warmup`` fraction of the steps the E-step uses the
fixed per-context prior instead, θ is learned under it, and the head is fitted to that posterior
(:func:`head_fit`); afterwards full EM continues from there.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor
from torch.nn.functional import logsigmoid

__all__ = ["em_terms", "estep_suffstats", "head_fit"]


def estep_suffstats(w: Tensor, b: Tensor, n: Tensor, s1: Tensor, s2: Tensor) -> tuple[Tensor, Tensor]:
    """``R₁ = Σ_i e_ij`` and ``R₂ = Σ_i e_ij²`` ``[K, d]`` of the residuals ``e = xA − b`` (no intervention)."""
    d = w.shape[-1]
    a = torch.eye(d, dtype=w.dtype, device=w.device) - w
    xa = s1 @ a
    quad = torch.einsum("ij,kil,lj->kj", a, s2, a)
    return xa - n[:, None] * b, quad - 2 * xa * b + n[:, None] * b * b


def em_terms(w: Tensor, b: Tensor, log_sigma: Tensor, n: Tensor, s1: Tensor, s2: Tensor, logits: Tensor, mu: Tensor,
             log_s: Tensor, logscale: Tensor, off: Tensor, prior: str) -> tuple[Tensor, dict[str, Tensor]]:
    """``(Q [K], posterior)`` for contexts with sufficient statistics ``n, s1, s2`` under the prior
    ``(logits, μ, log s, ψ_logscale) [K, d]``; ``off [K, 1]`` is 0 for control contexts (``I = 0``).
    ``posterior``: ``q`` (P(target)), ``m`` (posterior mean of ψ given a target), ``log_marginal``
    (the exact ``log p(D_k)``, for tests and monitoring)."""
    r1, r2 = estep_suffstats(w, b, n, s1, s2)
    nn_ = n[:, None]
    sig2_0 = torch.exp(2 * log_sigma).expand_as(r1)
    sig2_1 = torch.exp(2 * (log_sigma + logscale))
    s2p = torch.exp(2 * log_s)
    half_log2pi = 0.5 * math.log(2 * math.pi)
    ell0 = -0.5 * r2 / sig2_0 - nn_ * (0.5 * torch.log(sig2_0) + half_log2pi)

    def ell1(psi: Tensor) -> Tensor:
        return -0.5 * (r2 - 2 * psi * r1 + nn_ * psi * psi) / sig2_1 - nn_ * (0.5 * torch.log(sig2_1) + half_log2pi)

    prec = nn_ / sig2_1 + 1 / s2p
    m = (r1 / sig2_1 + mu / s2p) / prec
    log_z1 = ell1(m) - 0.5 * (m - mu) ** 2 / s2p - 0.5 * torch.log(s2p * prec)
    delta = log_z1 - ell0
    logdet = n * torch.linalg.slogdet(torch.eye(w.shape[-1], dtype=w.dtype, device=w.device) - w)[1]
    if prior == "categorical":
        log_pi = torch.log_softmax(logits, -1)
        log_not = torch.zeros_like(log_pi)
        post = log_pi + delta
        q = torch.softmax(post, -1)
        marg = torch.logsumexp(post, -1) * off[:, 0] + ell0.sum(-1) + logdet
    else:
        log_pi, log_not = logsigmoid(logits), logsigmoid(-logits)
        q = torch.sigmoid(logits + delta)
        marg = (torch.logaddexp(log_not + ell0, log_pi + log_z1) * off + ell0 * (1 - off)).sum(-1) + logdet
    q = (q * off).detach()
    m_d, v_d = m.detach(), (1 / prec).detach()
    e_ell1 = ell1(m_d) - 0.5 * nn_ * v_d / sig2_1
    e_logn = -0.5 * ((m_d - mu) ** 2 + v_d) / s2p - 0.5 * torch.log(s2p) - half_log2pi
    if prior == "categorical":
        prior_t = (q * log_pi).sum(-1) * off[:, 0]
        fit = ((1 - q) * ell0 + q * (e_ell1 + e_logn)).sum(-1)
    else:
        fit = ((1 - q) * (ell0 + log_not * off) + q * (e_ell1 + log_pi + e_logn)).sum(-1)
        prior_t = 0.0
    return fit + prior_t + logdet, {"q": q, "m": m_d, "v": v_d, "log_marginal": marg}


def head_fit(logits: Tensor, mu: Tensor, log_s: Tensor, post: dict[str, Tensor], off: Tensor, prior: str) -> Tensor:
    """``E_q[log p_φ(I, ψ | γ)]`` ``[K]`` of the head under a posterior ``post`` (``q, m, v``) from another prior
    (the warm-up of :func:`scigen.singlecell.gim.objective.gim_loss`: the head is fitted to the E-step of the
    fixed per-context prior while θ is learned under it)."""
    q, m, v = post["q"], post["m"], post["v"]
    s2p = torch.exp(2 * log_s)
    e_logn = -0.5 * ((m - mu) ** 2 + v) / s2p - 0.5 * torch.log(s2p) - 0.5 * math.log(2 * math.pi)
    if prior == "categorical":
        return ((q * torch.log_softmax(logits, -1)).sum(-1) + (q * e_logn).sum(-1)) * off[:, 0]
    return ((q * (logsigmoid(logits) + e_logn) + (1 - q) * logsigmoid(-logits)) * off).sum(-1)
