"""Image fidelity: PSNR and SSIM.

Inputs are ``[H, W]`` (one grey image), ``[C, H, W]`` (one image) or ``[B, C, H, W]`` (a batch);
``pred`` and ``target`` have the same shape. ``data_range`` (max − min of the possible values, e.g.
1.0 for images in [0, 1] or 255 for 8-bit) is required, never guessed. Outputs: a 0-d tensor for a
single image, ``[B]`` for a batch.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from scigen.core.validation import check_finite_positive, check_tensor


def _as_batch(pred: object, target: object) -> tuple[Tensor, Tensor, bool]:
    pred = check_tensor(pred, "pred")
    target = check_tensor(target, "target")
    if pred.shape != target.shape:
        raise ValueError(
            f"pred and target must have the same shape, got {tuple(pred.shape)} and {tuple(target.shape)}"
        )
    if pred.dim() not in (2, 3, 4):
        raise ValueError(f"images must be [H, W], [C, H, W] or [B, C, H, W], got shape {tuple(pred.shape)}")
    single = pred.dim() < 4
    while pred.dim() < 4:
        pred, target = pred.unsqueeze(0), target.unsqueeze(0)
    dtype = torch.promote_types(pred.dtype, target.dtype)
    return pred.to(dtype), target.to(dtype), single


def psnr(pred: Tensor, target: Tensor, *, data_range: float) -> Tensor:
    """Peak signal-to-noise ratio in dB: ``10·log10(data_range² / MSE)``, MSE over each image's C·H·W values.

    Returns ``+inf`` for identical images. A 0-d tensor for one image, ``[B]`` for a batch.
    """
    data_range = check_finite_positive(data_range, "data_range")
    p, t, single = _as_batch(pred, target)
    mse = ((p - t) ** 2).flatten(1).mean(1)
    out = 10.0 * torch.log10(data_range**2 / mse)
    return out[0] if single else out


def _gaussian_window(size: int, sigma: float, dtype: torch.dtype, device: torch.device) -> Tensor:
    r = torch.arange(size, dtype=torch.float64, device=device) - (size - 1) / 2
    g = torch.exp(-(r**2) / (2 * sigma**2))
    return (g / g.sum()).to(dtype)


def ssim(
    pred: Tensor,
    target: Tensor,
    *,
    data_range: float,
    win_size: int = 11,
    sigma: float = 1.5,
    k1: float = 0.01,
    k2: float = 0.03,
    window: str = "gaussian",
    sample_covariance: bool = False,
) -> Tensor:
    """Mean structural similarity (Wang, Bovik, Sheikh & Simoncelli 2004, IEEE TIP 13(4), eq. 13 and §III-C).

    Local statistics are weighted by a normalised ``win_size × win_size`` Gaussian window (defaults 11,
    ``sigma=1.5``) per channel, with population (not sample) covariances; at every position where the
    window fits inside the image ('valid')

        SSIM = (2 μx μy + C1)(2 σxy + C2) / ((μx² + μy² + C1)(σx² + σy² + C2)),
        C1 = (k1·data_range)², C2 = (k2·data_range)²,

    and the map is averaged over positions and channels. This equals
    ``skimage.metrics.structural_similarity(..., gaussian_weights=True, sigma=1.5,
    use_sample_covariance=False, data_range=...)`` (which crops the same border). Returns a 0-d tensor
    for one image, ``[B]`` for a batch; 1 for identical images.

    ``window="uniform"`` weighs the ``win_size × win_size`` window equally and ``sample_covariance=True``
    scales the local (co)variances by ``NP / (NP − 1)`` (``NP = win_size²``): with ``win_size=7`` this is
    scikit-image's default ``structural_similarity(..., data_range=...)``, the number most imaging papers
    report.
    """
    data_range = check_finite_positive(data_range, "data_range")
    sigma = check_finite_positive(sigma, "sigma")
    if int(win_size) != win_size or win_size < 1 or win_size % 2 == 0:
        raise ValueError(f"win_size must be an odd positive integer, got {win_size}")
    p, t, single = _as_batch(pred, target)
    B, C, H, W = p.shape
    if H < win_size or W < win_size:
        raise ValueError(f"images must be at least {win_size}×{win_size} (win_size), got {H}×{W}")
    if window not in ("gaussian", "uniform"):
        raise ValueError(f"window must be 'gaussian' or 'uniform', got {window!r}")
    if window == "gaussian":
        g = _gaussian_window(int(win_size), sigma, p.dtype, p.device)
    else:
        g = torch.full((int(win_size),), 1.0 / win_size, dtype=p.dtype, device=p.device)
    wr = g.reshape(1, 1, 1, -1).expand(C, 1, 1, -1)
    wc = g.reshape(1, 1, -1, 1).expand(C, 1, -1, 1)

    def filt(z: Tensor) -> Tensor:
        return F.conv2d(F.conv2d(z, wr, groups=C), wc, groups=C)

    mu_x, mu_y = filt(p), filt(t)
    sxx = filt(p * p) - mu_x**2
    syy = filt(t * t) - mu_y**2
    sxy = filt(p * t) - mu_x * mu_y
    if sample_covariance:
        n_p = float(win_size) ** 2
        sxx, syy, sxy = (v * (n_p / (n_p - 1)) for v in (sxx, syy, sxy))
    c1, c2 = (k1 * data_range) ** 2, (k2 * data_range) ** 2
    smap = ((2 * mu_x * mu_y + c1) * (2 * sxy + c2)) / ((mu_x**2 + mu_y**2 + c1) * (sxx + syy + c2))
    out = smap.flatten(1).mean(1)
    return out[0] if single else out
