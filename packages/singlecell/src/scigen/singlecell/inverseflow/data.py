"""Inverse Flow's inputs and offline data: observations from AnnData / numpy / xarray, and the truth-known
sets of the paper's protocol (the 2-D circle toy, scikit-image's bundled images, pbmc68k_reduced), each
with synthetic noise from a known noise model.

Observations are either **vectors** (cells × features: an AnnData's ``X`` or ``layers[layer]``, or a 2-D
array with ``kind="vectors"``) or **images**: a numpy / torch array ``[N, H, W]`` (grayscale stack) or
``[N, C, H, W]``, or an ``xarray.DataArray`` whose last two dims are the image axes (``(image, y, x)`` or
``(image, channel, y, x)``). A single image ``[H, W]`` (or ``[C, H, W]``) is passed with ``kind="image"``
(or as ``image[None]``) and comes back in its own shape.

A plain 2-D array is ambiguous (one ``[H, W]`` image, or a cells × features table), so it is never guessed:
without ``kind`` it is refused with a message naming both choices, unless a trained model's kind
(``vectors``) already decides it. ``kind``: ``None`` (decide from the input), ``"vectors"``, ``"images"``
(a stack) or ``"image"`` (one image).
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

__all__ = ["KINDS", "Observations", "circle_toy", "iter_rows", "noisy_images", "noisy_pbmc68k", "random_crops",
           "read_observations", "skimage_image"]


@dataclasses.dataclass
class Observations:
    """Noisy observations as a float32 tensor plus what is needed to write results back."""

    values: Tensor  # [N, d] (vectors) or [N, C, H, W] (images)
    kind: str  # "vectors" | "images"
    source: str  # "anndata" | "array" | "xarray"
    layer: str | None = None
    squeeze_channel: bool = False  # a [N, H, W] input: drop the channel axis on output
    template: Any = None  # the xarray DataArray, for its dims/coords
    squeeze_batch: bool = False  # one image given with kind="image": drop the stack axis on output
    matrix: Any = None  # AnnData input: the (possibly sparse) matrix the values were read from


KINDS = (None, "vectors", "images", "image")


def _finite(arr: np.ndarray, name: str) -> None:
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InvalidInputError(f"{name} has {int(bad.sum())} NaN/inf value(s), first at index {idx}")


_COMPLEX_HINT = "denoise the real and imaginary parts as two features (or two channels) of a real array"


def read_observations(data: Any, *, layer: str | None = None, name: str = "data", kind: str | None = None,
                      trained: str | None = None, dense: bool = True) -> Observations:
    """Validate and convert ``data`` (see the module docstring); errors name the field and the value.

    ``kind``: the caller's reading of the input (module docstring); ``trained``: the kind a trained model
    was fitted on (``"vectors"`` makes a plain 2-D array a table). ``dense=False`` keeps an AnnData's
    matrix unread (``values`` is then empty; :func:`iter_rows` reads it block by block)."""
    import anndata

    if kind not in KINDS:
        raise InvalidInputError(f"kind={kind!r} is not one of 'vectors' (cells x features), 'images' (a stack "
                                "[N, H, W] / [N, C, H, W]) or 'image' (one [H, W] / [C, H, W] image)")
    if isinstance(data, anndata.AnnData):
        from scigen.singlecell.io import _matrix, check_anndata

        if kind not in (None, "vectors"):
            raise InvalidInputError(f"kind={kind!r}: an AnnData holds cells x features (kind='vectors'); pass "
                                    "images as a numpy array or an xarray.DataArray")
        check_anndata(data, name)
        field = f"{name}.layers[{layer!r}]" if layer is not None else f"{name}.X"
        matrix = _matrix(data, None, layer)  # a missing layer: MissingKeyError listing the present ones
        if not dense:
            return Observations(torch.empty(0, data.n_vars), "vectors", "anndata", layer=layer, matrix=matrix)
        values = torch.cat([block for _, block in iter_rows(data, layer=layer, name=field)]) if data.n_obs else \
            torch.empty(0, data.n_vars)
        return Observations(values, "vectors", "anndata", layer=layer, matrix=matrix)
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
    shape = tuple(arr.shape)
    if kind is None and arr.ndim == 2 and source == "array":
        if trained == "vectors":
            kind = "vectors"
        else:
            what = "this model was trained on images; " if trained == "images" else ""
            raise InvalidInputError(
                f"{name} is a 2-D array of shape {shape}: {what}pass kind='image' if it is one [H, W] image, "
                "kind='vectors' if it is a cells x features table (or give images as an [N, H, W] / "
                "[N, C, H, W] stack, cells as an AnnData)")
    if kind == "vectors":
        if arr.ndim != 2 or source != "array":
            raise InvalidInputError(f"kind='vectors' needs a 2-D numpy/torch array [cells, features], got "
                                    f"{'an xarray.DataArray' if source == 'xarray' else 'an array'} of shape {shape}")
        return Observations(torch.as_tensor(arr, dtype=torch.float32), "vectors", source)
    if kind == "image":
        if arr.ndim not in (2, 3):
            raise InvalidInputError(f"kind='image' needs one image [H, W] or [C, H, W], got shape {shape} "
                                    "(a stack [N, H, W] / [N, C, H, W]: kind='images' or no kind)")
        img = torch.as_tensor(arr, dtype=torch.float32)
        return Observations(img[None, None] if arr.ndim == 2 else img[None], "images", source,
                            squeeze_channel=arr.ndim == 2, squeeze_batch=True, template=template)
    if arr.ndim == 3:
        return Observations(torch.as_tensor(arr[:, None], dtype=torch.float32), "images", source,
                            squeeze_channel=True, template=template)
    if arr.ndim == 4:
        return Observations(torch.as_tensor(arr, dtype=torch.float32), "images", source, template=template)
    hint = ("one image [H, W]: pass kind='image'" if arr.ndim == 2 else
            "a single image [H, W]: pass kind='image'")
    raise InvalidInputError(f"{name} has shape {shape} (rank {arr.ndim}): images must be [N, H, W] or "
                            f"[N, C, H, W] ({hint}), cells a 2-D [n, features] array with kind='vectors' "
                            "or an AnnData")


#: rows of an AnnData matrix densified at a time (``read_observations``, ``InverseFlow.denoise``)
ROW_BLOCK = 4096


def iter_rows(adata: Any, *, layer: str | None = None, name: str = "data", block: int | None = None):
    """``(rows, values [b, features] float32)`` of an AnnData's ``X`` / ``layers[layer]``, ``block`` rows at
    a time (default :data:`ROW_BLOCK`): a sparse (or backed) matrix is never densified whole. Each block is
    checked (real, finite)."""
    from scigen.singlecell.io import read_rep

    block = ROW_BLOCK if block is None else block

    for start in range(0, adata.n_obs, block):
        rows = np.arange(start, min(start + block, adata.n_obs))
        arr = read_rep(adata, rows=rows, layer=layer)
        bad = ~np.isfinite(arr)
        if bad.any():
            i, j = (int(v) for v in np.argwhere(bad)[0])
            where = f" (counted in rows {start}..{rows[-1]})" if adata.n_obs > block else ""
            raise InvalidInputError(f"{name} has {int(bad.sum())} NaN/inf value(s), first at index "
                                    f"({start + i}, {j}){where}")
        yield rows, torch.as_tensor(arr, dtype=torch.float32)


def write_like(obs: Observations, values: Tensor, attrs: dict[str, Any] | None = None) -> Any:
    """``values`` (same layout as ``obs.values``) back in the input's type: numpy, or an xarray DataArray
    with the input's dims and coords (``attrs`` added)."""
    v = values.detach().cpu().numpy()
    if obs.squeeze_channel:
        v = v[:, 0]
    if obs.squeeze_batch:
        v = v[0]
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


