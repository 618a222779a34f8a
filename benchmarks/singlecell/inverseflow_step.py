"""Inverse Flow training-step cost: our ICM / IFM loss (as ``fit`` runs it) against a named baseline in the
same run (issue 36.3).

Baseline = the same step written plainly as the official code's algorithm computes it (Zhang & Zhou,
ICML 2025; level6626/InverseFlow ``inverse_flow.py``): every network call gets a per-row time tensor ``[B]``
(``torch.full``), the re-noising goes through the checked ``NoiseModel.draw``, IFM's inversion is a plain
Euler loop. Same network, same batch, same optimiser (AdamW, one step = loss + backward + step). Ours
passes one shared time as a stride-0 view (the engine's ``ResidualMLP`` embeds it once instead of once
per row) and re-noises with ``sample`` (the noise contract is checked once per ``fit``).

Rows: the official toy (8 points x 1,000, width 256 x 4, batch 1,000, Gaussian 0.2, t_max 0.2, sigma_d 0.7)
and pbmc68k_reduced (700 x 765 log-normalised, Poisson k = 1, the default config's width 256 x 4, batch 256).
Reported: median CPU seconds per step over ``--steps`` steps after 2 warm-up steps, one thread, and
ours / baseline (below 1 = ours faster)::

    OMP_NUM_THREADS=1 python benchmarks/singlecell/inverseflow_step.py --steps 12
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time

import torch

from scigen.core.losses import consistency_scalings, pseudo_huber
from scigen.singlecell.inverseflow import Gaussian, InverseFlow, Poisson


def baseline_loss(m: InverseFlow, net, x1: torch.Tensor, times: torch.Tensor) -> torch.Tensor:
    """The plain per-row-time step (module docstring); the same numbers as ``m.training_loss``."""
    c, nm = m.config, m.noise
    B, t_min, t_max = x1.shape[0], float(times[0]), float(times[-1])
    ts = times.to(x1.dtype)

    def f(x, t):  # ICM's consistency function, t [B]
        y = nm.encode(x)
        c_skip, c_out, _ = consistency_scalings(t, c.sigma_data, t_min)
        return nm.decode(c_skip[:, None] * y + c_out[:, None] * net(y, t))

    if c.algorithm == "icm":
        with torch.no_grad():
            x0 = f(x1, torch.full((B,), t_max, dtype=x1.dtype))
            x1h = nm.draw(x0)
            idx = torch.randint(0, times.numel() - 1, (B,))
            lo, hi = ts[idx], ts[idx + 1]
            cur = f(x0 + (lo / t_max)[:, None] * (x1h - x0), lo)
        nxt = f(x0 + (hi / t_max)[:, None] * (x1h - x0), hi)
        w = (1 / (ts[1:] - ts[:-1]))[idx]
        return (pseudo_huber(nxt, cur, elementwise=True) * w).mean()
    with torch.no_grad():
        y = nm.encode(x1)
        rev = ts.flip(0)
        for i in range(rev.numel() - 1):
            y = y - net(y, torch.full((B,), float(rev[i]), dtype=y.dtype)) * (rev[i] - rev[i + 1])
        x0 = nm.decode(y)
        x1h = nm.draw(x0)
    idx = torch.randint(0, times.numel() - 1, (B,))
    y0, y1 = nm.encode(x0), nm.encode(x1h)
    t = ts[idx + 1]
    yt = y0 + (t / t_max)[:, None] * (y1 - y0)
    return pseudo_huber(net(yt, t), (y1 - y0) / t_max, elementwise=True).mean()


def per_step(loss_fn, net, x, times, steps: int) -> float:
    opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
    out = []
    for i in range(steps + 2):
        t0 = time.process_time()
        opt.zero_grad()
        loss_fn(net, x, times).backward()
        opt.step()
        if i >= 2:
            out.append(time.process_time() - t0)
    return statistics.median(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=12)
    args = p.parse_args()
    torch.set_num_threads(1)
    from scigen.singlecell.inverseflow.data import circle_toy, noisy_pbmc68k

    toy = circle_toy(1000, sigma=0.2, seed=0)
    pbmc = noisy_pbmc68k(Poisson(k=1.0), seed=0)
    rows = [("toy", toy, Gaussian(0.2), {"t_max": 0.2, "sigma_data": 0.7, "width": 256, "depth": 4}, 1000),
            ("pbmc68k", pbmc, Poisson(k=1.0), {"width": 256, "depth": 4}, 256)]
    print("| data | algorithm | batch | ours s/step | baseline s/step | ours / baseline |")
    print("|---|---|---|---|---|---|")
    for name, ad, noise, cfg, batch in rows:
        x = torch.as_tensor(ad.X[:batch], dtype=torch.float32)
        for algo in ("icm", "ifm"):
            m = InverseFlow(noise=noise, algorithm=algo, **cfg,
                            train={"batch_size": batch, "progress": False, "logger": None})
            m.fit(ad, max_steps=1, on_noise_mismatch="ignore")
            times = m.times()
            net = m.network.train()
            torch.manual_seed(0)
            ours = per_step(m._loss, net, x, times, args.steps)
            torch.manual_seed(0)
            base = per_step(functools.partial(baseline_loss, m), net, x, times, args.steps)
            print(f"| {name} | {algo} | {batch} | {ours:.4f} | {base:.4f} | {ours / base:.2f} |", flush=True)


if __name__ == "__main__":
    main()
