"""The InverseFlow system: AnnData in/out with provenance, images as numpy and xarray, save/load, the
collapse guard (fires on a forced collapse, silent on a trained model), the denoise CLI verb."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import torch
import xarray as xr

from scigen.core.errors import InvalidInputError
from scigen.singlecell.inverseflow import (
    CollapseError,
    CollapseWarning,
    Gaussian,
    InverseFlow,
    collapse_report,
)
from scigen.singlecell.inverseflow.data import circle_toy
from scigen.singlecell.io import write_h5ad

TINY = {"width": 32, "depth": 1, "t_max": 0.2, "sigma_data": 0.7,
        "train": {"max_steps": 3, "batch_size": 64, "progress": False, "logger": None}}
TINY_IMG = {"base_channels": 8, "groups": 4, "channel_mults": (1, 2), "patch": 8, "n_patches": 32,
            "train": {"max_steps": 2, "batch_size": 8, "progress": False, "logger": None}}


@pytest.fixture(scope="module")
def toy():
    return circle_toy(20, sigma=0.2, seed=0)


@pytest.fixture(scope="module")
def noisy(toy):
    ad = toy.copy()
    ad.layers["noisy"] = ad.X.copy()
    return ad


@pytest.fixture(scope="module")
def trained(noisy):
    return InverseFlow(noise=Gaussian(0.2), **TINY).fit(noisy, layer="noisy")


def test_denoise_writes_a_layer_with_provenance_and_leaves_the_rest(trained, toy):
    ad = toy.copy()
    ad.layers["noisy"] = ad.X.copy()
    before = ad.X.copy()
    out = trained.denoise(ad)
    assert out is ad and np.array_equal(ad.X, before)
    assert ad.layers["inverse_flow"].shape == ad.shape
    prov = ad.uns["inverse_flow"]
    assert prov["algorithm"] == "icm" and prov["noise"] == {"kind": "gaussian", "sigma": 0.2}
    assert prov["source_layer"] == "noisy" and prov["trained_steps"] == 3 and prov["steps"] == 1
    json.dumps(prov)  # JSON-able: survives .h5ad
    cp = trained.denoise(ad, key_added="den2", copy=True)
    assert "den2" in cp.layers and "den2" not in ad.layers


def test_anndata_round_trip_through_h5ad_and_a_saved_run(trained, toy, tmp_path):
    import anndata

    ad = toy.copy()
    ad.layers["noisy"] = ad.X.copy()
    trained.denoise(ad)
    write_h5ad(ad, tmp_path / "d.h5ad")
    back = anndata.read_h5ad(tmp_path / "d.h5ad")
    assert np.allclose(back.layers["inverse_flow"], ad.layers["inverse_flow"])
    assert back.uns["inverse_flow"]["noise"]["sigma"] == 0.2
    trained.save(tmp_path / "run")
    again = InverseFlow.load(tmp_path / "run")
    ad2 = toy.copy()
    ad2.layers["noisy"] = ad2.X.copy()
    assert np.allclose(again.denoise(ad2).layers["inverse_flow"], ad.layers["inverse_flow"], atol=1e-6)


def test_sample_denoises_a_seeded_subset(trained, noisy):
    a = trained.sample(noisy, n_samples=5, seed=1)
    b = trained.sample(noisy, n_samples=5, seed=1)
    assert a.n_obs == 5 and list(a.obs_names) == list(b.obs_names)
    assert np.array_equal(a.layers["inverse_flow"], b.layers["inverse_flow"])
    with pytest.raises(InvalidInputError, match="exceeds"):
        trained.sample(noisy, n_samples=10_000)


def test_images_as_numpy_and_xarray_keep_their_layout(tmp_path):
    g = np.random.default_rng(0)
    imgs = g.random((3, 12, 10))  # 12 x 10: padded to the U-Net's factor and cropped back
    m = InverseFlow(noise=Gaussian(0.1), **TINY_IMG).fit(imgs)
    out = m.denoise(imgs)
    assert isinstance(out, np.ndarray) and out.shape == imgs.shape
    da = xr.DataArray(imgs, dims=("image", "y", "x"), coords={"image": ["a", "b", "c"]}, attrs={"units": "a.u."})
    dout = m.denoise(da)
    assert isinstance(dout, xr.DataArray) and dout.dims == da.dims and list(dout.coords["image"].values) == ["a", "b", "c"]
    assert np.allclose(dout.values, out, atol=1e-6) and json.loads(dout.attrs["inverse_flow"])["algorithm"] == "icm"
    assert dout.attrs["units"] == "a.u."
    with pytest.raises(InvalidInputError, match="trained on images"):
        m.denoise(imgs[:, 0, :])  # a 2-D array is a cells x features table
    with pytest.raises(InvalidInputError, match="rank 5"):
        m.denoise(imgs[None, None])


def test_ifm_denoises_with_euler_steps(toy):
    m = InverseFlow(noise=Gaussian(0.2), algorithm="ifm", **TINY).fit(toy)
    a = m.denoise(toy, copy=True).layers["inverse_flow"]
    b = m.denoise(toy, steps=3, copy=True).layers["inverse_flow"]
    assert a.shape == toy.shape and not np.allclose(a, b)
    with pytest.raises(InvalidInputError, match="denoises with 'euler'"):
        m.denoise(toy, method="consistency")


def test_collapse_guard_fires_on_a_forced_collapse_and_not_on_identity(trained, noisy):
    x = torch.randn(100, 2)
    assert collapse_report(x, torch.zeros_like(x))["reason"] == "every output value is 0"
    assert collapse_report(x, torch.full_like(x, 0.3))["collapsed"]
    assert collapse_report(x, x.mean(0).expand_as(x) + 1e-3 * torch.randn(100, 2))["collapsed"]
    assert not collapse_report(x, 0.8 * x)["collapsed"]

    class Zero(torch.nn.Module):  # F = −(c_skip/c_out)·x: f(x, t_max) = 0 exactly
        def forward(self, y, t):
            sd, tm = 0.7, 0.002
            c_skip = sd**2 / ((t - tm) ** 2 + sd**2)
            c_out = sd * (t - tm) / torch.sqrt(sd**2 + t**2)
            return -(c_skip / c_out)[:, None] * y

    import copy

    m = copy.deepcopy(trained)
    m.network = Zero()
    with pytest.warns(CollapseWarning, match="collapsed to a trivial solution"):
        m.denoise(noisy, copy=True)
    with pytest.raises(CollapseError, match="collapsed"):
        m.denoise(noisy, copy=True, on_collapse="raise")
    assert m.evaluate(noisy)["collapsed"] == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", CollapseWarning)
        trained.denoise(noisy, copy=True)  # an (almost) untrained ICM is near the identity


def test_cli_train_denoise_evaluate(tmp_path):
    from typer.testing import CliRunner

    from scigen.core.cli import build_app

    ad = circle_toy(10, seed=1)
    write_h5ad(ad, tmp_path / "toy.h5ad")
    run = CliRunner()

    def cli(*args):
        return run.invoke(build_app(list(args)), list(args))

    r = cli("singlecell", "inverseflow", "train", "--data", str(tmp_path / "toy.h5ad"), "--out", str(tmp_path / "run"),
            "--preset", "tiny", "--max-steps", "2")
    assert r.exit_code == 0, r.output
    r = cli("singlecell", "inverseflow", "denoise", "--run", str(tmp_path / "run"), "--data", str(tmp_path / "toy.h5ad"),
            "--out", str(tmp_path / "den.h5ad"))
    assert r.exit_code == 0, r.output
    import anndata

    den = anndata.read_h5ad(tmp_path / "den.h5ad")
    assert "inverse_flow" in den.layers and den.uns["inverse_flow"]["system"] == "singlecell/inverseflow"
    r = cli("singlecell", "inverseflow", "denoise", "--run", str(tmp_path / "run"), "--data", str(tmp_path / "toy.h5ad"),
            "--out", str(tmp_path / "den.h5ad"))
    assert r.exit_code == 2 and "exists" in r.output
    r = cli("singlecell", "inverseflow", "evaluate", "--run", str(tmp_path / "run"), "--data", str(tmp_path / "toy.h5ad"))
    assert r.exit_code == 0 and "PSNR_noisy" in r.output, r.output


def test_noise_replaces_the_configured_one_instead_of_merging():
    from scigen.singlecell.inverseflow import Poisson

    cfg = InverseFlow.Config.preset("tiny", noise={"kind": "gaussian", "sigma": 0.3})
    m = InverseFlow(cfg, noise=Poisson(0.02, clip=1.0), width=8)
    assert m.config.noise == {"kind": "poisson", "k": 0.02, "clip": 1.0} and m.config.width == 8
    assert InverseFlow(noise="gamma").config.noise == {"kind": "gamma"}
