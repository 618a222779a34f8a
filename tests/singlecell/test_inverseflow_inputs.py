"""Inverse Flow as an imaging scientist and a single-cell biologist meet it (issue 37): what the input is
read as, the noise model against the data, metrics against scikit-image, sparse AnnData, the CLI."""

from __future__ import annotations

import numpy as np
import pytest

from scigen.core.errors import InvalidInputError
from scigen.singlecell.inverseflow import Gaussian, InverseFlow

TINY_IMG = {"base_channels": 8, "groups": 4, "channel_mults": (1, 2), "patch": 8, "n_patches": 16,
            "train": {"max_steps": 2, "batch_size": 4, "progress": False, "logger": None}}
TINY = {"width": 16, "depth": 1, "train": {"max_steps": 2, "batch_size": 16, "progress": False, "logger": None}}


# ---------------------------------------------------------------------------------------------- one image
def test_a_single_2d_image_is_never_read_as_cells_without_being_told():
    img = np.random.default_rng(0).random((16, 12))
    with pytest.raises(InvalidInputError, match=r"2-D array of shape \(16, 12\).*kind='image'.*kind='vectors'"):
        InverseFlow(noise=Gaussian(0.1), **TINY_IMG).fit(img)


def test_kind_image_trains_the_unet_on_one_image_and_returns_its_shape():
    img = np.random.default_rng(0).random((16, 12))
    m = InverseFlow(noise=Gaussian(0.1), **TINY_IMG).fit(img, kind="image")
    assert m.metadata["kind"] == "images" and m.metadata["channels"] == 1 and m.metadata["shape"] == [1, 16, 12]
    assert type(m.network).__name__ == "UNet"
    out = m.denoise(img, kind="image")
    assert out.shape == img.shape
    stack = m.denoise(img[None])  # the same image as a stack of one: the same numbers
    assert np.allclose(stack[0], out, atol=1e-6)
    with pytest.raises(InvalidInputError, match="trained on images; pass kind='image'"):
        m.denoise(img)
    with pytest.raises(InvalidInputError, match="kind='image' needs one image"):
        m.denoise(img[None, None, None], kind="image")


def test_kind_vectors_keeps_a_table_a_table():
    x = np.random.default_rng(0).normal(size=(40, 3))
    m = InverseFlow(noise=Gaussian(0.1), **TINY).fit(x, kind="vectors")
    assert m.metadata["kind"] == "vectors" and m.metadata["channels"] == 3
    assert m.denoise(x).shape == x.shape  # the trained kind decides a 2-D array
    with pytest.raises(InvalidInputError, match="kind='vectors' needs a 2-D"):
        m.denoise(x[None], kind="vectors")
    with pytest.raises(InvalidInputError, match="kind='pixels' is not one of"):
        m.denoise(x, kind="pixels")


# ---------------------------------------------------------------------------------------------- noise vs data
def _counts(n=60, d=5, seed=0):
    import anndata

    rng = np.random.default_rng(seed)
    return anndata.AnnData(X=rng.poisson(rng.uniform(5, 200, size=(1, d)), size=(n, d)).astype(np.float32))


def test_poisson_k_is_the_event_size_variance_k_times_the_mean():
    import torch

    from scigen.singlecell.inverseflow import Poisson

    x0 = torch.full((20000,), 100.0, dtype=torch.float64)
    g = torch.Generator().manual_seed(0)
    # Var[k·Poisson(x0/k)] = k²·x0/k = k·x0: 1.0 for the default k = 0.01, 100 (the count itself) for k = 1
    assert float(Poisson().sample(x0, g).var()) == pytest.approx(1.0, rel=0.05)
    assert float(Poisson(k=1).sample(x0, g).var()) == pytest.approx(100.0, rel=0.05)


def test_raw_counts_under_a_mismatched_noise_model_warn_and_can_refuse():
    from scigen.singlecell.inverseflow import NegativeBinomial, NoiseMismatchWarning, Poisson

    ad = _counts()
    with pytest.warns(NoiseMismatchWarning, match=r"Poisson\(k=0.01.*0.01 times the counts' own Poisson variance"):
        InverseFlow(noise=Poisson(), **TINY).fit(ad)
    with pytest.warns(NoiseMismatchWarning, match=r"raw counts.*Gaussian\(sigma=0.1\).*Poisson\(k=1\)"):
        InverseFlow(**TINY).fit(ad)  # the config's default noise
    with pytest.raises(InvalidInputError, match="does not grow with the count"):
        InverseFlow(**TINY).fit(ad, on_noise_mismatch="raise")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseMismatchWarning)
        InverseFlow(noise=Poisson(k=1), **TINY).fit(ad)
        InverseFlow(noise=NegativeBinomial(10.0), **TINY).fit(ad)
        InverseFlow(**TINY).fit(ad, on_noise_mismatch="ignore")
        scaled = ad.copy()
        scaled.X = scaled.X / 1000.0  # not integers: not raw counts
        InverseFlow(**TINY).fit(scaled)


