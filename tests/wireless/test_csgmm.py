"""CSGMM's EM: the log-likelihood never decreases (plain and Kronecker), and the Kronecker M-step
recovers an exactly factorised second moment."""

from __future__ import annotations

import numpy as np
import torch

from scigen.wireless.dictionaries import Dictionary
from scigen.wireless.pilots import observe, pilot_matrix
from scigen.wireless.sbgm.csgmm import CSGMMNet, _kron_m_step, em_step, init_csgmm, mean_log_lik
from scigen.wireless.synthetic import generate_channels


def _obs(n_antennas=8, n_subcarriers=1, n_symbols=1, n_pilots=6, n=120, seed=0):
    ch = generate_channels(n, n_antennas=n_antennas, n_subcarriers=n_subcarriers, n_symbols=n_symbols, seed=seed)
    N = n_antennas * n_subcarriers * n_symbols
    ds = observe(ch, pilot_matrix(N, n_pilots, "selection", seed=1), (5.0, 15.0), seed=2)
    return (torch.as_tensor(ds["y"].values), torch.as_tensor(ds["noise_var"].values),
            torch.as_tensor(ds["A"].values))


def _run(net, y, zeta, phi, iters):
    init_csgmm(net, y, zeta, phi, torch.Generator().manual_seed(0))
    lls = [em_step(net, y, zeta, phi, floor=1e-12) for _ in range(iters)]
    lls.append(mean_log_lik(net, y, zeta, phi))
    return np.array(lls)


def test_em_log_likelihood_never_decreases():
    y, zeta, A = _obs()
    d = Dictionary.build(8, angle_grid=24)
    phi = A @ d.matrix
    lls = _run(CSGMMNet(3, d.grid_shape), y, zeta, phi, 30)
    assert np.all(np.diff(lls) >= -1e-9 * np.abs(lls[:-1])), np.diff(lls)
    assert lls[-1] > lls[0] + 0.1  # and it learns something


def test_kronecker_em_log_likelihood_never_decreases():
    y, zeta, A = _obs(n_antennas=1, n_subcarriers=6, n_symbols=4, n_pilots=10)
    d = Dictionary.build(1, 6, 4, delay_grid=8, doppler_grid=4)
    phi = A @ d.matrix
    net = CSGMMNet(2, d.grid_shape, kronecker=True)
    lls = _run(net, y, zeta, phi, 10)
    assert np.all(np.diff(lls) >= -1e-9 * np.abs(lls[:-1])), np.diff(lls)
    # the stored full γ is the Kronecker product of the stored factors
    f = net.factors()
    full = torch.einsum("ka,kb,kc->kabc", *f).reshape(2, -1)
    torch.testing.assert_close(net.gamma, full)


def test_kronecker_m_step_recovers_a_factorised_second_moment():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.1, 3, (2, 5)), rng.uniform(0.1, 3, (2, 4))
    E = torch.as_tensor(np.einsum("ka,kb->kab", a, b).reshape(2, -1))
    net = CSGMMNet(2, (1, 5, 4), kronecker=True)
    _kron_m_step(net, E, floor=1e-12, inner=200)
    torch.testing.assert_close(net.gamma, E, rtol=1e-6, atol=1e-9)


def test_kronecker_m_step_raises_the_expected_complete_log_likelihood():
    rng = np.random.default_rng(1)
    E = torch.as_tensor(rng.uniform(0.1, 3, (1, 20)))  # not factorised
    net = CSGMMNet(1, (1, 5, 4), kronecker=True)
    net.set_factors([torch.ones(1, 1, dtype=torch.float64), torch.ones(1, 5, dtype=torch.float64),
                     torch.ones(1, 4, dtype=torch.float64)])
    q = lambda g: float((-torch.log(g) - E / g).sum())  # noqa: E731
    before = q(net.gamma.clone())
    _kron_m_step(net, E, floor=1e-12, inner=1)
    mid = q(net.gamma.clone())
    _kron_m_step(net, E, floor=1e-12, inner=10)
    assert before <= mid <= q(net.gamma) + 1e-12
