"""CSGMM's vectorised EM and estimator (issue 36.2) against a direct transcription of the paper's equations,
and chunked EM (issue 33.4) against full-batch EM.

The reference below forms every ``C_ik = Φ diag(γ_k) Φᴴ + ζ_i I`` densely, solves with it, and writes the
E-/M-steps of Böck et al. (ICML 2025, Sec. 3.1; NeurIPS 2024, Alg. 1) term by term:
``r_ik ∝ π_k CN(y_i; 0, C_ik)``, ``μ_ik = γ_k ⊙ Φᴴ C_ik⁻¹ y_i``, ``c_ik = γ_k − γ_k² ⊙ diag(Φᴴ C_ik⁻¹ Φ)``,
``γ_k = Σ_i r_ik (|μ_ik|² + c_ik) / Σ_i r_ik`` (floored), ``π_k = Σ_i r_ik / n``; the estimate is
``ŝ_i = Σ_k r_ik μ_ik``. It shares no code with the package's E-step (only the Kronecker M-step, which is
tested on its own in test_csgmm.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from scigen.wireless.dictionaries import Dictionary
from scigen.wireless.pilots import observe, pilot_matrix
from scigen.wireless.sbgm.csgmm import CSGMMNet, TensorChunks, _kron_m_step, em_step, init_csgmm, mean_log_lik
from scigen.wireless.sbgm.estimation import csgmm_coefficients
from scigen.wireless.synthetic import generate_channels


def _obs(n_antennas=8, n_subcarriers=1, n_symbols=1, n_pilots=6, n=90, seed=0):
    ch = generate_channels(n, n_antennas=n_antennas, n_subcarriers=n_subcarriers, n_symbols=n_symbols, seed=seed)
    N = n_antennas * n_subcarriers * n_symbols
    ds = observe(ch, pilot_matrix(N, n_pilots, "gaussian", seed=1), (0.0, 20.0), seed=2)
    return (torch.as_tensor(ds["y"].values), torch.as_tensor(ds["noise_var"].values),
            torch.as_tensor(ds["A"].values))


def _reference_posteriors(y, zeta, phi, gamma, log_pi):
    """(log p(y_i), r [B, K], μ [B, K, S], c [B, K, S]) from dense per-(i, k) covariances."""
    B, M = y.shape
    K = gamma.shape[0]
    eye = torch.eye(M, dtype=torch.complex128)
    ll = torch.empty(B, K, dtype=torch.float64)
    mu = torch.empty(B, K, phi.shape[1], dtype=torch.complex128)
    c = torch.empty(B, K, phi.shape[1], dtype=torch.float64)
    for k in range(K):
        G = torch.diag(gamma[k].to(torch.complex128))
        for i in range(B):
            C = phi @ G @ phi.mH + zeta[i] * eye
            Ci_y = torch.linalg.solve(C, y[i])
            ll[i, k] = (-M * math.log(math.pi) - torch.linalg.slogdet(C).logabsdet - (y[i].conj() @ Ci_y).real)
            mu[i, k] = gamma[k] * (phi.mH @ Ci_y)
            c[i, k] = gamma[k] - gamma[k] ** 2 * torch.diagonal(phi.mH @ torch.linalg.solve(C, phi)).real
    lp = ll + log_pi[None]
    return torch.logsumexp(lp, 1), torch.softmax(lp, 1), mu, c


def _reference_em_step(net, y, zeta, phi, floor, inner):
    lse, r, mu, c = _reference_posteriors(y, zeta, phi, net.gamma, net.log_pi)
    Nk = r.sum(0)
    E = (r[:, :, None] * (mu.abs() ** 2 + c)).sum(0) / Nk[:, None]
    net.log_pi.copy_(torch.log(Nk / Nk.sum()))
    if net.kronecker:
        _kron_m_step(net, E, floor, inner)
    else:
        net.gamma.copy_(E.clamp_min(floor))
    return float(lse.mean())


def _pair(grid, kronecker, y, zeta, phi, K=3):
    a, b = CSGMMNet(K, grid, kronecker), CSGMMNet(K, grid, kronecker)
    init_csgmm(a, y, zeta, phi, torch.Generator().manual_seed(0))
    b.load_state_dict(a.state_dict())
    return a, b


@pytest.mark.parametrize("kronecker", [False, True])
def test_em_iterations_equal_the_papers_equations(kronecker):
    if kronecker:
        y, zeta, A = _obs(n_antennas=1, n_subcarriers=6, n_symbols=3, n_pilots=8)
        d = Dictionary.build(1, 6, 3, delay_grid=6, doppler_grid=4)
    else:
        y, zeta, A = _obs()
        d = Dictionary.build(8, angle_grid=20)
    phi = A @ d.matrix
    fast, ref = _pair(d.grid_shape, kronecker, y, zeta, phi)
    for _ in range(4):
        ll_fast = em_step(fast, y, zeta, phi, floor=1e-9, inner=5)
        ll_ref = _reference_em_step(ref, y, zeta, phi, 1e-9, 5)
        assert ll_fast == pytest.approx(ll_ref, rel=1e-10, abs=1e-10)
        torch.testing.assert_close(fast.gamma, ref.gamma, rtol=1e-8, atol=1e-12)
        torch.testing.assert_close(fast.log_pi, ref.log_pi, rtol=1e-9, atol=1e-10)
    assert mean_log_lik(fast, y, zeta, phi) == pytest.approx(float(_reference_posteriors(
        y, zeta, phi, ref.gamma, ref.log_pi)[0].mean()), rel=1e-10)
    # the mixture moved away from its initialisation (the comparison is not of two untouched copies)
    init = CSGMMNet(3, d.grid_shape, kronecker)
    init_csgmm(init, y, zeta, phi, torch.Generator().manual_seed(0))
    assert not torch.allclose(init.gamma, fast.gamma, rtol=1e-2)


def test_conditional_mean_equals_the_papers_estimator():
    y, zeta, A = _obs()
    d = Dictionary.build(8, angle_grid=20)
    phi = A @ d.matrix
    net = CSGMMNet(3, d.grid_shape)
    init_csgmm(net, y, zeta, phi, torch.Generator().manual_seed(1))
    for _ in range(3):
        em_step(net, y, zeta, phi)
    _, r, mu, _ = _reference_posteriors(y, zeta, phi, net.gamma, net.log_pi)
    want = (r[:, :, None] * mu).sum(1)
    torch.testing.assert_close(csgmm_coefficients(net, y, zeta, phi), want, rtol=1e-9, atol=1e-12)
    torch.testing.assert_close(csgmm_coefficients(net, y, zeta, phi, chunk_size=7), want, rtol=1e-9, atol=1e-12)
    # one observation at a time (the cached factorisation is reused) gives the same rows
    torch.testing.assert_close(csgmm_coefficients(net, y[5:6], zeta[5:6], phi), want[5:6], rtol=1e-9, atol=1e-12)
    # the cache follows γ: after another EM step the estimate is that of the new mixture
    em_step(net, y, zeta, phi)
    _, r, mu, _ = _reference_posteriors(y, zeta, phi, net.gamma, net.log_pi)
    torch.testing.assert_close(csgmm_coefficients(net, y, zeta, phi), (r[:, :, None] * mu).sum(1), rtol=1e-9,
                               atol=1e-12)


@pytest.mark.parametrize("kronecker", [False, True])
@pytest.mark.parametrize("chunk", [1, 13, 50])
def test_chunked_em_equals_full_batch_em(kronecker, chunk):
    if kronecker:
        y, zeta, A = _obs(n_antennas=1, n_subcarriers=6, n_symbols=3, n_pilots=8)
        d = Dictionary.build(1, 6, 3, delay_grid=6, doppler_grid=4)
    else:
        y, zeta, A = _obs()
        d = Dictionary.build(8, angle_grid=20)
    phi = A @ d.matrix
    full, chunked = _pair(d.grid_shape, kronecker, y, zeta, phi)
    # a list of chunks: anything re-iterable works (the statistics are sums over observations)
    listed = list(TensorChunks(y, zeta, chunk))
    assert len(listed) == math.ceil(y.shape[0] / chunk)
    for _ in range(5):
        a = em_step(full, y, zeta, phi, chunk_size=y.shape[0])
        b = em_step(chunked, listed, None, phi)
        assert a == pytest.approx(b, rel=1e-12)
    torch.testing.assert_close(chunked.gamma, full.gamma, rtol=1e-10, atol=1e-14)
    torch.testing.assert_close(chunked.log_pi, full.log_pi, rtol=1e-10, atol=1e-12)
    # the initialisation from chunk sums is the full-batch one
    c1, c2 = CSGMMNet(3, d.grid_shape, kronecker), CSGMMNet(3, d.grid_shape, kronecker)
    init_csgmm(c1, y, zeta, phi, torch.Generator().manual_seed(0))
    init_csgmm(c2, listed, None, phi, torch.Generator().manual_seed(0))
    torch.testing.assert_close(c1.gamma, c2.gamma, rtol=1e-12, atol=0.0)


def test_chunk_arguments_are_checked():
    y, zeta, _ = _obs(n=10)
    with pytest.raises(ValueError, match="chunk_size"):
        TensorChunks(y, zeta, -1)
    with pytest.raises(ValueError, match=r"\[B, M\]"):
        TensorChunks(y, zeta[:3])
    assert np.allclose(torch.cat([c[0] for c in TensorChunks(y, zeta, 3)]).numpy(), y.numpy())