SKIMAGE_INSTALL = 'pip install "scigen-singlecell[images]"  (or: pip install scikit-image)'


def _skimage_data():
    """``skimage.data``, or a :class:`~scigen.datasets.errors.MissingPackageError` naming the extra."""
    from scigen.datasets.bundled import package_dir
    from scigen.datasets.errors import MissingPackageError

    package_dir("skimage", SKIMAGE_INSTALL)
    try:
        import skimage.data
    except ImportError as exc:
        raise MissingPackageError(f"scikit-image is installed but fails to import ({exc}); reinstall with: "
                                  f"{SKIMAGE_INSTALL}") from exc
    return skimage.data


def skimage_image(name: str = "camera", *, size: int | None = None) -> np.ndarray:
    """A grayscale image bundled in scikit-image's wheel (no network), as float64 in [0, 1]; ``size``
    crops the centre ``size × size``. scikit-image is the optional extra ``scigen-singlecell[images]``;
    without it a :class:`~scigen.datasets.errors.MissingPackageError` (an ``ImportError``) names the extra."""
    skimage_data = _skimage_data()

    bundled = ("camera", "coins", "moon", "page", "text", "cell", "astronaut", "coffee", "chelsea")
    if name not in bundled:
        raise InvalidInputError(f"image {name!r} is not one of the bundled images {bundled}")
    img = getattr(skimage_data, name)()
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
