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
