"""Channel-estimation baselines for compressed observations ``y = A h + n``, ``n ~ CN(0, ζ I)``.

* :func:`ls_estimate` — least squares, the minimum-norm solution ``ĥ = A⁺ y``;
* :func:`lmmse_estimate` — ``ĥ = C Aᴴ (A C Aᴴ + ζ I)⁻¹ y`` with ``C`` the sample covariance of clean
  training channels (a genie baseline: it needs channels the SBGM models never see; research note §4.4);
* :func:`omp_estimate` — orthogonal matching pursuit over ``Φ = A D`` (scikit-learn's
  ``orthogonal_mp`` on the real representation ``[[Re Φ, −Im Φ], [Im Φ, Re Φ]]``), stopped when the
  residual energy reaches the noise energy ``M ζ``; ``ĥ = D ŝ``;
* :func:`sbl_estimate` — sparse Bayesian learning per observation (Wipf & Rao 2004, EM updates
  ``γ ← |μ|² + c``), ``ĥ = D μ``;
* :class:`CleanGMM` — a Gaussian mixture fitted to *clean* channels (scikit-learn, full covariances, on
  ``[Re h, Im h]``) with its exact conditional-mean estimator ``ĥ = Σ_k p(k|y) (m_k + C_k Âᵀ (Â C_k Âᵀ + ζ/2 I)⁻¹ (ŷ − Â m_k))``
  in the real representation (Koller et al. 2022's GMM estimator; a genie baseline too).
"""

from __future__ import annotations

import numpy as np

__all__ = ["CleanGMM", "estimate_all", "lmmse_estimate", "ls_estimate", "omp_estimate", "sbl_estimate"]


def ls_estimate(y: np.ndarray, A: np.ndarray) -> np.ndarray:
    """``ĥ = A⁺ y`` ``[B, N]``."""
    return y @ np.linalg.pinv(A).T


