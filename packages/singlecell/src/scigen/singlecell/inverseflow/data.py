"""Inverse Flow's inputs and offline data: observations from AnnData / numpy / xarray, and the truth-known
sets of the paper's protocol (the 2-D circle toy, scikit-image's bundled images, pbmc68k_reduced), each
with synthetic noise from a known noise model.

Observations are either **vectors** (cells × features: an AnnData's ``X`` or ``layers[layer]``, or a 2-D
array) or **images**: a numpy / torch array ``[N, H, W]`` (grayscale stack) or ``[N, C, H, W]``, or an
``xarray.DataArray`` whose last two dims are the image axes (``(image, y, x)`` or ``(image, channel, y,
x)``). A single image ``[H, W]`` is passed as ``image[None]`` (a 2-D array is a cells × features table).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch
from torch import Tensor

from scigen.core.errors import InvalidInputError
from scigen.core.validation import check_real
from scigen.singlecell.inverseflow.noise import Gaussian, NoiseModel

__all__ = ["Observations", "circle_toy", "noisy_images", "noisy_pbmc68k", "random_crops", "read_observations", "skimage_image"]


@dataclasses.dataclass
class Observations:
    """Noisy observations as a float32 tensor plus what is needed to write results back."""

    values: Tensor  # [N, d] (vectors) or [N, C, H, W] (images)
    kind: str  # "vectors" | "images"
    source: str  # "anndata" | "array" | "xarray"
    layer: str | None = None
    squeeze_channel: bool = False  # a [N, H, W] input: drop the channel axis on output
    template: Any = None  # the xarray DataArray, for its dims/coords


def _finite(arr: np.ndarray, name: str) -> None:
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InvalidInputError(f"{name} has {int(bad.sum())} NaN/inf value(s), first at index {idx}")


_COMPLEX_HINT = "denoise the real and imaginary parts as two features (or two channels) of a real array"


def read_observations(data: Any, *, layer: str | None = None, name: str = "data") -> Observations:
    """Validate and convert ``data`` (see the module docstring); errors name the field and the value."""
    import anndata

    if isinstance(data, anndata.AnnData):
        from scigen.singlecell.io import check_anndata, read_rep

        check_anndata(data, name)
        arr = read_rep(data, layer=layer)
        field = f"{name}.layers[{layer!r}]" if layer is not None else f"{name}.X"
        _finite(arr, field)
        return Observations(torch.as_tensor(arr, dtype=torch.float32), "vectors", "anndata", layer=layer)
    if layer is not None:
        raise InvalidInputError(f"layer={layer!r} applies to AnnData input only, got {type(data).__name__}")
    template = None
    source = "array"
    if type(data).__module__.startswith("xarray"):
        if not hasattr(data, "dims") or not hasattr(data, "values"):
            raise InvalidInputError(f"{name}: pass an xarray.DataArray (a Dataset: pick the variable), "
                                    f"got {type(data).__name__}")
        template, source = data, "xarray"
        arr = np.asarray(data.values)
    elif isinstance(data, Tensor):
        arr = data.detach().cpu().numpy()
    elif isinstance(data, np.ndarray):
        arr = data
    else:
        raise InvalidInputError(f"{name} must be an AnnData, a numpy/torch array or an xarray.DataArray, "
                                f"got {type(data).__name__}")
    check_real(arr, name, hint=_COMPLEX_HINT)
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise InvalidInputError(f"{name} must hold numbers, got dtype {arr.dtype}")
    arr = np.asarray(arr, dtype=np.float64)
    if arr.size == 0:
        raise InvalidInputError(f"{name} is empty (shape {arr.shape})")
    _finite(arr, name)
    if arr.ndim == 2 and source == "array":
        return Observations(torch.as_tensor(arr, dtype=torch.float32), "vectors", source)
    if arr.ndim == 3:
        return Observations(torch.as_tensor(arr[:, None], dtype=torch.float32), "images", source,
                            squeeze_channel=True, template=template)
    if arr.ndim == 4:
        return Observations(torch.as_tensor(arr, dtype=torch.float32), "images", source, template=template)
    raise InvalidInputError(f"{name} has shape {arr.shape} (rank {arr.ndim}): images must be [N, H, W] or "
                            "[N, C, H, W] (a single image [H, W]: pass image[None]), cells a 2-D [n, features] "
                            "array or an AnnData")


def write_like(obs: Observations, values: Tensor, attrs: dict[str, Any] | None = None) -> Any:
    """``values`` (same layout as ``obs.values``) back in the input's type: numpy, or an xarray DataArray
    with the input's dims and coords (``attrs`` added)."""
    v = values.detach().cpu().numpy()
    if obs.squeeze_channel:
        v = v[:, 0]
    if obs.source == "xarray":
        import xarray as xr

        t = obs.template
        return xr.DataArray(v.astype(t.dtype if np.issubdtype(t.dtype, np.floating) else np.float32),
                            dims=t.dims, coords=t.coords, attrs={**dict(t.attrs), **(attrs or {})}, name=t.name)
    return v


