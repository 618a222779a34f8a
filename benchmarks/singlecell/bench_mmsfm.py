"""MMSFM benchmark: triplet (k=2) vs pairwise (k=1, SF2M-like) vs OT-CFM (sigma=0), hold-one-out.

Datasets: S-Gaussians and α-Gaussians (each interior marginal held out in turn) and the krumsiek11
time course (scanpy's bundled simulation binned to 6 irregular times). Metrics at the held-out time:
W1, W2_squared (not rooted), MMD_G. Also times a training step's spline with the vectorised torch
PCHIP against one scipy PchipInterpolator per sample (the reference code's approach).

    python benchmarks/singlecell/bench_mmsfm.py [--steps 1000] [--quick] [--out benchmarks/singlecell/results]

Writes ``results.json`` and ``results.md``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import torch

warnings.filterwarnings("ignore")

VARIANTS = {
    "triplet": {"k": 2, "sigma": 0.15},
    "pairwise": {"k": 1, "sigma": 0.15},
    "ot-cfm": {"k": 1, "sigma": 0.0},
}


def spline_timing(b: int = 64, d: int = 2, windows: int = 5, reps: int = 20) -> dict:
    from scipy.interpolate import PchipInterpolator

    from scigen.singlecell.mmsfm.spline import Spline

    rng = np.random.default_rng(0)
    knots = np.tile(np.array([0.0, 1 / 6, 2 / 6]), (windows * b, 1))
    y = rng.normal(size=(windows * b, 3, d))
    t = rng.uniform(0, 2 / 6, windows * b)
    kt, yt, tt = torch.tensor(knots), torch.tensor(y), torch.tensor(t)
    t0 = time.perf_counter()
    for _ in range(reps):
        Spline(kt, yt, "pchip").evaluate(tt)
    torch_s = (time.perf_counter() - t0) / reps
    t0 = time.perf_counter()
    for _ in range(max(1, reps // 5)):
        for i in range(len(t)):
            s = PchipInterpolator(knots[i], y[i])
            s(t[i]), s.derivative()(t[i])
    scipy_s = (time.perf_counter() - t0) / max(1, reps // 5)
    return {"samples_per_step": windows * b, "torch_ms": 1e3 * torch_s, "scipy_per_sample_ms": 1e3 * scipy_s,
            "speedup": scipy_s / torch_s}


def run_one(adata, holdout, variant, steps, batch, seed=0):
    from scigen.singlecell import MMSFM

    cfg = dict(VARIANTS[variant])
    model = MMSFM(**cfg, batch_size=batch, max_steps=steps, seed=seed)
    t0 = time.perf_counter()
    model.fit(adata, holdout=[holdout])
    secs = time.perf_counter() - t0
    return model, secs


def main() -> None:
    from scigen.singlecell.data import alpha_gaussians, krumsiek11_time_course, s_gaussians

    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--quick", action="store_true", help="one held-out marginal per dataset")
    p.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = p.parse_args()
    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)

    datasets = {
        "s_gaussians": (s_gaussians(1000, seed=0), s_gaussians(500, seed=1), 64),
        "alpha_gaussians": (alpha_gaussians(1000, seed=0), alpha_gaussians(500, seed=1), 64),
    }
    kr = krumsiek11_time_course()
    datasets["krumsiek11"] = (kr, kr, 20)
    rows = []
    for name, (train, test, batch) in datasets.items():
        times = sorted(set(train.obs["time"].tolist()))
        interior = times[1:-1]
        if args.quick:
            interior = interior[len(interior) // 2: len(interior) // 2 + 1]
        for h in interior:
            for variant in VARIANTS:
                model, secs = run_one(train, h, variant, args.steps, batch)
                s = model.evaluate(test, times=[h])
                rows.append({"dataset": name, "holdout": h, "variant": variant, "W1": s["W1"],
                             "W2_squared": s["W2_squared"], "MMD_G": s["MMD_G"],
                             "ms_per_step": 1e3 * secs / args.steps})
                print(rows[-1], flush=True)
    timing = spline_timing()
    (args.out / "results.json").write_text(json.dumps({"steps": args.steps, "rows": rows, "spline": timing},
                                                      indent=2) + "\n")
    lines = ["| dataset | variant | held-out times | W1 | W2² | MMD_G | ms/step |", "|---|---|---|---|---|---|---|"]
    for name in datasets:
        for variant in VARIANTS:
            sel = [r for r in rows if r["dataset"] == name and r["variant"] == variant]
            if not sel:
                continue
            m = {k: np.mean([r[k] for r in sel]) for k in ("W1", "W2_squared", "MMD_G", "ms_per_step")}
            hs = ",".join(f"{r['holdout']:g}" for r in sel)
            lines.append(f"| {name} | {variant} | {hs} | {m['W1']:.3f} | {m['W2_squared']:.3f} | "
                         f"{m['MMD_G']:.4f} | {m['ms_per_step']:.1f} |")
    lines.append("")
    lines.append(f"Spline for {timing['samples_per_step']} trajectories: torch {timing['torch_ms']:.2f} ms vs "
                 f"per-sample scipy {timing['scipy_per_sample_ms']:.1f} ms ({timing['speedup']:.0f}x).")
    (args.out / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