def lmmse_estimate(y: np.ndarray, zeta: np.ndarray, A: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """``ĥ_i = C Aᴴ (A C Aᴴ + ζ_i I)⁻¹ y_i`` ``[B, N]``."""
    M = A.shape[0]
    ACA = A @ cov @ A.conj().T
    G = ACA[None] + zeta[:, None, None] * np.eye(M)[None]
    w = np.linalg.solve(G, y[:, :, None])[:, :, 0]
    return w @ (cov @ A.conj().T).T


def _real(phi: np.ndarray) -> np.ndarray:
    return np.block([[phi.real, -phi.imag], [phi.imag, phi.real]])


def omp_estimate(y: np.ndarray, zeta: np.ndarray, A: np.ndarray, D: np.ndarray) -> np.ndarray:
    """OMP over ``Φ = A D`` (module docstring) ``[B, N]``."""
    from sklearn.linear_model import orthogonal_mp

    phi = A @ D
    M, S = phi.shape
    Pr = _real(phi)
    norms = np.linalg.norm(Pr, axis=0)
    Pn = Pr / norms
    Y = np.concatenate([y.real, y.imag], axis=1)  # [B, 2M]
    coef = np.zeros((y.shape[0], 2 * S))
    for z in np.unique(zeta):
        rows = np.flatnonzero(zeta == z)
        c = orthogonal_mp(Pn, Y[rows].T, tol=float(M * z))
        coef[rows] = (c.reshape(2 * S, -1) / norms[:, None]).T
    s = coef[:, :S] + 1j * coef[:, S:]
    return s @ D.T


def sbl_estimate(y: np.ndarray, zeta: np.ndarray, A: np.ndarray, D: np.ndarray, *, iters: int = 60) -> np.ndarray:
    """EM-SBL per observation (module docstring) ``[B, N]``."""
    import torch

    from scigen.wireless.gaussian import diag_prior_posterior

    phi = torch.as_tensor(A @ D)
    yt, zt = torch.as_tensor(y), torch.as_tensor(zeta, dtype=torch.float64)
    S = phi.shape[1]
    gamma = torch.full((y.shape[0], S), float(np.mean(np.abs(y) ** 2)) / max(1e-12, float((phi.abs() ** 2).sum(0).mean())),
                       dtype=torch.float64)
    for _ in range(iters):
        post = diag_prior_posterior(yt, phi, gamma, zt, per_sample=True)
        gamma = (post.mean[:, 0].abs() ** 2 + post.var[:, 0]).clamp_min(1e-10)
    post = diag_prior_posterior(yt, phi, gamma, zt, per_sample=True)
    return post.mean[:, 0].numpy() @ D.T


class CleanGMM:
    """A full-covariance Gaussian mixture on clean channels and its conditional-mean estimator."""

    def __init__(self, n_components: int = 8, seed: int = 0) -> None:
        self.n_components, self.seed = n_components, seed

    def fit(self, h: np.ndarray) -> CleanGMM:
        from sklearn.mixture import GaussianMixture

        X = np.concatenate([h.real, h.imag], axis=1)
        self.gmm = GaussianMixture(self.n_components, covariance_type="full", reg_covar=1e-4, random_state=self.seed,
                                   max_iter=200).fit(X)
        return self

    def estimate(self, y: np.ndarray, zeta: np.ndarray, A: np.ndarray) -> np.ndarray:
        from scipy.special import logsumexp

        Ar = _real(A)
        Yr = np.concatenate([y.real, y.imag], axis=1)
        B, M2 = Yr.shape
        N = A.shape[1]
        logp = np.zeros((B, self.n_components))
        est = np.zeros((B, self.n_components, 2 * N))
        for k in range(self.n_components):
            m, C = self.gmm.means_[k], self.gmm.covariances_[k]
            ACA = Ar @ C @ Ar.T
            G = ACA[None] + (zeta / 2)[:, None, None] * np.eye(M2)[None]
            r = Yr - Ar @ m
            L = np.linalg.cholesky(G)
            w = np.linalg.solve(G, r[:, :, None])[:, :, 0]
            logdet = 2 * np.log(np.diagonal(L, axis1=1, axis2=2)).sum(1)
            logp[:, k] = np.log(self.gmm.weights_[k]) - 0.5 * (logdet + (r * w).sum(1))
            est[:, k] = m + w @ (C @ Ar.T).T
        p = np.exp(logp - logsumexp(logp, axis=1, keepdims=True))
        hr = (p[:, :, None] * est).sum(1)
        return hr[:, :N] + 1j * hr[:, N:]


def estimate_all(model, train, test, methods=("LS", "OMP", "SBL", "LMMSE", "GMM_clean")) -> dict[str, float]:
    """NMSE (dB) on ``test`` (observations + true ``h``) of ``model.estimate`` (key ``"SBGM"``) and of each
    baseline in ``methods``; ``train`` supplies the clean channels of the genie baselines (LMMSE, GMM_clean)."""
    from scigen.wireless.channels import as_observations, channel_matrix
    from scigen.wireless.metrics import nmse_db

    y, zeta, A = as_observations(test, "test")
    h = channel_matrix(test["h"])
    D = model.dictionary().matrix.numpy()
    out = {f"SBGM-{model.config.model.upper()}": nmse_db(model.estimate(test).values.reshape(h.shape), h)}
    H_train = channel_matrix(train["h"])
    for m in methods:
        if m == "LS":
            est = ls_estimate(y, A)
        elif m == "LMMSE":
            est = lmmse_estimate(y, zeta, A, H_train.T @ H_train.conj() / H_train.shape[0])
        elif m == "OMP":
            est = omp_estimate(y, zeta, A, D)
        elif m == "SBL":
            est = sbl_estimate(y, zeta, A, D)
        elif m == "GMM_clean":
            est = CleanGMM(model.config.n_components).fit(H_train).estimate(y, zeta, A)
        else:
            raise ValueError(f"unknown baseline {m!r}")
        out[m] = nmse_db(est, h)
    return out
