"""Every installed system at ``preset("paper")``: build, train a few steps, sample, on one device.

The paper presets are the papers' networks and solvers (issue 32); this script is where they *run*, on the
system's default (bundled or synthetic) data, so a preset that cannot be built, does not fit the data or
fails on a GPU is found before anyone spends a cluster allocation on it. Per system it reports the
parameter count, seconds per training step (the median of the steps after the first), the sampling time
of ``--n-samples`` draws with the paper's sampler, the peak accelerator memory, and the error if any.

    python benchmarks/gpu/paper_presets.py --steps 20 --device cuda        # on a GPU (check.sh)
    python benchmarks/gpu/paper_presets.py --steps 2 --smoke               # CPU smoke: the CI test runs this

``--smoke`` keeps the paper network and sampler but trains on batches of 2, draws 2 samples and caps each
sampler at 2 steps (``steps=`` of ``sample`` where the system takes it) so that the CPU run stays short and
small; the GPU run trains on the paper's batch size and samples exactly as the paper preset says. Each
system runs in its own process, under ``--max-memory-gib`` of address space where given (a system that
needs more fails with ``MemoryError`` instead of taking the machine down). The results land in
``benchmarks/gpu/results/<preset>_presets_<device or smoke>.md`` (and ``.json``). ``--preset default`` runs
``Config()`` instead, the same way: beside the paper run it is the measured cost of a default network that
is smaller than the paper's (``preset_cost.md``).
Exit status 1 when any system failed.
"""

from __future__ import annotations

import argparse
import inspect
import json
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

import torch

from scigen.core.errors import InvalidInputError
from scigen.core.system.registry import discover

HERE = Path(__file__).resolve().parent


class _StepTimer:
    """A Lightning callback recording the wall time of every training batch."""

    def __new__(cls):
        import lightning.pytorch as pl

        class StepTimer(pl.Callback):
            def __init__(self) -> None:
                self.seconds: list[float] = []
                self._t = 0.0

            def on_train_batch_start(self, *args, **kwargs) -> None:
                if torch.cuda.is_available():
                    torch.cuda.synchronize()
                self._t = time.perf_counter()

            def on_train_batch_end(self, *args, **kwargs) -> None:
                if torch.cuda.is_available():
                    torch.cuda.synchronize()
                self.seconds.append(time.perf_counter() - self._t)

        return StepTimer()


def systems(only: list[str] | None = None):
    specs = sorted((s for table in discover()[0].values() for s in table.values() if isinstance(s.target, str)),
                   key=lambda s: (s.domain, s.name))
    return [s for s in specs if not only or f"{s.domain}/{s.name}" in only or s.name in only]


