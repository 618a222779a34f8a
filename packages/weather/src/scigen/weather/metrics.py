"""Nowcast verification scores on numpy arrays, each equal to pysteps' (or skimage's) on the same input.

Fields are ``[..., y, x]`` arrays in physical units (mm/h by default). Definitions:

* categorical scores at a threshold ``thr`` (Jolliffe & Stephenson 2012; pysteps
  ``verification.det_cat_fct``): an event is ``value > thr`` (pysteps' strict rule); with hits H,
  misses M, false alarms F and correct negatives R over all pixels, ``CSI = H / (H + M + F)``,
  ``POD = H / (H + M)``, ``FAR = F / (H + F)``,
  ``HSS = 2 (H R − F M) / ((H + M)(M + R) + (H + F)(F + R))``. Undefined ratios are NaN.
* pooled CSI (Ravuri et al. 2021, Nature 597, Methods "CSI with pooling"): both fields max-pooled over
  non-overlapping ``k × k`` blocks (trailing partial blocks padded with the field minimum, like
  ``skimage.measure.block_reduce(..., np.max)``), then CSI.
* FSS (Roberts & Lean 2008, MWR 136, eq. 5): binary ``value >= thr`` (pysteps' rule here), fractions by
  a ``scale × scale`` moving mean with zero padding, ``FSS = 1 − Σ(Sf − So)² / (Σ Sf² + Σ So²)``.
* ensemble CRPS (Hersbach 2000, eq. 20): of the members' empirical distribution, averaged over pixels
  (equal to ``pysteps.verification.probscores.CRPS`` and properscoring's ``crps_ensemble``).
* energy score (Gneiting & Raftery 2007, JASA 102, eq. 22): each ``[y, x]`` field of the ensemble is one
  vector of pixels; ``ES = mean_i ||x_i − y|| − 1/(2m²) Σ_ij ||x_i − x_j||``, averaged over the leading
  fields (:func:`scigen.core.metrics.energy_score`; scoringrules' ``es_ensemble``).
* variogram score of order 0.5 (Scheuerer & Hamill 2015, MWR 143, eq. 3) of each field's ``pool × pool``
  block means (``pool`` by default the smallest making the grid at most 16 × 16: the score is ``O(m·D²)``
  in the number ``D`` of points; scoringrules' ``vs_ensemble`` on the pooled fields). It scores the
  members' pairwise differences, i.e. the spatial structure; averaged over the leading fields.
  Non-finite pixels (in ``obs`` or any member) are set to 0 in every member and in ``obs`` first, which
  drops them from the ES and the block means.
* spread–skill (Fortin et al. 2014, J. Hydrometeor. 15, eq. 4 / Leutbecher & Palmer 2008): the ensemble
  spread ``sqrt(mean of the members' unbiased variance)`` against the ``RMSE`` of the ensemble mean;
  for a statistically consistent ensemble of ``m`` members ``RMSE ≈ sqrt((m + 1) / m) · spread``, so
  ``spread · sqrt((m + 1) / m) / RMSE`` below 1 is under-dispersion, above 1 over-dispersion.
* :func:`reference_scores`: the same CRPS / ES / VS by ``scoringrules`` and FSS / CRPS by pysteps'
  ``verification`` module (the extras ``scoringrules`` and ``pysteps``), to print beside ours.
* SSIM / PSNR: :func:`scigen.core.metrics.ssim` / ``psnr`` (skimage's definitions, Gaussian window).
* RAPSD: the radially averaged power spectral density (pysteps ``utils.spectral.rapsd``): ``|FFT|² / N``
  averaged over rings of integer radius ``round(|k|)`` from the centre, radii ``0 .. L/2 − 1``.
"""

from __future__ import annotations

import numpy as np

from scigen.core.errors import InvalidInputError

__all__ = ["THRESHOLDS", "categorical_scores", "contingency", "crps", "csi", "energy_score", "fss", "pool_max",
           "pool_mean", "pooled_csi", "psnr", "rapsd", "reference_scores", "spectral_distance", "spread_skill", "ssim",
           "variogram_score", "vs_pool"]