def test_cli_train_takes_a_noise_model_and_refuses_counts_under_the_default(tmp_path):
    from typer.testing import CliRunner

    from scigen.core.cli import build_app
    from scigen.singlecell.io import write_h5ad

    write_h5ad(_counts(), tmp_path / "counts.h5ad")

    def cli(*args):
        args = ["singlecell", "inverseflow", "train", "--data", str(tmp_path / "counts.h5ad"), "--preset", "tiny",
                "--max-steps", "2", *args]
        return CliRunner().invoke(build_app(args), args)

    r = cli("--out", str(tmp_path / "r0"))
    assert r.exit_code == 2 and "raw counts" in r.output and "--noise poisson --noise-param k=1" in r.output, r.output
    assert not (tmp_path / "r0").exists()
    r = cli("--out", str(tmp_path / "r1"), "--noise", "poisson", "--noise-param", "k=1")
    assert r.exit_code == 0, r.output
    assert InverseFlow.load(tmp_path / "r1").config.noise == {"kind": "poisson", "k": 1.0, "clip": None}
    r = cli("--out", str(tmp_path / "r2"), "--noise", "negative_binomial", "--noise-param", "theta=5")
    assert r.exit_code == 0 and InverseFlow.load(tmp_path / "r2").noise.theta == 5.0, r.output
    r = cli("--out", str(tmp_path / "r3"), "--noise", "laplace")
    assert r.exit_code == 2 and "--noise 'laplace' is unknown" in r.output
    r = cli("--out", str(tmp_path / "r3"), "--noise-param", "k=1")
    assert r.exit_code == 2 and "needs --noise NAME" in r.output
    r = cli("--out", str(tmp_path / "r3"), "--noise", "poisson", "--noise-param", "kk=1")
    assert r.exit_code == 2 and "poisson" in r.output and "kk" in r.output


def test_cli_train_reads_a_2d_npy_as_told(tmp_path):
    from typer.testing import CliRunner

    from scigen.core.cli import build_app

    np.save(tmp_path / "img.npy", np.random.default_rng(0).random((16, 16)))

    def cli(*args):
        args = ["singlecell", "inverseflow", "train", "--data", str(tmp_path / "img.npy"), "--max-steps", "1",
                "--config", str(cfg), *args]
        return CliRunner().invoke(build_app(args), args)

    import json

    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({k: v for k, v in TINY_IMG.items() if k != "train"} | {"channel_mults": [1, 2]}))
    r = cli("--out", str(tmp_path / "r0"))
    assert r.exit_code == 2 and "kind='image'" in r.output, r.output
    r = cli("--out", str(tmp_path / "r1"), "--kind", "image")
    assert r.exit_code == 0, r.output
    assert InverseFlow.load(tmp_path / "r1").metadata["kind"] == "images"


# ---------------------------------------------------------------------------------------------- scikit-image
def test_scikit_image_is_an_extra_and_its_absence_names_it(monkeypatch):
    import re
    import sys
    from pathlib import Path

    from scigen.singlecell.inverseflow.data import noisy_images, skimage_image

    meta = (Path(__file__).parents[2] / "packages/singlecell/pyproject.toml").read_text()
    extras = meta.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    assert re.search(r'^images = \[.*"scikit-image>=[0-9.]+"', extras, re.M), extras
    monkeypatch.setitem(sys.modules, "skimage", None)  # as if it were not installed
    monkeypatch.setitem(sys.modules, "skimage.data", None)
    with pytest.raises(ImportError, match=r"scigen-singlecell\[images\]"):
        skimage_image("camera")
    with pytest.raises(ImportError, match=r"scigen-singlecell\[images\]"):
        noisy_images(["camera"])


