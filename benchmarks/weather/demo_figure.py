"""Issue 34: does the nowcast demo figure show rain a meteorologist recognises? Scores of the figure's model (the
shipped checkpoint) beside two models trained inside the demo's budget (400 steps on 24 storms): with the shipped
recipe (the fallback path of ``nowcast/demo.py``) and with the ``tiny`` defaults (no advection input, no
probability matching: the kind of model whose members looked like speckle), on the demo's 8 test windows.

Per model: CRPS and FSS (1 mm/h, 5-pixel neighbourhood; pysteps' accumulation) of the ensemble, and two
intensity-distribution distances of members against the truth over all rain pixels of all leads: the Wasserstein-1
distance of the pixel intensities (mm/h, scipy) and the total-variation distance of their histograms on fixed bins
(0.1, 0.5, 1, 2, 4, 8, 16, 32, inf mm/h). Lower is better for all but FSS.

    OMP_NUM_THREADS=1 python benchmarks/weather/demo_figure.py   # about 5 minutes on one CPU thread
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch
from scipy.stats import wasserstein_distance

from scigen.weather import Nowcast
from scigen.weather.data.synthetic import synthetic_storms
from scigen.weather.metrics import fss
from scigen.weather.nowcast.demo import CHECKPOINT, DEMO_STEPS, RECIPE

BINS = np.array([0.1, 0.5, 1, 2, 4, 8, 16, 32, np.inf])
OUT = Path(__file__).resolve().parent / "results" / "demo_figure.md"


def _hist(v: np.ndarray) -> np.ndarray:
    h, _ = np.histogram(v, bins=np.concatenate([[0.0], BINS]))
    return h / max(h.sum(), 1)


def score(model, test, windows: int = 8) -> dict:
    c = model.config
    n = c.context_frames + c.horizon
    members, truths = [], []
    for w in range(windows):
        win = test.isel(time=slice(w * 25, w * 25 + n))  # event w: 25 frames each
        ctx, truth = win.isel(time=slice(0, c.context_frames)), win.isel(time=slice(c.context_frames, n))
        members.append(model.sample(ctx, n_samples=4, seed=w).values)
        truths.append(truth.values)
    m, t = np.stack(members), np.stack(truths)  # [W, M, L, y, x], [W, L, y, x]
    rain_m, rain_t = m[m >= 0.1], t[t >= 0.1]
    fss_members = np.mean([fss(m[:, k], t, 1.0, 5) for k in range(m.shape[1])])
    return {"FSS(1 mm/h, 5 px)": float(fss_members), "W1 of intensities (mm/h)": float(wasserstein_distance(rain_m, rain_t)),
            "histogram TV distance": float(0.5 * np.abs(_hist(rain_m) - _hist(rain_t)).sum()),
            "rain fraction members / truth": f"{(m >= 0.1).mean():.3f} / {(t >= 0.1).mean():.3f}",
            "max members / truth (mm/h)": f"{m.max():.1f} / {t.max():.1f}"}


def main() -> None:
    torch.set_num_threads(1)
    test = synthetic_storms(8, 25, 32, seed=1)
    rows = {}
    t0 = time.perf_counter()
    shipped = Nowcast.load(CHECKPOINT, device="cpu")
    rows["shipped checkpoint (the figure now)"] = {**score(shipped, test), **{
        k: round(v, 3) for k, v in shipped.evaluate(test, max_windows=8).items() if k in ("flow/CRPS",)}}
    steps = DEMO_STEPS[False]
    before = Nowcast(Nowcast.Config.preset("tiny", **{**RECIPE, "train": {**RECIPE["train"], "max_steps": steps}}))
    before.fit(synthetic_storms(24, 30, 32, seed=0), logger=None)
    rows[f"trained in the demo ({steps} steps, 24 storms: before)"] = {**score(before, test), **{
        k: round(v, 3) for k, v in before.evaluate(test, max_windows=8).items() if k in ("flow/CRPS",)}}
    plain = Nowcast(Nowcast.Config.preset("tiny", train={"max_steps": steps, "progress": False, "seed": 0}))
    plain.fit(synthetic_storms(24, 30, 32, seed=0), logger=None)
    rows[f"tiny defaults, {steps} steps, 24 storms (no advection input, no probability matching)"] = {
        **score(plain, test), **{k: round(v, 3) for k, v in plain.evaluate(test, max_windows=8).items()
                                 if k in ("flow/CRPS",)}}
    keys = list(next(iter(rows.values())))
    lines = ["# Nowcast demo figure: is it rain?", "",
             f"8 test windows of `synthetic_storms(8, 25, 32, seed=1)`, 4 members each; {time.perf_counter() - t0:.0f} s "
             "on one CPU thread. `python benchmarks/weather/demo_figure.py`.", "",
             "| model | " + " | ".join(keys) + " |", "|---|" + "---|" * len(keys)]
    for name, r in rows.items():
        lines.append(f"| {name} | " + " | ".join(f"{r[k]:.3f}" if isinstance(r[k], float) else str(r[k])
                                                  for k in keys) + " |")
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
