"""CSVAE: its objective is the exact log-likelihood log CN(y; 0, C(z)) minus KL(q ‖ N(0, I)), checked
against scipy and torch.distributions; training runs through the engine's fit and lowers the loss."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import multivariate_normal

from scigen.wireless.sbgm.csvae import CSVAENet, csvae_elbo


def test_objective_is_exact_log_likelihood_minus_kl():
    torch.manual_seed(0)
    M, N, S, L, B = 4, 6, 16, 3, 5
    net = CSVAENet(M, N, S, latent_dim=L, encoder_widths=(8,), decoder_channels=(2, 2, 2, 2)).double()
    rng = np.random.default_rng(0)
    phi = torch.as_tensor(rng.standard_normal((M, S)) + 1j * rng.standard_normal((M, S)))
    y = torch.as_tensor(rng.standard_normal((B, M)) + 1j * rng.standard_normal((B, M)))
    zeta = torch.as_tensor(rng.uniform(0.2, 1.0, B))
    z = torch.randn(B, L, dtype=torch.float64)
    elbo, log_lik, kl = csvae_elbo(net, y, zeta, phi, z=z)
    mu, logvar = net.encode(y, zeta)
    gamma = torch.exp(net.log_gamma(z)).detach().numpy()
    q = torch.distributions.Normal(mu, torch.exp(0.5 * logvar))
    p = torch.distributions.Normal(torch.zeros_like(mu), torch.ones_like(mu))
    kl_ref = torch.distributions.kl_divergence(q, p).sum(1)
    for i in range(B):
        C = phi.numpy() @ np.diag(gamma[i]) @ phi.numpy().conj().T + zeta[i].item() * np.eye(M)
        R = 0.5 * np.block([[C.real, -C.imag], [C.imag, C.real]])
        ref = multivariate_normal(np.zeros(2 * M), R).logpdf(np.concatenate([y[i].real.numpy(), y[i].imag.numpy()]))
        assert float(log_lik[i].detach()) == pytest.approx(ref, rel=1e-9)
    torch.testing.assert_close(kl.detach(), kl_ref.detach())
    torch.testing.assert_close(elbo, log_lik - kl)


def test_decoder_clamps_log_gamma():
    net = CSVAENet(2, 2, 8, latent_dim=2, encoder_widths=(4,), decoder_channels=(2, 2, 2, 2), log_gamma_min=-3.0)
    with torch.no_grad():
        net.dec_out.bias.fill_(-100.0)
    with torch.no_grad():
        assert float(net.log_gamma(torch.zeros(3, 2)).min()) == -3.0


def test_csvae_trains_through_the_engine_and_lowers_its_loss():
    from scigen.wireless import SBGM

    data = SBGM.default_data(quick=True).isel(sample=slice(200))
    model = SBGM(SBGM.Config.preset("tiny", model="csvae"))
    model.fit(data, max_steps=60, progress=False, logger=None, lr=3e-3)
    assert model.history.steps == 60
    losses = model.history.losses
    untrained_loss = float(np.mean(losses[:5]))
    assert float(np.mean(losses[-10:])) < untrained_loss - 0.1, (losses[:5], losses[-10:])
    scores = model.evaluate(SBGM.default_data(quick=True, seed=3, snr_db=15.0).isel(sample=slice(100)))
    assert np.isfinite(scores["NMSE_dB"]) and scores["NMSE_dB"] < 0


def test_two_d_decoder_on_a_delay_doppler_grid():
    """The paper's 2-D CSVAE (Conv2d + bilinear upsampling) on an OFDM grid: built automatically for two
    grid axes, γ laid out in the dictionary's C order, and trained on pilots it beats LS."""
    from scigen.wireless import SBGM, SBGMConfig, generate_channels, make_site, observe, pilot_matrix
    from scigen.wireless.baselines import estimate_all

    site = make_site(2, seed=1)
    A = pilot_matrix(12 * 8, 32, "selection", seed=2)
    train = observe(generate_channels(300, n_antennas=1, n_subcarriers=12, n_symbols=8, site=site, seed=0), A,
                    (10.0, 20.0), seed=3)
    model = SBGM(SBGMConfig.preset("tiny", model="csvae", delay_grid=16, doppler_grid=8))
    model.fit(train, max_steps=80, progress=False, logger=None, lr=3e-3)
    net = model.network
    assert net.grid_2d == (16, 8) and isinstance(net.dec_out, torch.nn.Conv2d)
    assert [m.mode for m in net.dec_blocks if isinstance(m, torch.nn.Upsample)] == ["bilinear"] * 3
    with torch.no_grad():
        lg = net.log_gamma(torch.zeros(1, net.latent_dim)).reshape(16, 8)
    assert lg.shape == (16, 8)
    test = observe(generate_channels(100, n_antennas=1, n_subcarriers=12, n_symbols=8, site=site, seed=9), A, 15.0,
                   seed=10)
    res = estimate_all(model, train, test, methods=("LS",))
    assert res["SBGM-CSVAE"] < res["LS"] - 1.0, res
    with pytest.raises(Exception, match="2-D decoder needs exactly two grid axes"):
        SBGM(SBGMConfig.preset("tiny", model="csvae", csvae_decoder="2d")).fit(
            SBGM.default_data(quick=True).isel(sample=slice(20)), max_steps=1, progress=False, logger=None)
