"""Hostile inputs to Inverse Flow (API and CLI): each gives a named error naming the field and the value."""

from __future__ import annotations

import numpy as np
import pytest

from scigen.core.errors import InvalidInputError, NotTrainedError
from scigen.singlecell.inverseflow import CallableNoise, Gaussian, InverseFlow, NegativeBinomial, Poisson
from scigen.singlecell.inverseflow.data import circle_toy
from scigen.singlecell.io import MissingKeyError, write_h5ad

from .helpers import assert_one_line_error, cli

TINY = {"width": 16, "depth": 1, "train": {"max_steps": 2, "batch_size": 16, "progress": False, "logger": None}}


@pytest.fixture(scope="module")
def toy():
    return circle_toy(8, seed=0)


@pytest.fixture(scope="module")
def run(toy, tmp_path_factory):
    d = tmp_path_factory.mktemp("inverseflow")
    write_h5ad(toy, d / "toy.h5ad")
    InverseFlow(**TINY).fit(toy).save(d / "run")
    np.save(d / "vec.npy", np.zeros((4, 3)))
    (d / "bad.npy").write_bytes(b"not an array")
    (d / "table.csv").write_text("a,b\n1,2\n")
    return d


def test_missing_layer_names_the_layer_and_lists_the_present_ones(toy):
    with pytest.raises(MissingKeyError, match=r"layer='counts' is not in adata.layers \(layers: \['clean'\]\)"):
        InverseFlow(**TINY).fit(toy, layer="counts")


def test_negative_values_for_a_count_model_name_the_field_and_minimum(toy):
    with pytest.raises(InvalidInputError, match=r"adata.X: the poisson noise model needs values >= 0, got a minimum of -"):
        InverseFlow(noise=Poisson(0.01), **TINY).fit(toy)
    ad = toy.copy()
    ad.layers["counts"] = np.abs(ad.X)
    ad.layers["counts"][3, 1] = -2.0
    with pytest.raises(InvalidInputError, match=r"adata.layers\['counts'\].*negative_binomial.*minimum of -2"):
        InverseFlow(noise=NegativeBinomial(5.0), **TINY).fit(ad, layer="counts")


def test_nan_is_refused_with_its_position(toy):
    ad = toy.copy()
    ad.X[5, 1] = np.nan
    with pytest.raises(InvalidInputError, match=r"data.X has 1 NaN/inf value\(s\), first at index \(5, 1\)"):
        InverseFlow(**TINY).fit(ad)
    imgs = np.zeros((2, 8, 8))
    imgs[1, 2, 3] = np.inf
    with pytest.raises(InvalidInputError, match=r"first at index \(1, 2, 3\)"):
        InverseFlow(**TINY).fit(imgs)


def test_a_noise_model_that_changes_shape_is_named(toy):
    bad = CallableNoise(lambda x, g=None: x[:, :1], name="halver")
    with pytest.raises(InvalidInputError, match=r"noise model 'callable halver': sample changed the shape from \(2, 2\) to \(2, 1\)"):
        InverseFlow(noise=bad, **TINY).fit(toy)


def test_images_of_the_wrong_rank_and_bad_types(toy):
    with pytest.raises(InvalidInputError, match=r"shape \(8,\) \(rank 1\)"):
        InverseFlow(**TINY).fit(np.zeros(8))
    with pytest.raises(InvalidInputError, match=r"rank 5"):
        InverseFlow(**TINY).fit(np.zeros((1, 1, 1, 8, 8)))
    with pytest.raises(InvalidInputError, match="must be an AnnData, a numpy/torch array or an xarray.DataArray, got list"):
        InverseFlow(**TINY).fit([[1.0, 2.0]])
    with pytest.raises(InvalidInputError, match="layer='noisy' applies to AnnData input only"):
        InverseFlow(**TINY).fit(np.zeros((4, 2)), layer="noisy")


def test_bad_config_and_requests(toy):
    with pytest.raises(InvalidInputError, match="noise kind 'laplace' is unknown"):
        InverseFlow(noise={"kind": "laplace"})
    with pytest.raises(InvalidInputError, match="t_max must exceed t_min"):
        InverseFlow(t_min=0.5, t_max=0.2)
    with pytest.raises(InvalidInputError, match="noise must be a NoiseModel"):
        InverseFlow(noise=3.0)
    with pytest.raises(NotTrainedError, match="untrained"):
        InverseFlow(**TINY).denoise(toy)
    m = InverseFlow(noise=Gaussian(0.2), **TINY).fit(toy)
    with pytest.raises(InvalidInputError, match="3 features; the model was trained on 2"):
        m.denoise(np.zeros((4, 3)))
    with pytest.raises(InvalidInputError, match="ICM denoises in one step"):
        m.denoise(toy, steps=5, copy=True)
    with pytest.raises(InvalidInputError, match="clean has shape"):
        m.evaluate(toy, clean=np.zeros((3, 2)))
    with pytest.raises(InvalidInputError, match="takes no val_data"):
        m.fit(toy, val_data=toy)


def test_cli_bad_inputs_are_one_line_errors(run):
    d = run
    base = ["singlecell", "inverseflow", "denoise", "--run", str(d / "run")]
    assert_one_line_error(cli(*base, "--data", str(d / "missing.h5ad"), "--out", str(d / "o.h5ad")), "missing.h5ad",
                          "does not exist")
    assert_one_line_error(cli(*base, "--data", str(d / "bad.npy"), "--out", str(d / "o.npy")), "bad.npy",
                          "not a readable .npy")
    assert_one_line_error(cli(*base, "--data", str(d / "table.csv"), "--out", str(d / "o.npy")), "table.csv",
                          "unknown data format")
    assert_one_line_error(cli(*base, "--data", str(d / "vec.npy"), "--out", str(d / "o.npy")),
                          "3 features; the model was trained on 2")
    assert_one_line_error(cli(*base, "--data", str(d / "toy.h5ad"), "--layer", "nope", "--out", str(d / "o.h5ad")),
                          "layer='nope'")
    assert not (d / "o.h5ad").exists() and not (d / "o.npy").exists()


def test_denoise_never_writes_under_another_name_than_out(run, tmp_path):
    """Issue 35 case 3: ``--data x.npy --out result.h5ad`` used to write ``result.npy``, replacing the
    user's file of that name without --overwrite; the clash is now refused before any work."""
    mine = tmp_path / "result.npy"
    np.save(mine, np.arange(3.0))
    before = mine.read_bytes()
    d = run
    np.save(d / "cells.npy", np.zeros((4, 2), dtype=np.float32))
    result = cli("singlecell", "inverseflow", "denoise", "--run", str(d / "run"), "--data", str(d / "cells.npy"),
                 "--out", str(tmp_path / "result.h5ad"))
    assert_one_line_error(result, "result.h5ad", "'.npy'")
    assert mine.read_bytes() == before and not (tmp_path / "result.h5ad").exists()
    from scigen.singlecell.inverseflow.files import write_output

    with pytest.raises(InvalidInputError, match="ending in '.npy'"):
        write_output(np.zeros((2, 2)), tmp_path / "result.h5ad")
    assert mine.read_bytes() == before