# ---------------------------------------------------------------------------------------------- metrics
def test_image_scores_are_scikit_images_standard_definitions():
    metrics = pytest.importorskip("skimage.metrics")
    from scigen.singlecell.inverseflow.data import noisy_images
    from scigen.singlecell.inverseflow.metrics import image_scores

    noisy, clean = noisy_images(["camera", "coins"], size=64, seed=3)  # Gaussian 25/255: values leave [0, 1]
    assert noisy.min() < 0 and noisy.max() > 1
    got = image_scores(noisy[:, None], clean[:, None])
    clipped = np.clip(noisy, 0, 1)
    psnr = np.mean([metrics.peak_signal_noise_ratio(c, e, data_range=1.0) for c, e in zip(clean, clipped, strict=True)])
    ssim = np.mean([metrics.structural_similarity(c, e, data_range=1.0) for c, e in zip(clean, clipped, strict=True)])
    unclipped = np.mean([metrics.peak_signal_noise_ratio(c, e, data_range=1.0) for c, e in zip(clean, noisy, strict=True)])
    assert got["PSNR"] == pytest.approx(psnr, rel=1e-9) and got["SSIM"] == pytest.approx(ssim, rel=1e-9)
    assert got["PSNR_unclipped"] == pytest.approx(unclipped, rel=1e-9)
    assert got["PSNR"] > got["PSNR_unclipped"]  # clipping to the image range only removes error
    eight = image_scores(noisy[:, None] * 255, clean[:, None] * 255, data_range=255.0)
    assert eight["PSNR"] == pytest.approx(psnr, rel=1e-9) and eight["SSIM"] == pytest.approx(ssim, rel=1e-6)
    with pytest.raises(InvalidInputError, match="outside \\[0, data_range=1\\]"):
        image_scores(noisy[:, None] * 255, clean[:, None] * 255)


def test_evaluate_reports_the_standard_image_scores():
    pytest.importorskip("skimage")
    from scigen.singlecell.inverseflow.data import noisy_images
    from scigen.singlecell.inverseflow.metrics import image_scores

    noisy, clean = noisy_images(["camera"], size=32, seed=0)
    m = InverseFlow(noise=Gaussian(25 / 255), **TINY_IMG).fit(noisy)
    res = m.evaluate(noisy, clean=clean)
    assert set(res) == {"collapsed", "PSNR", "SSIM", "PSNR_unclipped", "PSNR_noisy", "SSIM_noisy",
                        "PSNR_unclipped_noisy"}
    ref = image_scores(noisy[:, None], clean[:, None])
    assert res["PSNR_noisy"] == pytest.approx(ref["PSNR"]) and res["SSIM_noisy"] == pytest.approx(ref["SSIM"])


# ---------------------------------------------------------------------------------------------- sparse AnnData
def test_sparse_anndata_is_denoised_in_blocks_and_written_sparse(monkeypatch):
    import anndata
    import scipy.sparse as sp
    import torch

    from scigen.singlecell.inverseflow import NegativeBinomial, data
    from scigen.singlecell.inverseflow.guard import collapse_report

    rng = np.random.default_rng(0)
    dense = rng.poisson(0.3, size=(50, 6)).astype(np.float32)  # mostly zeros, as count matrices are
    ad = anndata.AnnData(X=sp.csr_matrix(dense))
    m = InverseFlow(noise=NegativeBinomial(10.0), **TINY).fit(ad, on_noise_mismatch="ignore")
    monkeypatch.setattr(data, "ROW_BLOCK", 16)  # 4 blocks: never the whole matrix at once
    seen = []
    from scigen.singlecell import io

    orig = io.read_rep

    def spy(adata, use_rep=None, rows=None, **kw):
        seen.append(None if rows is None else len(rows))
        return orig(adata, use_rep, rows, **kw)

    monkeypatch.setattr(io, "read_rep", spy)
    out = m.denoise(ad, copy=True)
    assert seen == [16, 16, 16, 2]
    layer = out.layers["inverse_flow"]
    assert sp.issparse(layer) and layer.format == "csr" and layer.dtype == np.float32
    ref = m.denoise(dense, kind="vectors")  # the same cells, dense, in one go
    np.testing.assert_allclose(layer.toarray(), ref, atol=1e-6)
    rep = out.uns["inverse_flow"]["collapse"]  # the block-merged variances equal the whole matrix's
    whole = collapse_report(torch.as_tensor(dense), torch.as_tensor(ref))
    assert rep["var_in"] == pytest.approx(whole["var_in"], rel=1e-9)
    assert rep["var_out"] == pytest.approx(whole["var_out"], rel=1e-6)
    csc = anndata.AnnData(X=sp.csc_matrix(dense))
    assert m.denoise(csc, copy=True).layers["inverse_flow"].format == "csc"
    dense_ad = anndata.AnnData(X=dense)
    assert isinstance(m.denoise(dense_ad, copy=True).layers["inverse_flow"], np.ndarray)
