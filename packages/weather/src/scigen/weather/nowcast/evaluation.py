"""Scoring nowcasts on windows: stage 1, stage 1 + flow and persistence, in the data's units.

Names: ``CSI_<thr>`` (mean over leads and windows of the pooled contingency, per threshold),
``POD_<thr>``, ``FAR_<thr>``, ``HSS_<thr>``; ``CSI-M`` (the mean CSI over thresholds); ``CSI_pool4`` /
``CSI_pool16`` (max-pooled, at the second threshold); ``FSS`` (first threshold, ``fss_scale``);
``CRPS`` (ensemble; a deterministic forecast's CRPS is its MAE); ``ES`` / ``VS`` (the energy score of each
``[y, x]`` field and the order-0.5 variogram score of its block means, the ensemble's spatial structure;
a deterministic forecast's ES is its Euclidean error); ``SSIM`` / ``PSNR`` (in model units,
data range 1); ``spectral_distance`` (log10 RAPSD gap). Each carries a prefix: ``persistence/``,
``stage1/``, ``flow/`` (flow scores are of the ensemble members, CRPS of the ensemble); ``*_last`` =
the same at the farthest lead. See :mod:`scigen.weather.metrics` for the definitions.

``references`` adds the same scores computed by the field's packages, beside ours:
``CRPS[scoringrules]``, ``ES[scoringrules]``, ``VS[scoringrules]`` (the ``scoringrules`` extra) and
``FSS[pysteps]``, ``CRPS[pysteps]`` (``pysteps.verification``, the ``pysteps`` extra); ``None``: each
when installed, ``True``: both required, ``False``: none.
"""

from __future__ import annotations

import numpy as np

from scigen.core.validation import optional_package
from scigen.weather import metrics as M

__all__ = ["evaluate_windows", "score_forecast"]


def score_forecast(members: np.ndarray, obs: np.ndarray, *, thresholds, fss_scale: int,
                   to_model=None, references: bool | None = False) -> dict[str, float]:
    """Scores of ``members [m, W, L, H, W]`` against ``obs [W, L, H, W]`` (physical units); ``to_model``
    maps values to ``[0, 1]`` model units for SSIM / PSNR (identity when ``None``); ``references``: see the
    module doc (default ``False`` here)."""
    out: dict[str, float] = {}
    thr = list(thresholds)
    for k in thr:
        s = [M.categorical_scores(members[i], obs, k) for i in range(len(members))]
        for name in ("CSI", "POD", "FAR", "HSS"):
            out[f"{name}_{k:g}"] = float(np.nanmean([d[name] for d in s]))
    out["CSI-M"] = float(np.nanmean([out[f"CSI_{k:g}"] for k in thr]))
    k2 = thr[min(1, len(thr) - 1)]
    for p in (4, 16):
        out[f"CSI_pool{p}"] = float(np.nanmean([M.pooled_csi(m, obs, k2, p) for m in members]))
    out["FSS"] = float(np.nanmean([M.fss(m, obs, thr[0], fss_scale) for m in members]))
    out["CRPS"] = M.crps(members, obs)
    out["ES"] = M.energy_score(members, obs)
    out["VS"] = M.variogram_score(members, obs)
    use = {pkg: optional_package(references, pkg, install=f"scigen-weather[{pkg}]", what="references=True")
           for pkg in ("scoringrules", "pysteps")}
    if any(use.values()):
        out.update(M.reference_scores(members, obs, thr=thr[0], fss_scale=fss_scale, **use))
    zm = members if to_model is None else to_model(members)
    zo = obs if to_model is None else to_model(obs)
    out["SSIM"] = float(np.mean([M.ssim(m, zo, data_range=1.0) for m in zm]))
    out["PSNR"] = float(np.mean([M.psnr(m, zo, data_range=1.0) for m in zm]))
    out["spectral_distance"] = float(np.mean([M.spectral_distance(m, obs) for m in members]))
    last = members[:, :, -1], obs[:, -1]
    out["CSI-M_last"] = float(np.nanmean([M.csi(m, last[1], k) for m in last[0] for k in thr]))
    out["FSS_last"] = float(np.nanmean([M.fss(m, last[1], thr[0], fss_scale) for m in last[0]]))
    out["CRPS_last"] = M.crps(last[0], last[1])
    out["spectral_distance_last"] = float(np.mean([M.spectral_distance(m, last[1]) for m in last[0]]))
    return out


def evaluate_windows(model, rows, *, n_samples=None, seed=None, method=None, steps=None,
                     references: bool | None = None) -> dict[str, float]:
    """Score persistence, stage 1 and stage 1 + flow on the windows ``rows [W, C + L, H, W]`` (model units)."""
    from scigen.weather.nowcast.forecast import draw_members

    c = model.config
    tf = model.transform
    ctx, target = rows[:, : c.context_frames], rows[:, c.context_frames :]
    obs = tf.inverse(target.cpu().numpy())
    last = tf.inverse(ctx[:, -1:].cpu().numpy())
    persistence = np.repeat(last, c.horizon, axis=1)[None]
    mean = tf.inverse(draw_members(model, ctx, 1, seed, method, steps, "mean").cpu().numpy())
    flow = tf.inverse(draw_members(model, ctx, n_samples, seed, method, steps, "flow").cpu().numpy())
    kw = dict(thresholds=c.thresholds, fss_scale=c.fss_scale, to_model=tf.forward, references=references)
    out: dict[str, float] = {}
    for name, fc in (("persistence", persistence), ("stage1", mean), ("flow", flow)):
        out.update({f"{name}/{k}": v for k, v in score_forecast(fc, obs, **kw).items()})
    out["windows"] = float(rows.shape[0])
    return out
