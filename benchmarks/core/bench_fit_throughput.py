"""Training throughput: ``scigen.core.train.fit`` against plain PyTorch loops on the same model and data.

Issues 22 and 36.1 ask ``fit`` to be at least as fast as a plain loop. Six trainers run interleaved (fit on
its default Fabric loop, fit on Lightning's Trainer, a plain loop with our flow-matching loss with torch's
default Adam, with the multi-tensor ``foreach`` Adam and with the fused Adam that fit uses (so fit's loop is also
compared with a plain loop on the same kernel), a plain loop with torchcfm's loss, then again ...) ``--reps``
times on fresh models, so that a change in machine load hits each alike; each rate is the median over
repetitions of the steady rate (the first 10 % of steps excluded). Two rates per run: wall-clock steps/s, and
steps per CPU-second of this process (``time.process_time``), which other processes on a shared machine disturb
far less. Models: the engine benchmark's ``ResidualMLP(32, width=128, depth=3)`` and a tiny one
(width 32, depth 1) where the per-step overhead of the trainer dominates.

    python benchmarks/core/bench_fit_throughput.py            # 5 reps x 600 steps per trainer and model
    python benchmarks/core/bench_fit_throughput.py --quick    # 3 reps x 300 steps

Writes ``results/fit_throughput.{json,md}``. torchcfm is optional (``pip install --no-deps torchcfm``);
without it the plain loop with our loss is the baseline.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
import _common as C  # noqa: E402
import _flow as F  # noqa: E402

RESULTS = Path(__file__).parent / "results"
MODELS = {"mlp_w128_d3": (128, 3), "mlp_w32_d1": (32, 1)}


def _cpu_timed(loop):
    def run(*args, **kw):
        c0 = time.process_time()
        st = loop(*args, **kw)
        return st, kw["steps"] / max(time.process_time() - c0, 1e-9)
    return run


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", type=Path, default=RESULTS / "fit_throughput")
    a = ap.parse_args(argv)
    if a.quick:
        a.reps, a.steps = 3, 300
    torch.set_num_threads(1)
    split = C.make_split("gaussian_mixture_32d", 20_000, 10)
    trainers = {"fit": (F.our_fm_loss, C.fit_timed),
                "fit (loop=trainer)": (F.our_fm_loss, functools.partial(C.fit_timed, loop="trainer")),
                "plain (our loss)": (F.our_fm_loss, C.plain_loop),
                "plain (our loss, foreach Adam)": (F.our_fm_loss, functools.partial(C.plain_loop, foreach=True)),
                "plain (our loss, fused Adam)": (F.our_fm_loss, functools.partial(C.plain_loop, fused=True))}
    try:
        trainers["plain (torchcfm loss)"] = (F.cfm_loss_fn(), C.plain_loop)
    except ImportError:
        print("torchcfm not installed: the plain loop with our loss is the baseline")
    rows, load0 = [], os.getloadavg()
    for mname, (width, depth) in MODELS.items():
        wall = {k: [] for k in trainers}
        cpu = {k: [] for k in trainers}
        for _ in range(a.reps):
            for name, (loss, loop) in trainers.items():
                model = C.make_model(split.train.shape[1], width, depth, 0)
                st, per_cpu = _cpu_timed(loop)(model, loss, split.train, steps=a.steps, batch_size=a.batch_size,
                                               lr=1e-3, seed=0)
                wall[name].append(st.steady_steps_per_s)
                cpu[name].append(per_cpu)
        base = "plain (torchcfm loss)" if "plain (torchcfm loss)" in trainers else "plain (our loss)"
        for name in trainers:
            w, c = statistics.median(wall[name]), statistics.median(cpu[name])
            rows.append({"model": mname, "trainer": name, "steps_per_s": w, "steps_per_cpu_s": c,
                         "ratio_wall": w / statistics.median(wall[base]), "ratio_cpu": c / statistics.median(cpu[base]),
                         "baseline": base, "all_steps_per_s": [round(v, 1) for v in wall[name]]})
            print(rows[-1], flush=True)
    meta = {"reps": a.reps, "steps": a.steps, "batch_size": a.batch_size, "torch": torch.__version__,
            "loadavg_start": load0, "loadavg_end": os.getloadavg()}
    lines = ["| model | trainer | steps/s (wall, median) | steps per CPU-s | ratio / baseline (wall) | ratio (CPU) |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r['model']} | {r['trainer']} | {r['steps_per_s']:.0f} | {r['steps_per_cpu_s']:.0f} | "
              f"{r['ratio_wall']:.2f} | {r['ratio_cpu']:.2f} |" for r in rows]
    text = (f"# fit throughput\n\n{a.reps} interleaved repetitions x {a.steps} steps, batch {a.batch_size}, one "
            f"thread; baseline = {rows[-1]['baseline']}; load average {load0[0]:.1f} -> {meta['loadavg_end'][0]:.1f}."
            "\n\n" + "\n".join(lines) + "\n")
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    a.out.with_suffix(".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
