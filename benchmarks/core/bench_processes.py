"""Scaling over processes (issue 33): training and sampling throughput at 1 and 2 processes, CPU, gloo.

Training (strong scaling): the same global batch ``2B`` as one process of batch ``2B`` and as two DDP processes of
batch ``B`` each (``fit(strategy="ddp", devices=2, rng="per_sample")``, which trains the same weights, see
``tests/core/test_train_ddp.py``); median seconds per optimizer step after the first 5, measured inside the run (the
launch and setup are not counted). Efficiency = (step time at 1 process / step time at 2) / 2; 1.0 is perfect.

Sampling: ``sample(n, devices=1)`` against ``sample(n, devices=2)`` (keys split over the two processes and gathered,
the same samples; ``tests/core/test_sample_sharded.py``), wall time of the call. Systems: those whose DDP run equals
one process today (the toy flow-matching MLP, G2PT; sampling: the toy).

    OMP_NUM_THREADS=1 python benchmarks/core/bench_processes.py      # about 5 minutes on 2 cores

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

    if __name__ == "__main__":
        torch.set_num_threads(1)
        key, what, devices, size, steps, out = sys.argv[1:7]
        devices, size, steps = int(devices), int(size), int(steps)
        specs = {f"{s.domain}/{s.name}": s for t in discover()[0].values() for s in t.values()}
        cls = specs[key].load()
        model = cls(cls.Config.preset("tiny"))
        data = cls.default_data(quick=True)
        rank = int(os.environ.get("LOCAL_RANK", 0))
        if what == "train":
            timer = Timer()
            kw = dict(strategy="ddp", devices=2, batch_size=size // 2) if devices == 2 else dict(batch_size=size)
            model.fit(data, max_steps=steps, progress=False, logger=None, accelerator="cpu", rng="per_sample",
                      callbacks=[timer], **kw)
            value = statistics.median(timer.dt[5:])
        else:
            model.fit(data, max_steps=2, progress=False, logger=None)
            t0 = time.perf_counter()
            model.sample(size, seed=0, devices=devices)
            value = time.perf_counter() - t0
        if rank == 0:
            with open(out, "w") as f:
                json.dump({"value": value}, f)
    """
)

RUNS = [("core/toy", "train", 256, 60), ("graphs/g2pt", "train", 16, 30), ("core/toy", "sample", 4096, 0),
        ("core/toy", "sample", 262144, 0)]


def _run(script: Path, key: str, what: str, devices: int, size: int, steps: int, out: Path) -> float:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    subprocess.run([sys.executable, str(script), key, what, str(devices), str(size), str(steps), str(out)],
                   check=True, env=env, capture_output=True, timeout=900, cwd=script.parent)
    return json.loads(out.read_text())["value"]


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "child.py"
        script.write_text(CHILD)
        for key, what, size, steps in RUNS:
            one = _run(script, key, what, 1, size, steps, Path(d) / "one.json")
            two = _run(script, key, what, 2, size, steps, Path(d) / "two.json")
            rows.append({"system": key, "what": what, "size": size, "one": one, "two": two,
                         "speedup": one / two, "efficiency": one / two / 2})
            print(rows[-1], flush=True)
    out = Path(__file__).parent / "results"
    (out / "scaling_processes.json").write_text(json.dumps(rows, indent=1))
    lines = ["# Scaling over processes (CPU, gloo, one torch thread per process)", "",
             f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
             "`python benchmarks/core/bench_processes.py`. Training: median s per optimizer step at the same global "
             "batch (1 process of batch 2B, 2 DDP processes of B); sampling: wall s of `sample(n, devices=...)`.", "",
             "| system | measured | global batch / samples | 1 process (s) | 2 processes (s) | speed-up | efficiency |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        unit = "per step" if r["what"] == "train" else "per call"
        lines.append(f"| {r['system']} | {r['what']} ({unit}) | {r['size']} | {r['one']:.4f} | {r['two']:.4f} | "
                     f"{r['speedup']:.2f}x | {r['efficiency']:.2f} |")
    losing = [f"{r['system']} {r['what']} at {r['size']} ({r['speedup']:.2f}x)" for r in rows if r["speedup"] < 1]
    lines += ["", "Where two processes lose: " + ("; ".join(losing) if losing else "nowhere in these runs") + ". Why: a "
              "training step of these tiny networks costs about as much as DDP's gradient all-reduce over gloo (a "
              "few hundred microseconds to milliseconds on the CPU), so two processes gain little or lose on small "
              "batches. A sampling call's wall time at 2 processes includes starting the second one (Python, torch "
              "and Lightning imports, the model, Fabric's process group: seconds), so a small call loses; the "
              "sampling itself has no communication until the one all-gather at the end, which the large call "
              "shows. On the 2-core machine both processes also share the machine with everything else that runs."]
    (out / "scaling_processes.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
