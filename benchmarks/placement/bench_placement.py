"""Placement benchmark: the diffusion placer vs random legal placement vs an analytical placer.

On held-out synthetic circuits of 20, 100 and 500 macros (``SynthConfig.for_size``, seeds 50000+,
disjoint from the training seeds 0.. and from the validation seeds 70000+ on which the guidance
settings were chosen): HPWL (chip units, canvas 1000 x 1000), legality and wall time, in one run.
The analytical baseline (quadratic wirelength + weak spreading) is legalised by the diffusion placer's
own legaliser settings (``DiffusionPlacer.legalizer_config``), so both are compared through the same
legaliser. With ``--ispd`` the paper's macro-only protocol runs on the cached ISPD2005 designs
(``scigen data fetch ispd2005``); when they are not cached the script stops at once with the fetch
instructions (exit 2).

CPU defaults (what the committed table ran, ~20 min on 2 loaded cores):

    OMP_NUM_THREADS=1 python benchmarks/placement/bench_placement.py

Paper scale on a GPU (large model, 1000 steps; ``--device cuda``):

    python benchmarks/placement/bench_placement.py --preset paper --copies 64 --lr 3e-4 \\
        --train-steps 300000 --train-circuits 5000 --sample-steps 1000 --inner-steps 20 \\
        --legalize-steps 20000 --ispd --device cuda

Writes ``<out>/<name>.json`` and ``<out>/<name>.md`` (default ``benchmarks/placement/results/``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import torch

from scigen.placement import generate_netlist, macro_only
from scigen.placement.baselines import analytical, random_legal
from scigen.placement.diffusion.config import DiffusionPlacerConfig
from scigen.placement.diffusion.system import DiffusionPlacer
from scigen.placement.synthetic import SynthConfig

HELD_OUT_SEED = 50_000
DIFFUSION = ("diffusion", "diffusion + refine")  # the paper's sampler; + the quadratic refinement (ours)
BASELINES = ("random legal", "analytical")


def _torch_device(name: str) -> str:
    """``cpu`` or the CUDA device for ``--device`` (``gpu`` means ``cuda``)."""
    return "cpu" if name == "cpu" else ("cuda" if name == "gpu" else name)


def _model(args) -> DiffusionPlacer:
    overrides = dict(steps=args.sample_steps, inner_steps=args.inner_steps,
                     legalize_steps=args.legalize_steps, best_of=args.samples)
    if args.run:
        model = DiffusionPlacer.load(args.run, device=_torch_device(args.device))
        model.config = model.config.model_copy(update=overrides)
        return model
    cfg = DiffusionPlacerConfig.preset(args.preset, copies=args.copies, train={"lr": args.lr, "ema_decay": None},
                                       **overrides)
    model = DiffusionPlacer(cfg).to(_torch_device(args.device))  # circuits are built on the network's device
    data = [generate_netlist(i, SynthConfig.for_size(int(n)))
            for i, n in enumerate(np.random.default_rng(0).choice(args.train_sizes, args.train_circuits))]
    t0 = time.perf_counter()
    model.fit(data, max_steps=args.train_steps, progress=False,
              accelerator="cpu" if _torch_device(args.device) == "cpu" else "gpu")
    model.to(_torch_device(args.device))  # Lightning's teardown leaves the network on the CPU; sample on the device
    model.metadata["train_seconds"] = time.perf_counter() - t0
    print(f"trained {args.train_steps} steps in {model.metadata['train_seconds']:.0f} s, "
          f"final loss {model.history.final_loss:.3f}", flush=True)
    if args.save_model:
        model.save(args.save_model)
    return model


def _row(name, circuit, v, m):
    return {"circuit": circuit, "macros": v, "method": name, "hpwl": m["hpwl"], "legality": m["legality"],
            "seconds": m["seconds"], **({"hpwl_guided": m["hpwl_guided"]} if "hpwl_guided" in m else {})}


def run_circuits(model: DiffusionPlacer, circuits, refine_steps: int) -> list[dict]:
    """Every placer on every circuit. The two diffusion rows share the seed, hence the guided samples;
    ``diffusion + refine`` adds the quadratic refinement (``refine_steps``; skipped when 0)."""
    rows = []
    plain = model.config.model_copy(update={"refine_steps": 0})
    refined = model.config.model_copy(update={"refine_steps": refine_steps})
    for cname, nl in circuits:
        sub = macro_only(nl)[0] if (~nl.is_macro & ~nl.is_port).any() else nl
        v = int((~sub.fixed & ~sub.is_port).sum())
        results = []
        for name, cfg in zip(DIFFUSION, (plain, refined), strict=True):
            if name == "diffusion + refine" and refine_steps <= 0:
                continue
            model.config = cfg
            results.append((name, model.place(nl, seed=0)[1]))
        results.append(("random legal", random_legal(sub, seed=0)[1]))
        results.append(("analytical", analytical(sub, seed=0, legalizer=model.legalizer_config())[1]))
        for name, m in results:
            rows.append(_row(name, cname, v, m))
            print(f"{cname:>12} {v:5d} {name:>18} HPWL {m['hpwl']:12.5g} legality {m['legality']:.4f} "
                  f"{m['seconds']:7.1f} s", flush=True)
    model.config = refined
    return rows


def summarise(rows: list[dict]) -> list[dict]:
    """Per group of circuits (same macro count, or ISPD): mean HPWL / legality / seconds per method, the
    mean of the per-circuit HPWL ratio diffusion / baseline, and on how many circuits diffusion wins
    (strictly shorter), for each diffusion variant run."""
    out = []
    groups: dict[str, list[str]] = {}
    for r in rows:
        key = f"synthetic {r['macros']}" if r["circuit"].startswith("synth") else "ISPD2005"
        groups.setdefault(key, [])
        if r["circuit"] not in groups[key]:
            groups[key].append(r["circuit"])
    methods = [m for m in (*DIFFUSION, *BASELINES) if any(r["method"] == m for r in rows)]
    for key, circuits in groups.items():
        by = {(r["circuit"], r["method"]): r for r in rows if r["circuit"] in circuits}
        s = {"group": key, "circuits": len(circuits)}
        for m in methods:
            s[m] = {k: float(np.mean([by[c, m][k] for c in circuits])) for k in ("hpwl", "legality", "seconds")}
        for d in (m for m in DIFFUSION if m in methods):
            for b in BASELINES:
                ratios = [by[c, d]["hpwl"] / by[c, b]["hpwl"] for c in circuits]
                s[f"{d} ratio vs {b}"] = float(np.mean(ratios))
                s[f"{d} wins vs {b}"] = int(sum(rt < 1 for rt in ratios))
        out.append(s)
    return out


def markdown(rows, summary, meta) -> str:
    lines = [f"# Placement benchmark ({meta['date']})", "",
             f"Command: `{meta['command']}`", "",
             f"Wall time {meta['wall_seconds']:.0f} s on {meta['threads']} torch thread(s); model: preset "
             f"`{meta['preset']}`, {meta['params']:,} parameters, {meta['trained_steps']} training steps in "
             f"{meta['train_seconds']:.0f} s (final loss {meta['final_loss']:.3f}); sampling {meta['sample_steps']} "
             f"DDPM steps x {meta['inner_steps']} guidance steps, {meta['samples']} sample(s), refinement "
             f"{meta.get('refine_steps', 0)} steps, legaliser "
             f"{meta['legalize_steps']} steps max.", "",
             "HPWL in chip units (synthetic canvas 1000 x 1000); legality = union area inside the canvas / total "
             "macro area; seconds = wall time of each placer on the circuit (diffusion: sampling + legalisation). "
             "Ratio = mean over circuits of HPWL(diffusion) / HPWL(baseline), < 1: diffusion shorter.", "",
             ]
    methods = [m for m in (*DIFFUSION, *BASELINES) if m in summary[0]]
    diff = [m for m in DIFFUSION if m in methods]
    head = (["circuits", "n"] + [f"{m} HPWL" for m in methods] + [f"{d} / analytical (wins)" for d in diff]
            + [f"{d} / random" for d in diff] + ["legality (" + " / ".join(methods) + ")", "seconds"])
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in summary:
        cells = [s["group"], str(s["circuits"])] + [f"{s[m]['hpwl']:.5g}" for m in methods]
        cells += [f"{s[f'{d} ratio vs analytical']:.3f} ({s[f'{d} wins vs analytical']}/{s['circuits']})" for d in diff]
        cells += [f"{s[f'{d} ratio vs random legal']:.3f}" for d in diff]
        cells += [" / ".join(f"{s[m]['legality']:.4f}" for m in methods),
                  " / ".join(f"{s[m]['seconds']:.1f}" for m in methods)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Per circuit:", "", "| circuit | macros | method | HPWL | HPWL before legalisation | legality | seconds |",
              "|---|---|---|---|---|---|---|"]
    for r in rows:
        pre = f"{r['hpwl_guided']:.5g}" if "hpwl_guided" in r else ""
        lines.append(f"| {r['circuit']} | {r['macros']} | {r['method']} | {r['hpwl']:.5g} | {pre} | "
                     f"{r['legality']:.4f} | {r['seconds']:.1f} |")
    if meta.get("ispd"):
        lines += ["", f"ISPD2005: {meta['ispd']}"]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", help="a saved DiffusionPlacer run (skips training; its sampling settings are "
                                  "overridden by the options below)")
    ap.add_argument("--save-model", help="directory to save the trained model in (reuse it with --run)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    ap.add_argument("--name", default="bench_placement")
    ap.add_argument("--sizes", type=int, nargs="+", default=[20, 100, 500])
    ap.add_argument("--circuits", type=int, nargs="+", default=[4, 2, 1],
                    help="held-out circuits per size (one number for all sizes, or one per size)")
    ap.add_argument("--preset", default="small", help="config preset: tiny | small | paper (the paper's large model)")
    ap.add_argument("--train-steps", type=int, default=2000)
    ap.add_argument("--train-circuits", type=int, default=64)
    ap.add_argument("--train-sizes", type=int, nargs="+", default=[20, 50, 100])
    ap.add_argument("--copies", type=int, default=16, help="noisy copies per training circuit (paper: 64)")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--sample-steps", type=int, default=100)
    ap.add_argument("--inner-steps", type=int, default=5)
    ap.add_argument("--legalize-steps", type=int, default=3000)
    ap.add_argument("--refine-steps", type=int, default=100,
                    help="also run 'diffusion + refine' with this many quadratic-refinement steps (0: skip)")
    ap.add_argument("--samples", type=int, default=1, help="samples per circuit; the best legal one is kept")
    ap.add_argument("--ispd", action="store_true", help="also run ISPD2005 macro-only (needs the cached dataset)")
    ap.add_argument("--ispd-designs", nargs="+", default=None)
    ap.add_argument("--device", default="cpu", help="cpu | gpu | cuda[:k]: training and sampling device")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    torch.set_num_threads(args.threads)
    ispd_files = None
    if args.ispd:  # fail before training when the data is missing
        from scigen.datasets import DataNotAvailableError
        from scigen.placement.data import ispd2005_aux_files

        try:
            ispd_files = ispd2005_aux_files(designs=args.ispd_designs)
        except (DataNotAvailableError, ValueError) as exc:
            print(f"error: --ispd needs the ISPD2005 designs cached locally.\n{exc}", file=sys.stderr)
            return 2
    counts = args.circuits * len(args.sizes) if len(args.circuits) == 1 else args.circuits
    if len(counts) != len(args.sizes):
        ap.error(f"--circuits takes one number or one per size ({len(args.sizes)}), got {args.circuits}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model = _model(args)
    circuits = [(f"synth{n}-{k}", generate_netlist(HELD_OUT_SEED + 100 * n + k, SynthConfig.for_size(n)))
                for n, c in zip(args.sizes, counts, strict=True) for k in range(c)]
    rows = run_circuits(model, circuits, args.refine_steps)
    meta = {"date": datetime.date.today().isoformat(),
            "command": "python benchmarks/placement/bench_placement.py " + shlex.join(sys.argv[1:] if argv is None else argv),
            "threads": args.threads, "preset": args.preset if not args.run else f"run {args.run}",
            "params": sum(p.numel() for p in model.network.parameters()),
            "trained_steps": model.metadata.get("trained_steps"), "train_seconds": model.metadata.get("train_seconds", float("nan")),
            "final_loss": model.history.final_loss or float("nan"), "sample_steps": model.config.steps,
            "inner_steps": model.config.inner_steps, "samples": model.config.best_of,
            "legalize_steps": model.config.legalize_steps, "refine_steps": args.refine_steps, "config": model.config.model_dump()}
    if ispd_files is not None:
        from scigen.placement import read_bookshelf

        rows += run_circuits(model, [(d, read_bookshelf(a)) for d, a in ispd_files.items()], args.refine_steps)
        meta["ispd"] = f"{len(ispd_files)} designs, macro-only"
    summary = summarise(rows)
    meta["wall_seconds"] = time.perf_counter() - t_start
    (out / f"{args.name}.json").write_text(json.dumps({"meta": meta, "summary": summary, "rows": rows}, indent=2) + "\n")
    md = markdown(rows, summary, meta)
    (out / f"{args.name}.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
