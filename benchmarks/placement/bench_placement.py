"""Placement benchmark: the diffusion placer vs random legal placement vs an analytical placer.

On held-out synthetic circuits of 20, 100 and 500 macros (``SynthConfig.for_size``): HPWL (chip units,
canvas 1000 x 1000), legality and wall time, in one run. With ISPD2005 cached (``scigen data fetch
ispd2005``) it also runs the paper's macro-only protocol on adaptec1-4 / bigblue1-4 (add ``--ispd``).

    python benchmarks/placement/bench_placement.py --train-steps 2000 --out bench-out
    python benchmarks/placement/bench_placement.py --run saved-run-dir --sizes 20 100

Writes ``results.json`` and ``results.md`` into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from scigen.placement import generate_netlist, macro_only, read_bookshelf
from scigen.placement.baselines import analytical, random_legal
from scigen.placement.diffusion.config import DiffusionPlacerConfig
from scigen.placement.diffusion.system import DiffusionPlacer
from scigen.placement.synthetic import SynthConfig


def _model(args) -> DiffusionPlacer:
    if args.run:
        return DiffusionPlacer.load(args.run)
    cfg = DiffusionPlacerConfig.preset(args.preset, copies=args.copies, lr=args.lr, ema_decay=None,
                                       sample_steps=args.sample_steps, inner_steps=args.inner_steps,
                                       legalize_steps=args.legalize_steps)
    model = DiffusionPlacer(cfg)
    t0 = time.perf_counter()
    data = [generate_netlist(i, SynthConfig.for_size(int(n)))
            for i, n in enumerate(np.random.default_rng(0).choice(args.train_sizes, args.train_circuits))]
    model.fit(data, max_steps=args.train_steps, progress=False)
    print(f"trained {args.train_steps} steps in {time.perf_counter() - t0:.0f} s, loss {model.metadata['final_loss']:.3f}")
    if args.out:
        model.save(Path(args.out) / "model")
    return model


def _row(name, circuit, v, m):
    return {"circuit": circuit, "objects": v, "method": name, "hpwl": m["hpwl"], "legality": m["legality"],
            "seconds": m["seconds"]}


def run_circuits(model, circuits, samples: int) -> list[dict]:
    rows = []
    for cname, nl in circuits:
        sub = macro_only(nl)[0] if (~nl.is_macro & ~nl.is_port).any() else nl
        v = int((~sub.fixed).sum())
        _, md = model.place(nl, n=samples)
        rows.append(_row("diffusion", cname, v, md))
        _, mr = random_legal(sub, seed=0)
        rows.append(_row("random legal", cname, v, mr))
        _, ma = analytical(sub, seed=0, legalize_steps=model.config.legalize_steps)
        rows.append(_row("analytical", cname, v, ma))
        for r in rows[-3:]:
            print(f"{r['circuit']:>12} {r['objects']:5d} {r['method']:>13} HPWL {r['hpwl']:12.5g} "
                  f"legality {r['legality']:.4f} {r['seconds']:7.1f} s", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", help="a saved DiffusionPlacer run (skips training)")
    ap.add_argument("--out", default="bench-placement")
    ap.add_argument("--sizes", type=int, nargs="+", default=[20, 100, 500])
    ap.add_argument("--circuits", type=int, default=2, help="held-out circuits per size")
    ap.add_argument("--preset", default="small")
    ap.add_argument("--train-steps", type=int, default=2000)
    ap.add_argument("--train-circuits", type=int, default=64)
    ap.add_argument("--train-sizes", type=int, nargs="+", default=[20, 50, 100])
    ap.add_argument("--copies", type=int, default=16)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--sample-steps", type=int, default=100)
    ap.add_argument("--inner-steps", type=int, default=5)
    ap.add_argument("--legalize-steps", type=int, default=3000)
    ap.add_argument("--samples", type=int, default=1)
    ap.add_argument("--ispd", action="store_true", help="also run ISPD2005 macro-only (needs the cached dataset)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model = _model(args)
    circuits = [(f"synth{n}-{k}", generate_netlist(50_000 + 100 * n + k, SynthConfig.for_size(n)))
                for n in args.sizes for k in range(args.circuits)]
    rows = run_circuits(model, circuits, args.samples)
    if args.ispd:
        try:
            from scigen.datasets import path as dataset_path

            root = dataset_path("ispd2005")
            ispd = [(a.stem, read_bookshelf(a)) for a in sorted(Path(root).rglob("*.aux"))]
            rows += run_circuits(model, ispd, args.samples)
        except Exception as exc:  # noqa: BLE001 - report and continue with the synthetic table
            print(f"ISPD2005 skipped: {exc}")
    (out / "results.json").write_text(json.dumps(rows, indent=2) + "\n")
    lines = ["| circuit | macros | method | HPWL | legality | seconds |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['circuit']} | {r['objects']} | {r['method']} | {r['hpwl']:.5g} | {r['legality']:.4f} | "
              f"{r['seconds']:.1f} |" for r in rows]
    (out / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