def run_one(spec, *, steps: int, n_samples: int, device: str, smoke: bool, preset: str = "paper") -> dict:
    key = f"{spec.domain}/{spec.name}"
    row: dict = {"system": key, "preset": preset, "ok": False}
    try:
        cls = spec.load()
        cfg = cls.Config() if preset == "default" else cls.Config.preset(preset)
        model = cls(cfg)
        data = cls.default_data(quick=True)
        timer = _StepTimer()
        if device.startswith("cuda"):
            torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        accelerator = "gpu" if device.startswith("cuda") else "cpu"
        extra = {"batch_size": 2} if smoke else {}
        try:
            model.fit(data, max_steps=steps, progress=False, logger=None, callbacks=[timer],
                      accelerator=accelerator, **extra)
        except InvalidInputError as exc:  # a closed-form fit (SBGM's CSGMM EM) takes no Lightning options
            if "do not apply" not in str(exc):
                raise
            model.fit(data, max_steps=steps, progress=False)
            row["note"] = "closed-form fit (no Lightning step)"
        row["fit_s"] = round(time.perf_counter() - t0, 2)
        row["params"] = sum(p.numel() for p in model.network.parameters())
        later = timer.seconds[1:] or timer.seconds
        row["step_s"] = round(statistics.median(later), 4) if later else None
        model.to(device)
        kwargs = {"n_samples": 2 if smoke else n_samples, "seed": 0}
        if smoke and "steps" in inspect.signature(cls.sample).parameters:
            kwargs["steps"] = 2
        cond = model.example_condition(data)
        t0 = time.perf_counter()
        try:
            model.sample(*cond, **kwargs)
        except InvalidInputError as exc:  # a one-step sampler (Inverse Flow's ICM) refuses steps=
            if "steps" not in kwargs or "steps" not in str(exc):
                raise
            kwargs.pop("steps")
            t0 = time.perf_counter()
            model.sample(*cond, **kwargs)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
            row["peak_mem_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
        row["sample_s"] = round(time.perf_counter() - t0, 2)
        row["sampler"] = "paper" if "steps" not in kwargs else "paper method, 2 steps (smoke)"
        row["ok"] = True
    except Exception as exc:  # one failing system must not hide the others
        row["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        row["traceback"] = traceback.format_exc()
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--n-samples", type=int, default=4)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--smoke", action="store_true", help="CPU smoke: paper networks, samplers capped at 2 steps")
    ap.add_argument("--only", nargs="*", help="system keys (domain/name) or names")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--max-memory-gib", type=float, default=None, help="address-space cap per system (CPU runs)")
    ap.add_argument("--preset", default="paper", help="paper (default), tiny, small, or default (Config())")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one system in this process
    args = ap.parse_args(argv)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("paper_presets: --device cuda but no CUDA device is visible", file=sys.stderr)
        return 2
    if args.one:
        spec = systems([args.one])[0]
        if args.max_memory_gib:
            import resource

            cap = int(args.max_memory_gib * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        row = run_one(spec, steps=args.steps, n_samples=args.n_samples, device=args.device, smoke=args.smoke,
                      preset=args.preset)
        print("ROW " + json.dumps(row))
        return 0
    rows = []
    for spec in systems(args.only):
        key = f"{spec.domain}/{spec.name}"
        cmd = [sys.executable, __file__, "--one", key, "--steps", str(args.steps), "--n-samples", str(args.n_samples),
               "--device", args.device, "--preset", args.preset] + (["--smoke"] if args.smoke else []) + \
              (["--max-memory-gib", str(args.max_memory_gib)] if args.max_memory_gib else [])
        proc = subprocess.run(cmd, capture_output=True, text=True)
        found = [ln for ln in proc.stdout.splitlines() if ln.startswith("ROW ")]
        row = json.loads(found[-1][4:]) if found else {
            "system": key, "ok": False, "error": f"process exited {proc.returncode} without a result",
            "traceback": proc.stderr[-3000:]}
        status = "ok" if row["ok"] else f"FAILED {row['error']}"
        print(f"{row['system']:<28} {status} params={row.get('params')} step_s={row.get('step_s')} "
              f"sample_s={row.get('sample_s')}", flush=True)
        rows.append(row)
    tag = "smoke" if args.smoke else args.device.split(":")[0]
    out = args.out or HERE / "results" / f"{args.preset}_presets_{tag}"
    out.parent.mkdir(parents=True, exist_ok=True)
    dev = torch.cuda.get_device_name(0) if args.device.startswith("cuda") else "CPU"
    lines = [f"# {args.preset} presets, {args.steps} training steps, {args.n_samples} samples, {dev}", "",
             "| system | ok | parameters | s / step | sampling s | peak GiB | sampler | note / error |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['system']} | {'yes' if r['ok'] else 'NO'} | {r.get('params', '')} | {r.get('step_s', '')} "
                     f"| {r.get('sample_s', '')} | {r.get('peak_mem_gib', '')} | {r.get('sampler', '')} "
                     f"| {r.get('error', r.get('note', ''))} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    out.with_suffix(".json").write_text(json.dumps([{k: v for k, v in r.items() if k != "traceback"} for r in rows],
                                                   indent=1))
    for r in rows:
        if not r["ok"]:
            print(f"\n--- {r['system']}\n{r['traceback']}", file=sys.stderr)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
