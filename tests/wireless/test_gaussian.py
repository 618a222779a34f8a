"""The shared linear algebra against closed forms: the circular complex Gaussian density against scipy's
real multivariate normal, and the posterior of s against the explicit Bayesian formulas."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import multivariate_normal

from scigen.wireless.gaussian import cn_log_density, diag_prior_posterior


def _problem(seed=0, B=5, M=4, S=7, K=3):
    rng = np.random.default_rng(seed)
    phi = rng.standard_normal((M, S)) + 1j * rng.standard_normal((M, S))
    y = rng.standard_normal((B, M)) + 1j * rng.standard_normal((B, M))
    gamma = rng.uniform(0.05, 2.0, (K, S))
    zeta = rng.uniform(0.1, 1.0, B)
    return phi, y, gamma, zeta


def _real_cn_logpdf(y, C):
    """log CN(y; 0, C) as the real Gaussian of [Re y, Im y] with covariance ½[[Re C, −Im C], [Im C, Re C]]."""
    R = 0.5 * np.block([[C.real, -C.imag], [C.imag, C.real]])
    return multivariate_normal(mean=np.zeros(len(R)), cov=R).logpdf(np.concatenate([y.real, y.imag]))


def test_cn_log_density_equals_the_real_gaussian_of_scipy():
    phi, y, gamma, zeta = _problem()
    C = phi @ np.diag(gamma[0]) @ phi.conj().T + zeta[0] * np.eye(4)
    got = cn_log_density(torch.as_tensor(y[0]), torch.as_tensor(C))
    assert float(got) == pytest.approx(_real_cn_logpdf(y[0], C), rel=1e-10)


@pytest.mark.parametrize("per_sample", [False, True])
def test_posterior_matches_the_explicit_formulas(per_sample):
    phi, y, gamma, zeta = _problem(1)
    if per_sample:
        gamma = np.random.default_rng(2).uniform(0.05, 2.0, (y.shape[0], phi.shape[1]))
    post = diag_prior_posterior(torch.as_tensor(y), torch.as_tensor(phi), torch.as_tensor(gamma),
                                torch.as_tensor(zeta), per_sample=per_sample)
    for i in range(y.shape[0]):
        for k in range(1 if per_sample else gamma.shape[0]):
            g = gamma[i] if per_sample else gamma[k]
            C = phi @ np.diag(g) @ phi.conj().T + zeta[i] * np.eye(len(y[i]))
            Ci = np.linalg.inv(C)
            mu = np.diag(g) @ phi.conj().T @ Ci @ y[i]
            cov = np.diag(g) - np.diag(g) @ phi.conj().T @ Ci @ phi @ np.diag(g)
            # the same posterior from the precision form: (Φᴴ Φ / ζ + Γ⁻¹)⁻¹, mean Σ Φᴴ y / ζ
            prec = phi.conj().T @ phi / zeta[i] + np.diag(1 / g)
            cov2 = np.linalg.inv(prec)
            np.testing.assert_allclose(cov, cov2, atol=1e-9)
            np.testing.assert_allclose(post.mean[i, k].numpy(), mu, rtol=1e-8, atol=1e-10)
            np.testing.assert_allclose(post.var[i, k].numpy(), np.real(np.diag(cov2)), rtol=1e-8, atol=1e-10)
            assert float(post.log_lik[i, k]) == pytest.approx(_real_cn_logpdf(y[i], C), rel=1e-9)


def test_evidence_only_and_noise_per_sample():
    phi, y, gamma, zeta = _problem(3)
    t = [torch.as_tensor(a) for a in (y, phi, gamma, zeta)]
    full = diag_prior_posterior(*t)
    light = diag_prior_posterior(*t, moments=False)
    assert light.mean is None
    torch.testing.assert_close(full.log_lik, light.log_lik)
    # a larger noise variance flattens the evidence of the same observation: different values per sample
    z2 = t[3].clone()
    z2[0] *= 10
    assert not torch.allclose(diag_prior_posterior(t[0], t[1], t[2], z2).log_lik[0], full.log_lik[0])
