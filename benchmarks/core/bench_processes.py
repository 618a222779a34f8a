"""Scaling over processes (issue 33): training and sampling throughput at 1 and 2 processes, CPU, gloo.

Training (strong scaling): the same global batch ``2B`` as one process of batch ``2B`` and as two DDP processes of
batch ``B`` each (``fit(strategy="ddp", devices=2, rng="per_sample")``, which trains the same weights, see
``tests/core/test_train_ddp.py``); median seconds per optimizer step after the first 5, measured inside the run (the
launch and setup are not counted). Efficiency = (step time at 1 process / step time at 2) / 2; 1.0 is perfect.

Sampling: ``sample(n, devices=1)`` against ``sample(n, devices=2)`` (keys split over the two processes and gathered,
the same samples; ``tests/*/test_*_sharded.py``), wall time of the call on a model trained and saved beforehand
(the second process loads it: its start-up is part of a 2-process call). Every registered system at its tiny preset
on its quick default data; the sample counts are sized so that one process samples for several seconds.

    OMP_NUM_THREADS=1 python benchmarks/core/bench_processes.py                   # every system, 20-40 min on 2 cores
    OMP_NUM_THREADS=1 python benchmarks/core/bench_processes.py --systems core/toy,graphs/g2pt

Writes ``results/scaling_processes.{json,md}``. A 2-core machine can at best double; each process runs one torch
thread.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

CHILD = textwrap.dedent(
    """
    import json, os, statistics, sys, time
    import torch
    from lightning.pytorch.callbacks import Callback
    from scigen.core.system.registry import discover

    class Timer(Callback):
        def __init__(self):
            self.t, self.dt = None, []
        def on_train_batch_start(self, *a):
            self.t = time.perf_counter()
        def on_train_batch_end(self, *a):
            self.dt.append(time.perf_counter() - self.t)

    def sample(model, n, devices):
        import inspect
        if "devices" in inspect.signature(model.sample_for_cli).parameters:  # a condition drawn from the data
            return model.sample_for_cli(n, 0, devices=devices)
        return model.sample(n_samples=n, seed=0, devices=devices)

    if __name__ == "__main__":
        torch.set_num_threads(1)
        key, what, devices, size, steps, out = sys.argv[1:7]
        devices, size, steps = int(devices), int(size), int(steps)
        specs = {f"{s.domain}/{s.name}": s for t in discover()[0].values() for s in t.values()}
        cls = specs[key].load()
        rank = int(os.environ.get("LOCAL_RANK", 0))
        if what == "train":
            model = cls(cls.Config.preset("tiny"))
            data = cls.default_data(quick=True)
            timer = Timer()
            kw = dict(strategy="ddp", devices=2, batch_size=size // 2) if devices == 2 else dict(batch_size=size)
            model.fit(data, max_steps=steps, progress=False, logger=None, accelerator="cpu", rng="per_sample",
                      callbacks=[timer], **kw)
            value = statistics.median(timer.dt[5:])
        elif what == "save":  # the model the sampling runs load
            model = cls(cls.Config.preset("tiny"))
            model.fit(cls.default_data(quick=True), max_steps=3, progress=False, logger=None)
            model.save(out)
            sys.exit(0)
        else:
            model = cls.load(what)
            sample(model, 2, 1)  # warm: the first call builds caches in either run
            t0 = time.perf_counter()
            sample(model, size, devices)
            value = time.perf_counter() - t0
        if rank == 0:
            with open(out, "w") as f:
                json.dump({"value": value}, f)
    """
)

#: (system, global training batch, steps): the tiny preset's batch where it is small, so each rank holds a few rows
TRAIN = [("core/toy", 256, 60), ("graphs/g2pt", 16, 30), ("graphs/sbgd", 8, 30), ("graphs/agdiff", 32, 30),
         ("molecules/edm", 32, 30), ("molecules/unigem", 32, 30), ("placement/diffusion", 2, 30),
         ("singlecell/mmsfm", 64, 30), ("singlecell/inverseflow", 128, 30), ("singlecell/gim", 32, 60),
         ("timeseries/nsdiff", 64, 30), ("timeseries/d3u", 64, 30), ("weather/nowcast", 8, 20)]
# (SBGM's default CSGMM is fitted by closed-form EM: no DDP step to time; its EM sums its statistics over ranks)
#: (system, samples): about 5-10 s in one process at the tiny preset (``results/speed.md``'s samples per CPU-s)
SAMPLE = [("core/toy", 4096), ("core/toy", 262144), ("graphs/g2pt", 512), ("graphs/sbgd", 256),
          ("graphs/agdiff", 2048), ("molecules/edm", 128), ("molecules/unigem", 128), ("placement/diffusion", 4),
          ("singlecell/mmsfm", 32768), ("singlecell/gim", 262144), ("timeseries/nsdiff", 2048),
          ("timeseries/d3u", 4096), ("weather/nowcast", 128), ("wireless/sbgm", 65536)]


def _run(script: Path, key: str, what: str, devices: int, size: int, steps: int, out: Path) -> float | None:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    subprocess.run([sys.executable, str(script), key, what, str(devices), str(size), str(steps), str(out)],
                   check=True, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=900,
                   cwd=script.parent)
    return None if what == "save" else json.loads(out.read_text())["value"]


def main(argv=None) -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", default=None, help="comma-separated keys (default: all in TRAIN and SAMPLE)")
    a = ap.parse_args(argv)
    keep = set(a.systems.split(",")) if a.systems else None
    runs = ([(k, "train", b, st) for k, b, st in TRAIN] + [(k, "sample", n, 0) for k, n in SAMPLE])
    runs = [r for r in runs if keep is None or r[0] in keep]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "child.py"
        script.write_text(CHILD)
        saved = {}
        for key, what, size, steps in runs:
            try:
                if what == "sample" and key not in saved:
                    saved[key] = str(Path(d) / key.replace("/", "-"))
                    _run(script, key, "save", 1, 0, 0, Path(saved[key]))
                mode = what if what == "train" else saved[key]
                one = _run(script, key, mode, 1, size, steps, Path(d) / "one.json")
                two = _run(script, key, mode, 2, size, steps, Path(d) / "two.json")
                rows.append({"system": key, "what": what, "size": size, "one": one, "two": two,
                             "speedup": one / two, "efficiency": one / two / 2})
            except subprocess.CalledProcessError as exc:
                tail = (exc.stdout or b"").decode(errors="replace").strip().splitlines()[-1:] or ["?"]
                rows.append({"system": key, "what": what, "size": size, "error": tail[0][:200]})
            print(rows[-1], flush=True)
    out = Path(__file__).parent / "results"
    (out / "scaling_processes.json").write_text(json.dumps(rows, indent=1))
    lines = ["# Scaling over processes (CPU, gloo, one torch thread per process)", "",
             f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
             f"load average {os.getloadavg()[0]:.1f} at the end; `python benchmarks/core/bench_processes.py`. Training: median s per optimizer step at the same global "
             "batch (1 process of batch 2B, 2 DDP processes of B); sampling: wall s of `sample(n, devices=...)`.", "",
             "| system | measured | global batch / samples | 1 process (s) | 2 processes (s) | speed-up | efficiency |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        unit = "per step" if r["what"] == "train" else "per call"
        if "error" in r:
            lines.append(f"| {r['system']} | {r['what']} ({unit}) | {r['size']} | not run: {r['error']} | | | |")
            continue
        lines.append(f"| {r['system']} | {r['what']} ({unit}) | {r['size']} | {r['one']:.4f} | {r['two']:.4f} | "
                     f"{r['speedup']:.2f}x | {r['efficiency']:.2f} |")
    losing = [f"{r['system']} {r['what']} at {r['size']} ({r['speedup']:.2f}x)" for r in rows
              if "error" not in r and r["speedup"] < 1]
    lines += ["", "Where two processes lose: " + ("; ".join(losing) if losing else "nowhere in these runs") + ". Why: a "
              "training step of these tiny networks costs about as much as DDP's gradient all-reduce over gloo (a "
              "few hundred microseconds to milliseconds on the CPU), so two processes gain little or lose on small "
              "batches. A sampling call's wall time at 2 processes includes starting the second one (Python, torch "
              "and Lightning imports, the model, Fabric's process group: seconds), so a small call loses; the "
              "sampling itself has no communication until the one all-gather at the end, which the large call "
              "shows. On the 2-core machine both processes also share the machine with everything else that runs."]
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    if load > cores - 1:
        lines += ["", f"This run's machine was busy (load average {load:.1f} on {cores} cores): a second process found no "
                  "idle core, so its ratios are lower bounds of what two free cores give."]
    (out / "scaling_processes.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