def random_crops(images: Tensor, patch: int, n: int, *, factor: int = 1, seed: int = 0) -> Tensor:
    """``n`` random ``p × p`` crops of ``images [N, C, H, W]`` (``p`` = ``patch``, cut to the images and to a
    multiple of ``factor``), seeded."""
    N, _, H, W = images.shape
    p = min(patch, H - H % factor, W - W % factor)
    if p < factor or p < 1:
        raise InvalidInputError(f"images of size {H}x{W} are too small (need at least {factor} pixels a side)")
    g = torch.Generator().manual_seed(seed)
    i = torch.randint(0, N, (n,), generator=g)
    top = torch.randint(0, H - p + 1, (n,), generator=g)
    left = torch.randint(0, W - p + 1, (n,), generator=g)
    return torch.stack([images[a, :, b:b + p, c:c + p]
                        for a, b, c in zip(i.tolist(), top.tolist(), left.tolist(), strict=True)])


# ---------------------------------------------------------------------------------------------- data sets
def circle_toy(n_per_point: int = 1000, *, sigma: float = 0.2, seed: int = 0, noise: NoiseModel | None = None):
    """The official notebook's toy: 8 points on the unit circle, each repeated ``n_per_point`` times, plus
    noise (default ``Gaussian(0.2)``). An AnnData: ``X`` = noisy, ``layers["clean"]`` = truth,
    ``obs["point"]`` = which of the 8 points."""
    import anndata
    import pandas as pd

    angles = 2 * np.pi * np.arange(8) / 8
    centres = np.stack([np.cos(angles), np.sin(angles)], 1)
    clean = np.repeat(centres, n_per_point, axis=0)
    noise = Gaussian(sigma) if noise is None else noise
    g = torch.Generator().manual_seed(seed)
    noisy = noise.draw(torch.as_tensor(clean, dtype=torch.float64), g).numpy()
    obs = pd.DataFrame({"point": pd.Categorical(np.repeat(np.arange(8), n_per_point).astype(str))},
                       index=[f"cell_{i}" for i in range(len(clean))])
    ad = anndata.AnnData(X=noisy.astype(np.float32), obs=obs, var=pd.DataFrame(index=["x", "y"]))
    ad.layers["clean"] = clean.astype(np.float32)
    ad.uns["noise"] = noise.spec()
    return ad


def skimage_image(name: str = "camera", *, size: int | None = None) -> np.ndarray:
    """A grayscale image bundled in scikit-image's wheel (no network), as float64 in [0, 1]; ``size``
    crops the centre ``size × size``."""
    import skimage.data

    bundled = ("camera", "coins", "moon", "page", "text", "cell", "astronaut", "coffee", "chelsea")
    if name not in bundled:
        raise InvalidInputError(f"image {name!r} is not one of the bundled images {bundled}")
    img = getattr(skimage.data, name)()
    if img.ndim == 3:
        img = img[..., :3] @ np.array([0.2125, 0.7154, 0.0721])
    img = np.asarray(img, dtype=np.float64)
    img = img / (255.0 if img.max() > 1 else 1.0)
    if size is not None:
        h, w = img.shape
        if size > min(h, w):
            raise InvalidInputError(f"size {size} exceeds the image {name!r} of shape {img.shape}")
        top, left = (h - size) // 2, (w - size) // 2
        img = img[top:top + size, left:left + size]
    return img


def noisy_images(names=("camera",), noise: NoiseModel | None = None, *, size: int | None = 128,
                 seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(noisy, clean)`` stacks ``[N, H, W]`` of bundled images with synthetic noise (default Gaussian
    σ = 25/255, the paper's)."""
    clean = np.stack([skimage_image(n, size=size) for n in names])
    noise = Gaussian(25 / 255) if noise is None else noise
    noisy = noise.draw(torch.as_tensor(clean[:, None]), torch.Generator().manual_seed(seed))[:, 0].numpy()
    return noisy, clean


def noisy_pbmc68k(noise: NoiseModel | None = None, *, seed: int = 0):
    """scanpy's bundled ``pbmc68k_reduced`` (700 cells): ``layers["clean"]`` = the log-normalised matrix
    (``.raw.X``, 765 genes), ``X`` = it plus known synthetic noise (default ``Gaussian(0.5)``)."""
    import anndata
    import scanpy as sc

    ref = sc.datasets.pbmc68k_reduced()
    clean = ref.raw.X.toarray() if hasattr(ref.raw.X, "toarray") else np.asarray(ref.raw.X)
    noise = Gaussian(0.5) if noise is None else noise
    noisy = noise.draw(torch.as_tensor(clean, dtype=torch.float64), torch.Generator().manual_seed(seed)).numpy()
    ad = anndata.AnnData(X=noisy.astype(np.float32), obs=ref.obs.copy(), var=ref.raw.var.copy())
    ad.layers["clean"] = clean.astype(np.float32)
    ad.uns["noise"] = noise.spec()
    return ad