#: default rain-rate thresholds (mm/h) of the categorical scores
THRESHOLDS = (0.5, 2.0, 5.0, 10.0)


def _pair(pred, obs, name: str = "pred") -> tuple[np.ndarray, np.ndarray]:
    p, o = np.asarray(pred, dtype=np.float64), np.asarray(obs, dtype=np.float64)
    if p.shape != o.shape:
        raise InvalidInputError(f"{name} and obs must have the same shape, got {p.shape} and {o.shape}")
    if p.ndim < 2:
        raise InvalidInputError(f"{name} must be a field [..., y, x], got shape {p.shape}")
    return p, o


def contingency(pred, obs, thr: float) -> dict[str, float]:
    """Hits, misses, false alarms and correct negatives of the events ``value > thr`` (NaNs never count)."""
    p, o = _pair(pred, obs)
    ok = np.isfinite(p) & np.isfinite(o)
    pe, oe = (p > thr) & ok, (o > thr) & ok
    return {"hits": float(np.sum(pe & oe)), "misses": float(np.sum(~pe & oe)),
            "false_alarms": float(np.sum(pe & ~oe)), "correct_negatives": float(np.sum(~pe & ~oe & ok))}


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else float("nan")


def categorical_scores(pred, obs, thr: float) -> dict[str, float]:
    """``{"CSI", "POD", "FAR", "HSS"}`` at ``thr`` over every pixel of ``pred`` / ``obs`` (see module doc)."""
    c = contingency(pred, obs, thr)
    H, M, F, R = c["hits"], c["misses"], c["false_alarms"], c["correct_negatives"]
    return {"CSI": _ratio(H, H + M + F), "POD": _ratio(H, H + M), "FAR": _ratio(F, H + F),
            "HSS": _ratio(2 * (H * R - F * M), (H + M) * (M + R) + (H + F) * (F + R))}


def csi(pred, obs, thr: float) -> float:
    """Critical success index ``H / (H + M + F)`` of the events ``value > thr``."""
    return categorical_scores(pred, obs, thr)["CSI"]


