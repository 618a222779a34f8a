"""Uniform planar arrays: the UPA :class:`Dictionary` against the URA plane-wave formula, exact sparsity
of generated UPA channels with on-grid planted angles, CSGMM (plain and Kronecker) vs LS on a UPA site,
and the shape errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from scigen.core.errors import InvalidInputError
from scigen.wireless.baselines import ls_estimate
from scigen.wireless.dictionaries import Dictionary, upa_atoms
from scigen.wireless.metrics import nmse
from scigen.wireless.pilots import observe, pilot_matrix
from scigen.wireless.sbgm.csgmm import CSGMMNet, init_csgmm, run_em
from scigen.wireless.sbgm.estimation import csgmm_coefficients
from scigen.wireless.synthetic import Site, generate_channels, make_site


def test_upa_dictionary_is_the_plane_wave_formula():
    rows, cols, gv, gh = 3, 4, 5, 6
    d = Dictionary.build(rows * cols, array=(rows, cols), angle_grid=gh, vertical_grid=gv)
    assert d.grid_shape == (gv * gh, 1, 1) and d.kron_grid_shape == (gv, gh, 1, 1)
    D = d.matrix.numpy() * math.sqrt(gv * gh)
    tv = -math.pi / 2 + math.pi * np.arange(gv) / gv
    th = -math.pi / 2 + math.pi * np.arange(gh) / gh
    for i in range(gv):
        for j in range(gh):
            m, n = np.divmod(np.arange(rows * cols), cols)
            want = np.exp(-1j * math.pi * (m * math.sin(tv[i]) + n * math.sin(th[j])))
            np.testing.assert_allclose(D[:, i * gh + j], want, atol=1e-12)
            par = d.parameters(torch.tensor(i * gh + j))
            assert float(par["vertical_angle"]) == pytest.approx(tv[i])
            assert float(par["angle"]) == pytest.approx(th[j])
    np.testing.assert_allclose(D, upa_atoms(rows, cols, d.vertical, d.angles).numpy(), atol=1e-12)


def test_upa_with_delays_is_kronecker_of_upa_and_delay():
    d = Dictionary.build(4, 3, array=(2, 2), angle_grid=3, vertical_grid=2, delay_grid=4)
    a, dl, _ = d.factors
    np.testing.assert_allclose(d.matrix.numpy() * math.sqrt(24), np.kron(a.numpy(), dl.numpy()), atol=1e-12)
    # flat index -> (vertical, horizontal, delay) in C order
    par = d.parameters(torch.tensor(1 * 12 + 2 * 4 + 3))
    assert float(par["vertical_angle"]) == pytest.approx(float(d.vertical[1]))
    assert float(par["angle"]) == pytest.approx(float(d.angles[2]))
    assert float(par["delay"]) == pytest.approx(float(d.delays[3]))


def test_upa_channel_with_planted_on_grid_angles_is_exactly_sparse():
    rows, cols, gv, gh = 4, 4, 8, 8
    d = Dictionary.build(rows * cols, array=(rows, cols), angle_grid=gh, vertical_grid=gv)
    picks = [(3, 5), (5, 2), (4, 6)]  # (vertical, horizontal) grid indices, |sin θ_h| <= cos θ_v
    el = [float(d.vertical[i]) for i, _ in picks]
    az = [math.asin(math.sin(float(d.angles[j])) / math.cos(e)) for (_, j), e in zip(picks, el, strict=True)]
    site = Site(tuple(az), (1e-6,) * 3, (0.0,) * 3, (0.5, 0.3, 0.2), tuple(el))
    ch = generate_channels(20, array=(rows, cols), site=site, subpaths=1, visibility=1.0, angle_spread=0.0,
                           elevation_spread=0.0, seed=3)
    h = ch["h"].values.reshape(20, -1)
    D = d.matrix.numpy()
    cols_ = [i * gh + j for i, j in picks]
    s, *_ = np.linalg.lstsq(D[:, cols_], h.T, rcond=None)
    assert np.abs(D[:, cols_] @ s - h.T).max() < 1e-10 * np.abs(h).max()
    # and the per-path gains are the planted ones, times √S
    g = np.sqrt(ch["path_power"].values)
    np.testing.assert_allclose(np.abs(s.T) / math.sqrt(d.n_atoms), g, rtol=1e-9)
    np.testing.assert_allclose(ch["path_elevation"].values, np.tile(el, (20, 1)), atol=1e-12)


def _upa_obs(n, snr, seed):
    ch = generate_channels(n, array=(4, 4), site=make_site(3, seed=1, planar=True), seed=seed)
    return observe(ch, pilot_matrix(16, 16, "selection"), snr, seed=seed + 10)


@pytest.mark.parametrize("kronecker", [False, True])
def test_csgmm_on_a_upa_site_beats_ls_at_10db(kronecker):
    d = Dictionary.build(16, array=(4, 4), angle_grid=8, vertical_grid=8)
    train, test = _upa_obs(600, (5.0, 15.0), 0), _upa_obs(300, 10.0, 1)
    t = {k: torch.as_tensor(train[k].values) for k in ("y", "noise_var", "A")}
    phi = t["A"] @ d.matrix
    net = CSGMMNet(4, d.kron_grid_shape if kronecker else d.grid_shape, kronecker=kronecker)
    init_csgmm(net, t["y"], t["noise_var"], phi, torch.Generator().manual_seed(0))
    run_em(net, t["y"], t["noise_var"], phi, max_steps=40, tol=1e-4, floor=1e-7, inner=10)
    y, zeta = torch.as_tensor(test["y"].values), torch.as_tensor(test["noise_var"].values)
    h = test["h"].values.reshape(300, -1)
    h_hat = (csgmm_coefficients(net, y, zeta, phi) @ d.matrix.T).numpy()
    e_sbgm, e_ls = nmse(h_hat, h), nmse(ls_estimate(test["y"].values, test["A"].values), h)
    print(f"UPA 4x4 10 dB kronecker={kronecker}: CSGMM NMSE {e_sbgm:.4f}, LS {e_ls:.4f}")
    assert e_sbgm < e_ls, (e_sbgm, e_ls)


def test_upa_bad_shapes_are_clear_errors():
    with pytest.raises(InvalidInputError, match=r"rows\*cols = 12 antennas but n_antennas = 16"):
        Dictionary.build(16, array=(3, 4), angle_grid=4, vertical_grid=4)
    with pytest.raises(InvalidInputError, match=r"rows\*cols = 12 antennas but n_antennas = 16"):
        generate_channels(2, n_antennas=16, array=(3, 4))
    with pytest.raises(InvalidInputError, match="needs a site with elevations"):
        generate_channels(2, array=(2, 2), site=make_site(2))
    d = Dictionary.build(12, array=(3, 4), angle_grid=4, vertical_grid=4)
    ch = generate_channels(2, array=(4, 4), site=make_site(2, planar=True))
    with pytest.raises(InvalidInputError, match=r"shape \(2, 16, 1, 1\).*array 3x4 = 12 antennas"):
        d.check_channels(ch)
    d.check_channels(generate_channels(2, array=(3, 4), site=make_site(2, planar=True)))  # matching: no error


def test_readme_own_arrays_and_planar_example_runs(readme_example):
    """The README's OFDM-from-arrays and planar-array block: the layouts come from the stated counts and the
    data's ``array`` attribute, and the planar CSGMM beats LS on its pilots."""
    import contextlib
    import io

    code = readme_example("wireless", "### Your own arrays")
    scope = {"__name__": "__readme__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), scope)  # noqa: S102
    lines = out.getvalue().splitlines()
    assert lines[0] == "(1, 16, 8)" and "(3, 64, 1, 1)" in lines[1]
    upa, up = scope["upa"], scope["up"]
    assert upa.geometry["array"] == (4, 4) and upa.dictionary().array == (4, 4)
    h = up["h"].values.reshape(600, -1)
    assert nmse(upa.estimate(up).values.reshape(600, -1), h) < nmse(ls_estimate(up["y"].values, up["A"].values), h)
