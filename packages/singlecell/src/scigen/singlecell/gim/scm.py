"""The causal-model backends of GIM: a linear-Gaussian SCM (exact likelihood) and a stationary linear SDE.

Provenance. GIM (Schneider, Lorch, Kilbertus, Schölkopf & Krause, ICML 2025) learns "a jointly-estimated
causal model" whose atomic interventions are drawn from a generative model of perturbation features; the
paper's model class could not be read here (``shared/research/singlecell.md`` §1.2). Both backends below
are **ours**, chosen from that note's blueprint:

* **Linear-Gaussian SCM** (ours; the classic linear SEM): ``x = Wᵀx + b + δ + σ̃ ⊙ ε``, ``ε ~ N(0, I)``,
  with ``δ = I ⊙ ψ_shift`` and ``σ̃ = σ ⊙ exp(I ⊙ ψ_logscale)`` (shift / noise-scale interventions on the
  targets ``I``). With ``A = I − W`` every cell has the exact density
  ``log p(x) = Σ_j log N(e_j; 0, σ̃_j²) + log|det A|``, ``e = xA − b − δ`` (change of variables; the
  determinant is 1 on a DAG). :func:`gaussian_loglik` evaluates it from per-context sufficient statistics
  ``(n, Σx, Σxxᵀ)``, so a context of any size costs ``O(d³)``.
* **Acyclicity**: NOTEARS' trace exponential ``h(W) = tr(exp(W ∘ W)) − d`` (Zheng et al., NeurIPS 2018,
  eq. 7), zero exactly on DAGs.
* **Stationary linear SDE** (after stadion, Lorch, Krause & Schölkopf, AISTATS 2024; the code was read,
  not copied): ``dx = (Mx + b + δ) dt + diag(σ̃) dB`` with ``M = Wᵀ − diag(exp(a))``. It is fitted by a
  kernel deviation from stationarity (:func:`kds`): the stationary density ``p`` satisfies
  ``E_p[L f(x)] = 0`` for the generator ``L f = f'·drift + ½ tr(σ̃² ∇²f)``; we take the test functions
  ``f = k(·, z_j)`` (RBF) centred at the context's own cells and average the squared means
  (**our** V-statistic; stadion's exact estimator was not reproduced). Its stationary law is Gaussian
  ``N(−M⁻¹(b+δ), Σ)`` with ``MΣ + ΣMᵀ + diag(σ̃²) = 0`` (:func:`lyapunov`), which is what prediction draws.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["gaussian_loglik", "kds", "lyapunov", "notears_h", "scm_moments", "sde_moments", "shd"]


def notears_h(w: Tensor) -> Tensor:
    """NOTEARS acyclicity ``tr(exp(W∘W)) − d`` (Zheng et al. 2018, eq. 7): ``0`` iff ``W`` is a DAG."""
    return torch.linalg.matrix_exp(w * w).diagonal().sum() - w.shape[-1]


def gaussian_loglik(w: Tensor, b: Tensor, log_sigma: Tensor, n: Tensor, s1: Tensor, s2: Tensor,
                    shift: Tensor, log_scale: Tensor) -> Tensor:
    """Exact summed log-likelihood of whole contexts under the linear-Gaussian SCM.

    Args:
        w [d, d], b [d], log_sigma [d]: the SCM (``x_j = Σ_i W_ij x_i + b_j + ...``).
        n [K], s1 [K, d], s2 [K, d, d]: cell count, ``Σ_i x_i`` and ``Σ_i x_i x_iᵀ`` per context.
        shift, log_scale [..., K, d]: the intervention ``δ = I ⊙ ψ_shift`` and ``I ⊙ ψ_logscale``
            (leading dims, e.g. Monte Carlo samples, broadcast).

    Returns ``[..., K]``: ``Σ_cells log p(x | intervention)`` (see the module docstring).
    """
    d = w.shape[-1]
    a = torch.eye(d, dtype=w.dtype, device=w.device) - w
    c = b + shift                                       # [..., K, d]
    sig2 = torch.exp(2 * (log_sigma + log_scale))      # [..., K, d]
    quad = torch.einsum("ij,kil,lj->kj", a, s2, a)      # (Aᵀ S A)_jj   [K, d]
    cross = (s1 @ a) * c                                # (Σx A)_j c_j  [..., K, d]
    sq = (quad - 2 * cross + n[:, None] * c * c) / sig2
    logdet = torch.linalg.slogdet(a)[1]
    return (-0.5 * sq.sum(-1) - n * (0.5 * torch.log(sig2).sum(-1) + 0.5 * d * math.log(2 * math.pi))
            + n * logdet)


def scm_moments(w: Tensor, b: Tensor, log_sigma: Tensor, shift: Tensor, log_scale: Tensor) -> tuple[Tensor, Tensor]:
    """Mean ``[..., d]`` and covariance ``[..., d, d]`` of the intervened SCM: ``x = (b + δ + σ̃ε) A⁻¹``."""
    d = w.shape[-1]
    a_inv = torch.linalg.inv(torch.eye(d, dtype=w.dtype, device=w.device) - w)
    mean = (b + shift) @ a_inv
    sig2 = torch.exp(2 * (log_sigma + log_scale))
    cov = a_inv.T @ (sig2[..., :, None] * a_inv)
    return mean, cov


def lyapunov(m: Tensor, q: Tensor) -> Tensor:
    """The ``Σ`` solving ``MΣ + ΣMᵀ + Q = 0`` (``M`` stable), by the Kronecker form
    ``(I⊗M + M⊗I) vec Σ = −vec Q``; batched over leading dims of ``q``."""
    d = m.shape[-1]
    eye = torch.eye(d, dtype=m.dtype, device=m.device)
    m = m.contiguous()
    k = torch.kron(eye, m) + torch.kron(m, eye)
    # column-major vec of Q = row-major flatten of Qᵀ
    vec = torch.linalg.solve(k, -q.transpose(-1, -2).reshape(*q.shape[:-2], d * d, 1))
    sol = vec.squeeze(-1).reshape(*q.shape[:-2], d, d).transpose(-1, -2)
    return 0.5 * (sol + sol.transpose(-1, -2))


def sde_drift_matrix(w: Tensor, log_decay: Tensor) -> Tensor:
    """``M = Wᵀ − diag(exp(a))`` acting on column vectors (drift ``Mx + c``)."""
    return w.T - torch.diag(torch.exp(log_decay))


def sde_moments(w: Tensor, log_decay: Tensor, b: Tensor, log_sigma: Tensor, shift: Tensor,
                log_scale: Tensor) -> tuple[Tensor, Tensor]:
    """Stationary mean and covariance of the linear SDE (module docstring), batched over ``shift``."""
    m = sde_drift_matrix(w, log_decay)
    c = b + shift
    mean = -torch.linalg.solve(m, c.unsqueeze(-1)).squeeze(-1)
    sig2 = torch.exp(2 * (log_sigma + log_scale))
    q = torch.diag_embed(sig2)
    return mean, lyapunov(m, q)


def kds(x: Tensor, mask: Tensor, m: Tensor, c: Tensor, sig2: Tensor, bandwidth: float | Tensor) -> Tensor:
    """Kernel deviation from stationarity of cells ``x [K, n, d]`` (``mask [K, n]``) under
    ``dx = (Mx + c_k) dt + diag(sqrt(sig2_k)) dB`` (``c, sig2 [..., K, d]``).

    For the RBF test functions ``k(x, z) = exp(−‖x − z‖² / 2h²)`` the generator is
    ``L k(x, z) = k · [−(x − z)·f(x)/h² + ½ Σ_j σ̃_j² ((x_j − z_j)²/h⁴ − 1/h²)]``; the statistic is
    ``mean_z (mean_x L k(x, z))²`` with ``x, z`` the context's cells (ours, see the module docstring).
    Returns ``[..., K]``, zero in expectation when the cells are stationary for the SDE.
    """
    h2 = torch.as_tensor(bandwidth, dtype=x.dtype, device=x.device) ** 2
    drift = x @ m.T + c.unsqueeze(-2)                          # [..., K, n, d]
    diff = x.unsqueeze(-2) - x.unsqueeze(-3)                   # [K, n(x), n(z), d]
    kern = torch.exp(-(diff * diff).sum(-1) / (2 * h2))        # [K, n, n]
    first = -(diff * drift.unsqueeze(-2)).sum(-1) / h2         # [..., K, n, n]
    second = 0.5 * (diff * diff * sig2[..., None, None, :]).sum(-1) / (h2 * h2)
    second = second - 0.5 * sig2.sum(-1)[..., None, None] / h2
    gen = kern * (first + second)                              # L k(x_i, z_j)
    mx = mask.to(x.dtype)
    cnt = mx.sum(-1).clamp_min(1)
    mean_over_x = (gen * mx[..., :, None]).sum(-2) / cnt[..., None]   # [..., K, n(z)]
    return ((mean_over_x ** 2) * mx).sum(-1) / cnt


def shd(w_est: Tensor, w_true: Tensor, threshold: float = 0.0) -> int:
    """Structural Hamming distance between the graphs ``|W| > threshold`` (edge ``i → j`` when
    ``W_ij ≠ 0``): additions + deletions + reversals, a reversal counted once (the cdt convention)."""
    a = (w_est.abs() > threshold)
    t = (w_true.abs() > 0)
    a = a & ~torch.eye(a.shape[0], dtype=torch.bool)
    t = t & ~torch.eye(t.shape[0], dtype=torch.bool)
    diff = a != t
    # a pair {i, j} that differs in either direction counts once (a reversal differs in both)
    pair = diff | diff.T
    return int(torch.triu(pair, diagonal=1).sum())