def pool_max(field, k: int) -> np.ndarray:
    """Max over non-overlapping ``k × k`` blocks of the last two axes (partial blocks padded with the minimum)."""
    f = np.asarray(field, dtype=np.float64)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InvalidInputError(f"pool size must be a positive int, got {k!r}")
    H, W = f.shape[-2:]
    ph, pw = -H % k, -W % k
    if ph or pw:
        pad = [(0, 0)] * (f.ndim - 2) + [(0, ph), (0, pw)]
        f = np.pad(f, pad, constant_values=np.nanmin(f))
    H, W = f.shape[-2:]
    return f.reshape(*f.shape[:-2], H // k, k, W // k, k).max(axis=(-3, -1))


def pooled_csi(pred, obs, thr: float, k: int) -> float:
    """CSI after ``k × k`` max pooling of both fields (Ravuri et al. 2021)."""
    p, o = _pair(pred, obs)
    return csi(pool_max(p, k), pool_max(o, k), thr)


def fss(pred, obs, thr: float, scale: int) -> float:
    """Fractions skill score at threshold ``thr`` (``>=``) and neighbourhood ``scale`` (pixels), summed over
    every leading field of ``[..., y, x]`` before the ratio (pysteps' accumulation)."""
    from scipy.ndimage import uniform_filter

    p, o = _pair(pred, obs)
    if isinstance(scale, bool) or not isinstance(scale, (int, np.integer)) or scale < 1:
        raise InvalidInputError(f"scale must be a positive int (pixels), got {scale!r}")
    p = np.where(np.isfinite(p), p, thr - 1).reshape(-1, *p.shape[-2:])
    o = np.where(np.isfinite(o), o, thr - 1).reshape(-1, *o.shape[-2:])
    num = den = 0.0
    for pf, of in zip(p, o, strict=True):
        sf, so = (pf >= thr).astype(float), (of >= thr).astype(float)
        if scale > 1:
            sf = uniform_filter(sf, size=scale, mode="constant", cval=0.0)
            so = uniform_filter(so, size=scale, mode="constant", cval=0.0)
        num += np.sum((sf - so) ** 2)
        den += np.sum(sf**2) + np.sum(so**2)
    return float(1 - num / den) if den > 0 else float("nan")


def crps(members, obs, *, axis: int = 0) -> float:
    """Mean ensemble CRPS of ``members`` (members along ``axis``) for ``obs`` over every finite pixel
    (Hersbach 2000 eq. 20: ``E|X − y| − ½ E|X − X'|`` of the empirical distribution)."""
    m = np.moveaxis(np.asarray(members, dtype=np.float64), axis, 0)
    o = np.asarray(obs, dtype=np.float64)
    if m.shape[1:] != o.shape:
        raise InvalidInputError(f"members {m.shape} (members first) and obs {o.shape} do not match")
    xs = np.sort(m.reshape(m.shape[0], -1), axis=0)
    y = o.reshape(-1)
    ok = np.isfinite(y) & np.all(np.isfinite(xs), axis=0)
    xs, y = xs[:, ok], y[ok]
    k = xs.shape[0]
    w = (2 * np.arange(k) - k + 1)[:, None]
    score = np.abs(xs - y).mean(0) - (w * xs).sum(0) / k**2
    return float(score.mean())


def _ensemble_fields(members, obs, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """``[m, F, y, x]`` members and ``[F, y, x]`` obs (every leading field flattened), non-finite pixels zeroed."""
    m = np.moveaxis(np.asarray(members, dtype=np.float64), axis, 0)
    o = np.asarray(obs, dtype=np.float64)
    if m.shape[1:] != o.shape:
        raise InvalidInputError(f"members {m.shape} (members first) and obs {o.shape} do not match")
    if o.ndim < 2:
        raise InvalidInputError(f"obs must be a field [..., y, x], got shape {o.shape}")
    ok = np.isfinite(o) & np.all(np.isfinite(m), axis=0)
    m, o = np.where(ok, m, 0.0), np.where(ok, o, 0.0)
    return m.reshape(m.shape[0], -1, *o.shape[-2:]), o.reshape(-1, *o.shape[-2:])


def energy_score(members, obs, *, axis: int = 0) -> float:
    """Mean over the leading fields of the energy score of ``[y, x]`` fields (members along ``axis``)."""
    import torch

    from scigen.core.metrics import energy_score as core_es

    m, o = _ensemble_fields(members, obs, axis)
    return float(core_es(torch.from_numpy(m.reshape(*m.shape[:2], -1)), torch.from_numpy(o.reshape(o.shape[0], -1))))


def vs_pool(shape: tuple[int, ...], max_side: int = 16) -> int:
    """The smallest block size ``k`` with both pooled sides ``ceil(n / k) <= max_side``."""
    return max(1, -(-max(shape[-2:]) // max_side))


def pool_mean(field, k: int) -> np.ndarray:
    """Mean over non-overlapping ``k × k`` blocks of the last two axes (trailing partial blocks: the mean of
    the pixels they hold)."""
    f = np.asarray(field, dtype=np.float64)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InvalidInputError(f"pool size must be a positive int, got {k!r}")
    H, W = f.shape[-2:]
    rows, cols = np.arange(0, H, k), np.arange(0, W, k)
    s = np.add.reduceat(np.add.reduceat(f, rows, axis=-2), cols, axis=-1)
    n = np.minimum(k, H - rows)[:, None] * np.minimum(k, W - cols)[None, :]
    return s / n


def variogram_score(members, obs, *, axis: int = 0, p: float = 0.5, pool: int | None = None) -> float:
    """Mean over the leading fields of the order-``p`` variogram score of the ``pool × pool`` block means
    (``pool=None``: :func:`vs_pool`, at most 16 × 16 points; ``pool=1``: every pixel, ``O(m·(y·x)²)``)."""
    import torch

    from scigen.core.metrics import variogram_score as core_vs

    m, o = _ensemble_fields(members, obs, axis)
    k = vs_pool(o.shape) if pool is None else pool
    m, o = pool_mean(m, k), pool_mean(o, k)
    return float(core_vs(torch.from_numpy(m.reshape(*m.shape[:2], -1)), torch.from_numpy(o.reshape(o.shape[0], -1)),
                         p=p))


def spread_skill(members, obs, *, axis: int = 0) -> dict[str, float]:
    """``{"spread", "rmse", "ratio"}`` of an ensemble (members along ``axis``, at least 2) over every finite
    pixel (see module doc): ``spread = sqrt(mean var_ddof1)``, ``rmse`` of the ensemble mean, and
    ``ratio = spread · sqrt((m + 1) / m) / rmse`` (1 for a consistent ensemble)."""
    m = np.moveaxis(np.asarray(members, dtype=np.float64), axis, 0)
    o = np.asarray(obs, dtype=np.float64)
    if m.shape[1:] != o.shape:
        raise InvalidInputError(f"members {m.shape} (members first) and obs {o.shape} do not match")
    if m.shape[0] < 2:
        raise InvalidInputError(f"spread_skill needs at least 2 members, got {m.shape[0]}")
    m, o = m.reshape(m.shape[0], -1), o.reshape(-1)
    ok = np.isfinite(o) & np.all(np.isfinite(m), axis=0)
    m, o = m[:, ok], o[ok]
    k = m.shape[0]
    spread = float(np.sqrt(m.var(axis=0, ddof=1).mean()))
    rmse = float(np.sqrt(((m.mean(0) - o) ** 2).mean()))
    return {"spread": spread, "rmse": rmse, "ratio": spread * np.sqrt((k + 1) / k) / rmse if rmse > 0 else float("nan")}


def ssim(pred, obs, *, data_range: float) -> float:
    """Mean SSIM over the leading fields of ``[..., y, x]`` (:func:`scigen.core.metrics.ssim`: skimage's
    ``structural_similarity(gaussian_weights=True, sigma=1.5, use_sample_covariance=False)``)."""
    import torch

    from scigen.core.metrics import ssim as core_ssim

    p, o = _pair(pred, obs)
    p, o = p.reshape(-1, 1, *p.shape[-2:]), o.reshape(-1, 1, *o.shape[-2:])
    win = min(11, *(s if s % 2 else s - 1 for s in p.shape[-2:]))
    return float(core_ssim(torch.from_numpy(p), torch.from_numpy(o), data_range=data_range, win_size=win).mean())


def psnr(pred, obs, *, data_range: float) -> float:
    """Mean PSNR (dB) over the leading fields of ``[..., y, x]`` (:func:`scigen.core.metrics.psnr`)."""
    import torch

    from scigen.core.metrics import psnr as core_psnr

    p, o = _pair(pred, obs)
    p, o = p.reshape(-1, 1, *p.shape[-2:]), o.reshape(-1, 1, *o.shape[-2:])
    return float(core_psnr(torch.from_numpy(p), torch.from_numpy(o), data_range=data_range).mean())


def rapsd(field) -> tuple[np.ndarray, np.ndarray]:
    """``(power, frequency)``: the radially averaged power spectral density of a ``[y, x]`` field (pysteps'
    ``rapsd(field, fft_method=np.fft, return_freq=True)``; frequencies in cycles per pixel)."""
    f = np.asarray(field, dtype=np.float64)
    if f.ndim != 2:
        raise InvalidInputError(f"rapsd needs one [y, x] field, got shape {f.shape}")
    if not np.all(np.isfinite(f)):
        raise InvalidInputError("rapsd: the field holds NaN or inf values")
    M, N = f.shape
    yc = np.arange(-(M // 2), M // 2 + (M % 2))[:, None]
    xc = np.arange(-(N // 2), N // 2 + (N % 2))[None, :]
    r = np.sqrt(xc**2 + yc**2).round().astype(int)
    L = max(M, N)
    radii = np.arange(0, L // 2 + 1 if L % 2 else L // 2)
    psd = np.abs(np.fft.fftshift(np.fft.fft2(f))) ** 2 / f.size
    sums = np.bincount(r.ravel(), weights=psd.ravel(), minlength=radii.size)[: radii.size]
    counts = np.bincount(r.ravel(), minlength=radii.size)[: radii.size]
    return sums / counts, np.fft.fftfreq(L)[radii]


def spectral_distance(pred, obs) -> float:
    """Mean absolute difference of ``log10`` RAPSD (radius ≥ 1) between ``pred`` and ``obs``, averaged over
    the leading fields of ``[..., y, x]`` (ours: 0 = the same spectrum; a blurred field has too little
    small-scale power, which shows at the large radii)."""
    p, o = _pair(pred, obs)
    p, o = p.reshape(-1, *p.shape[-2:]), o.reshape(-1, *o.shape[-2:])
    eps = 1e-12
    d = [np.mean(np.abs(np.log10(rapsd(a)[0][1:] + eps) - np.log10(rapsd(b)[0][1:] + eps))) for a, b in zip(p, o, strict=True)]
    return float(np.mean(d))


def reference_scores(members, obs, *, thr: float, fss_scale: int, axis: int = 0, scoringrules: bool = True,
                     pysteps: bool = True) -> dict[str, float]:
    """The field's own packages on the same ensemble (members along ``axis``) and ``obs``, keyed
    ``"<score>[<package>]"``: ``CRPS`` / ``ES`` / ``VS`` by ``scoringrules`` (estimator ``"nrg"``; ES and VS on the
    fields :func:`energy_score` / :func:`variogram_score` score: non-finite pixels zeroed, VS on the
    :func:`vs_pool` block means) and ``FSS`` (at ``thr``, ``fss_scale``, accumulated over the leading fields,
    averaged over members) / ``CRPS`` by ``pysteps.verification``. Each package must be installed (the
    ``scoringrules`` / ``pysteps`` extras of scigen-weather)."""
    m = np.moveaxis(np.asarray(members, dtype=np.float64), axis, 0)
    o = np.asarray(obs, dtype=np.float64)
    if m.shape[1:] != o.shape:
        raise InvalidInputError(f"members {m.shape} (members first) and obs {o.shape} do not match")
    out: dict[str, float] = {}
    if scoringrules:
        import scoringrules as sr

        ok = np.isfinite(o) & np.all(np.isfinite(m), axis=0)
        out["CRPS[scoringrules]"] = float(np.mean(sr.crps_ensemble(o[ok], m[:, ok], m_axis=0, estimator="nrg")))
        zm, zo = _ensemble_fields(m, o, 0)
        out["ES[scoringrules]"] = float(np.mean(sr.es_ensemble(zo.reshape(zo.shape[0], -1),
                                                               np.moveaxis(zm.reshape(*zm.shape[:2], -1), 0, 1))))
        k = vs_pool(zo.shape)
        pm, po = pool_mean(zm, k), pool_mean(zo, k)
        out["VS[scoringrules]"] = float(np.mean(sr.vs_ensemble(po.reshape(po.shape[0], -1),
                                                               np.moveaxis(pm.reshape(*pm.shape[:2], -1), 0, 1),
                                                               p=0.5)))
    if pysteps:
        from pysteps.verification.probscores import CRPS
        from pysteps.verification.spatialscores import fss_accum, fss_compute, fss_init

        per_member = []
        for member in m:
            acc = fss_init(thr, fss_scale)
            for f, g in zip(member.reshape(-1, *o.shape[-2:]), o.reshape(-1, *o.shape[-2:]), strict=True):
                fss_accum(acc, f, g)
            per_member.append(fss_compute(acc))
        out["FSS[pysteps]"] = float(np.nanmean(per_member))
        out["CRPS[pysteps]"] = float(CRPS(m, o))
    return out
