"""Nowcast benchmark (issue 20): persistence, pysteps LK extrapolation, pysteps STEPS, stage 1 alone and
stage 1 + flow, in one run on the same synthetic windows (and SEVIR when it is cached, ``--sevir``).

    python benchmarks/weather/bench_nowcast.py                  # 32x32, 5 -> 20 frames, 48 test windows
    python benchmarks/weather/bench_nowcast.py --quick          # a smoke run

Writes ``results/nowcast.json`` and ``results/nowcast.md`` (scores per method, CSI per lead, wall time).
Scores: :mod:`scigen.weather.metrics` (each equal to pysteps' / skimage's); "long" = leads 11-20.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from scigen.core.files import atomic_write_text
from scigen.weather import baselines as B
from scigen.weather import metrics as M
from scigen.weather.data.synthetic import synthetic_storms
from scigen.weather.nowcast.forecast import draw_members
from scigen.weather.nowcast.system import Nowcast, NowcastConfig

HERE = Path(__file__).resolve().parent


def scores(fc: np.ndarray, obs: np.ndarray, thresholds, long_from: int) -> dict:
    """``fc [m, W, L, y, x]``, ``obs [W, L, y, x]`` (mm/h)."""
    out = {"CSI-M": float(np.nanmean([M.csi(m, obs, k) for m in fc for k in thresholds]))}
    for k in thresholds:
        out[f"CSI_{k:g}"] = float(np.nanmean([M.csi(m, obs, k) for m in fc]))
    out["CSI_pool16_2"] = float(np.nanmean([M.pooled_csi(m, obs, 2.0, 16) for m in fc]))
    out["FSS"] = float(np.nanmean([M.fss(m, obs, 0.5, 8) for m in fc]))
    out["CRPS"] = M.crps(fc, obs)
    out["SSIM"] = float(np.mean([M.ssim(np.log1p(m), np.log1p(obs), data_range=float(np.log1p(obs.max()))) for m in fc]))
    out["spectral_distance"] = float(np.mean([M.spectral_distance(m, obs) for m in fc]))
    lf, lo = fc[:, :, long_from:], obs[:, long_from:]
    out["CRPS_long"] = M.crps(lf, lo)
    out["FSS_long"] = float(np.nanmean([M.fss(m, lo, 0.5, 8) for m in lf]))
    out["spectral_distance_long"] = float(np.mean([M.spectral_distance(m, lo) for m in lf]))
    out["CSI2_per_lead"] = [float(np.nanmean([M.csi(m[:, l], obs[:, l], 2.0) for m in fc])) for l in range(obs.shape[1])]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--steps", type=int, default=1600, help="training steps (both stages)")
    ap.add_argument("--windows", type=int, default=48)
    ap.add_argument("--members", type=int, default=8)
    ap.add_argument("--preset", default="tiny")
    ap.add_argument("--sigma-s", type=float, default=None)
    ap.add_argument("--flow-share", type=float, default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=str(HERE / "results" / "nowcast"))
    a = ap.parse_args()
    if a.quick:
        a.steps, a.windows, a.members = 40, 4, 2
    torch.set_num_threads(a.threads)
    over = {k: v for k, v in (("sigma_s", a.sigma_s), ("flow_share", a.flow_share)) if v is not None}
    cfg = NowcastConfig.preset(a.preset, **over, train={"max_steps": a.steps, "progress": False})
    C, L = cfg.context_frames, cfg.horizon
    train = synthetic_storms(8 if a.quick else 96, 30, 32, seed=0)
    test = synthetic_storms(a.windows, C + L, 32, seed=1)
    model = Nowcast(cfg)
    t = time.perf_counter()
    model.fit(train, logger=None)
    train_s = time.perf_counter() - t
    rows = model.windows(test, "test", stride=C + L)[: a.windows]
    ctx_z = rows[:, :C]
    obs = model.transform.inverse(rows[:, C:].cpu().numpy())
    ctx = model.transform.inverse(ctx_z.cpu().numpy())
    fcs, wall = {}, {}

    def timed(name, fn):
        t0 = time.perf_counter()
        fcs[name] = fn()
        wall[name] = (time.perf_counter() - t0) / rows.shape[0]

    timed("persistence", lambda: np.stack([B.persistence(c, L) for c in ctx])[None])
    timed("pysteps LK extrapolation", lambda: np.stack([B.extrapolation_nowcast(c, L) for c in ctx])[None])
    timed("pysteps STEPS", lambda: np.stack([B.steps_nowcast(c, L, a.members, seed=i) for i, c in enumerate(ctx)], axis=1))
    with torch.no_grad():
        timed("stage 1 (MSE U-Net)", lambda: model.transform.inverse(draw_members(model, ctx_z, 1, 0, None, None, "mean").numpy()))
        timed("stage 1 + flow", lambda: model.transform.inverse(draw_members(model, ctx_z, a.members, 0, None, None).numpy()))
    thr = (0.5, 2.0, 5.0, 10.0)
    res = {name: {**scores(fc, obs, thr, L // 2), "seconds_per_window": wall[name], "members": int(fc.shape[0])}
           for name, fc in fcs.items()}
    meta = {"grid": "32x32", "frames": f"{C} -> {L}", "test_windows": int(rows.shape[0]), "train_events": int(train.attrs["motion_u"].size),
            "train_steps": a.steps, "train_seconds": train_s, "preset": a.preset, "config": cfg.model_dump(mode="json"),
            "threads": a.threads, "units": "mm/h"}
    out = Path(a.out)
    atomic_write_text(out.with_suffix(".json"), json.dumps({"meta": meta, "results": res}, indent=2) + "\n")
    cols = ["CSI-M", "CSI_2", "CSI_pool16_2", "FSS", "CRPS", "SSIM", "spectral_distance", "CRPS_long", "FSS_long",
            "spectral_distance_long", "seconds_per_window"]
    lines = [f"# Nowcast benchmark ({meta['grid']}, {meta['frames']} frames, {meta['test_windows']} windows, "
             f"{a.steps} training steps, preset {a.preset}, train {train_s:.0f} s)", "",
             "| method | members | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
    for name, r in res.items():
        lines.append(f"| {name} | {r['members']} | " + " | ".join(f"{r[c]:.4g}" for c in cols) + " |")
    lines += ["", "CSI at 2 mm/h per lead (1..20):", ""]
    for name, r in res.items():
        lines.append(f"- {name}: " + " ".join(f"{v:.2f}" for v in r["CSI2_per_lead"]))
    atomic_write_text(out.with_suffix(".md"), "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
