"""Dictionary atoms against their formulas, the Kronecker structure, and agreement with the generator."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from scigen.wireless.dictionaries import Dictionary, delay_atoms, doppler_atoms, ula_atoms
from scigen.wireless.synthetic import Site, generate_channels


def test_ula_atoms_are_half_wavelength_steering_vectors():
    theta = torch.tensor([0.0, math.pi / 6, -math.pi / 4])
    a = ula_atoms(8, theta).numpy()
    for j, t in enumerate(theta.tolist()):
        np.testing.assert_allclose(a[:, j], [np.exp(-1j * np.pi * n * np.sin(t)) for n in range(8)], atol=1e-12)
    # broadside: all ones; 30 degrees: phase step −π/2 per antenna
    np.testing.assert_allclose(a[:, 0], np.ones(8))
    np.testing.assert_allclose(np.angle(a[1, 1] / a[0, 1]), -np.pi / 2, atol=1e-12)


def test_grids_are_uniform_and_exclude_the_endpoint():
    d = Dictionary.build(4, 6, 5, angle_grid=8, delay_grid=4, doppler_grid=2, tau_max=4e-6, nu_max=100.0)
    np.testing.assert_allclose(d.angles.numpy(), -np.pi / 2 + np.pi * np.arange(8) / 8)
    np.testing.assert_allclose(d.delays.numpy(), [0, 1e-6, 2e-6, 3e-6])
    np.testing.assert_allclose(d.dopplers.numpy(), [-100.0, 0.0])
    assert d.matrix.shape == (4 * 6 * 5, 8 * 4 * 2)


def test_kronecker_atoms_factorise_and_parameters_index_them():
    d = Dictionary.build(3, 4, 2, angle_grid=5, delay_grid=3, doppler_grid=2)
    D = d.matrix.numpy() * math.sqrt(d.n_atoms)
    fa, fd, fv = (f.numpy() for f in d.factors)
    for idx in [0, 7, 13, 29]:
        ia, id_, iv = np.unravel_index(idx, d.grid_shape)
        np.testing.assert_allclose(D[:, idx], np.kron(np.kron(fa[:, ia], fd[:, id_]), fv[:, iv]), atol=1e-12)
        p = d.parameters(torch.tensor(idx))
        assert float(p["angle"]) == pytest.approx(float(d.angles[ia]))
        assert float(p["delay"]) == pytest.approx(float(d.delays[id_]))
        assert float(p["doppler"]) == pytest.approx(float(d.dopplers[iv]))
    # the delay / Doppler factors follow their formulas
    np.testing.assert_allclose(delay_atoms(4, 15e3, d.delays).numpy()[2, 1], np.exp(-2j * np.pi * 2 * 15e3 * d.delays[1].item()))
    np.testing.assert_allclose(doppler_atoms(2, 1e-3 / 14, d.dopplers).numpy()[1, 0],
                               np.exp(2j * np.pi * (1e-3 / 14) * d.dopplers[0].item()))


def test_an_on_grid_path_of_the_generator_is_one_atom():
    d = Dictionary.build(4, 6, 3, angle_grid=16, delay_grid=8, doppler_grid=4)
    ia, id_, iv = 3, 5, 1
    site = Site((float(d.angles[ia]),), (float(d.delays[id_]),), (float(d.dopplers[iv]),), (1.0,))
    ch = generate_channels(1, n_antennas=4, n_subcarriers=6, n_symbols=3, site=site, subpaths=1, angle_spread=0.0,
                           delay_spread=0.0, doppler_spread=0.0, seed=0)
    h = ch["h"].values.reshape(-1)
    g = ch["path_power"].values[0, 0] ** 0.5
    atom = d.matrix.numpy()[:, np.ravel_multi_index((ia, id_, iv), d.grid_shape)] * math.sqrt(d.n_atoms)
    np.testing.assert_allclose(np.abs(h), g * np.abs(atom), atol=1e-9)
    assert abs(np.vdot(atom, h)) == pytest.approx(np.linalg.norm(atom) * np.linalg.norm(h), rel=1e-9)  # collinear


def test_channel_energy_is_normalised():
    ch = generate_channels(4000, n_antennas=8, n_subcarriers=3, n_symbols=2, seed=1)
    energy = (np.abs(ch["h"].values) ** 2).reshape(4000, -1).sum(1)
    assert energy.mean() == pytest.approx(8 * 3 * 2, rel=0.05)
    np.testing.assert_allclose(ch["path_power"].values.sum(1).mean(), 1.0, rtol=0.05)


def test_upa_atoms_are_planar_plane_waves_and_a_kronecker_product():
    from scigen.wireless.dictionaries import upa_atoms

    tv, th = torch.tensor([0.0, 0.3, -0.7]), torch.tensor([0.1, -1.2])
    D = upa_atoms(3, 4, tv, th).numpy()
    assert D.shape == (12, 6)
    for i, a in enumerate(tv.tolist()):
        for j, b in enumerate(th.tolist()):
            ref = [np.exp(-1j * np.pi * (m * np.sin(a) + n * np.sin(b))) for m in range(3) for n in range(4)]
            np.testing.assert_allclose(D[:, i * 2 + j], ref, atol=1e-12)
    # a plane wave from (elevation, azimuth) is the atom with sin θ_v = sin el, sin θ_h = cos el sin az
    el, az = 0.4, -0.5
    wave = [np.exp(-1j * np.pi * (m * np.sin(el) + n * np.cos(el) * np.sin(az))) for m in range(3) for n in range(4)]
    f64 = dict(dtype=torch.float64)
    atom = upa_atoms(3, 4, torch.tensor([el], **f64), torch.tensor([math.asin(math.cos(el) * math.sin(az))], **f64))[:, 0]
    np.testing.assert_allclose(atom.numpy(), wave, atol=1e-12)
