"""D3U's costs beside the training they follow (issue 36.3), CPU seconds, one thread, in one run:

1. the post-training calibration pass (``config.calibrate_windows`` x ``config.calibrate_draws`` chains, each a
   full sampler run) against stage 2's training (the residual diffusion, ``small`` preset: 300 steps of 64
   windows) on the synthetic series; the size before issue 36.3 (512 x 32) is timed on 64 x 32 and scaled by 8
   (the cost is linear in the number of chains, since each chain is one sampler run);
2. ``evaluate``'s cost per window against ``sample``'s (one window) with the default config (96 -> 24,
   100 draws, DPM-Solver++ 20 steps) on a 21-variable synthetic series (weights after 2 steps: the cost does
   not depend on them).

::

    OMP_NUM_THREADS=1 python benchmarks/timeseries/d3u_cost.py
"""

from __future__ import annotations

import time

import torch

from scigen.timeseries import D3U, D3UConfig
from scigen.timeseries.data import split_ratio, synthetic_nonstationary


def cpu(fn) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def calibration_vs_training() -> None:
    df = synthetic_nonstationary(3000, 3, seed=0)
    sp = split_ratio(df, context=48)
    m = D3U(D3UConfig.preset("small"), train={"progress": False, "early_stopping": None})
    m.fit(sp.train, max_steps=300, stage="forecaster")
    train_s = cpu(lambda: m.fit(sp.train, max_steps=300, stage="residual"))
    val = m.prepare_data(sp.val, role="val_data")
    c = m.config
    new_s = cpu(lambda: m._calibrate(val))
    old_part = cpu(lambda: m._calibrate(val, max_windows=64, n=32))
    windows = min(c.calibrate_windows, val.shape[0])
    print(f"validation windows available: {val.shape[0]}")
    print("| pass | chains | CPU s | / stage-2 training |\n|---|---|---|---|")
    print(f"| stage-2 training (300 steps x 64 windows) | | {train_s:.1f} | 1.00 |")
    print(f"| calibration, default {windows} x {c.calibrate_draws} | {windows * c.calibrate_draws} | {new_s:.1f} | "
          f"{new_s / train_s:.2f} |")
    old_w = min(512, val.shape[0])
    old_s = old_part * old_w / 64
    print(f"| calibration before issue 36.3, {old_w} x 32 (64 x 32 timed, x {old_w / 64:g}) | {old_w * 32} | "
          f"{old_s:.1f} | {old_s / train_s:.2f} |")


def evaluate_vs_sample() -> None:
    df = synthetic_nonstationary(1200, 21, seed=0)
    sp = split_ratio(df, context=96)
    m = D3U(D3UConfig(), train={"progress": False}).fit(sp.train, max_steps=2)
    W = 40
    ev = cpu(lambda: m.evaluate(sp.test, max_windows=W)) / W
    C = m.config.context_length
    sa = cpu(lambda: [m.sample(sp.test.iloc[i * 7: i * 7 + C]) for i in range(4)]) / 4
    print("\n| verb (default config, 21 variables, 100 draws) | CPU s per window |\n|---|---|")
    print(f"| evaluate ({W} windows) | {ev:.3f} |\n| sample (one window) | {sa:.3f} |\n| evaluate / sample | "
          f"{ev / sa:.2f} |")


if __name__ == "__main__":
    torch.set_num_threads(1)
    calibration_vs_training()
    evaluate_vs_sample()
