"""G2PT benchmark: V.U.N. and the four MMD² on planar / tree / SBM (SPECTRE split), validity /
uniqueness / novelty / FCD on a MOSES subset; against an Erdős–Rényi baseline matched in size and
density and the train-vs-test reference; training throughput in tokens/s.

CPU scale (defaults) runs in minutes; the paper's scale runs unchanged on a GPU, e.g.
``python benchmarks/graphs/bench_g2pt.py --size small --steps 300000 --batch-size 60 --n-samples 1000``.
Writes ``<out>/g2pt.json`` and ``<out>/g2pt.md``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch


def _throughput(model, graphs, steps: int, batch_size: int, lr: float) -> tuple[float, float]:
    from scigen.graphs.g2pt.tokenizer import encode

    t0 = time.perf_counter()
    model.fit(graphs, max_steps=steps, batch_size=batch_size, lr=lr, progress=False)
    dt = time.perf_counter() - t0
    mean_len = sum(len(encode(g, model.vocab)) for g in graphs[:64]) / min(len(graphs), 64)
    return steps * batch_size * mean_len / dt, dt


def run_family(family: str, args) -> dict:
    from scigen.graphs.data import erdos_renyi_like, generate, spectre_split
    from scigen.graphs.g2pt import G2PT
    from scigen.graphs.metrics import graph_mmds, vun

    opts = {"planar": {"n_nodes": args.planar_nodes}, "tree": {"n_nodes": args.tree_nodes}, "sbm": {}}[family]
    train, val, test = spectre_split(generate(family, 200, seed=0, **opts))
    model = G2PT(size=args.size, family=family, batch_size=args.batch_size, copies=args.copies, lr=args.lr,
                 warmup_steps=min(2000, args.steps // 10))
    tok_s, secs = _throughput(model, train, args.steps, args.batch_size, args.lr)
    kw = {"prompt_nodes": args.planar_nodes, "temperature": 0.3} if family == "planar" else {}
    t0 = time.perf_counter()
    gen = [g for g in model.sample(args.n_samples, seed=1, **kw) if g is not None]
    sample_s = time.perf_counter() - t0
    orbit = family != "sbm" or args.sbm_orbit
    rows = {}
    rows["G2PT"] = vun(gen, train, family) | graph_mmds(test, gen, orbit=orbit)
    er = erdos_renyi_like(train, args.n_samples, seed=2)
    rows["Erdős–Rényi"] = vun(er, train, family) | graph_mmds(test, er, orbit=orbit)
    rows["train (reference)"] = vun(train[: len(test)], train[len(test):], family) | graph_mmds(test, train, orbit=orbit)
    return {"rows": rows, "tokens_per_s": tok_s, "train_seconds": secs, "sample_seconds": sample_s,
            "final_loss": model.metadata.get("final_loss")}


def run_moses(args) -> dict:
    from scigen.graphs.data import moses
    from scigen.graphs.g2pt import G2PT
    from scigen.graphs.metrics.molecules import molecule_metrics

    train = moses("train", limit=args.moses_train)
    test = moses("test", limit=args.moses_test)
    model = G2PT(size=args.size, family="molecule", batch_size=args.batch_size, copies=args.copies, lr=args.lr,
                 warmup_steps=min(2000, args.steps // 10))
    from scigen.graphs.convert import smiles_to_graphs

    graphs = smiles_to_graphs(train)
    tok_s, secs = _throughput(model, graphs, args.steps, args.batch_size, args.lr)
    gen = G2PT.to_smiles(model.sample(args.n_samples, seed=1))
    rows = {"G2PT": molecule_metrics(gen, train, test),
            "train (reference)": molecule_metrics(train[: len(test)], train[len(test):], test)}
    return {"rows": rows, "tokens_per_s": tok_s, "train_seconds": secs, "final_loss": model.metadata.get("final_loss")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--datasets", default="planar,tree,sbm,moses")
    ap.add_argument("--size", default="tiny", choices=["tiny", "small", "base", "large"])
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--copies", type=int, default=20)
    ap.add_argument("--n-samples", type=int, default=40)
    ap.add_argument("--planar-nodes", type=int, default=64)
    ap.add_argument("--tree-nodes", type=int, default=64)
    ap.add_argument("--sbm-orbit", action="store_true", help="orbit MMD on SBM (slow in pure Python)")
    ap.add_argument("--moses-train", type=int, default=2000)
    ap.add_argument("--moses-test", type=int, default=500)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/graphs/results"))
    args = ap.parse_args()
    torch.manual_seed(0)
    record = {"args": {k: str(v) for k, v in vars(args).items()}, "results": {}}
    for name in args.datasets.split(","):
        record["results"][name] = run_moses(args) if name == "moses" else run_family(name, args)
        print(name, json.dumps(record["results"][name], indent=1, default=float))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "g2pt.json").write_text(json.dumps(record, indent=2, default=float))
    lines = [f"G2PT-{args.size}, {args.steps} steps × batch {args.batch_size}", ""]
    for name, res in record["results"].items():
        keys = sorted({k for r in res["rows"].values() for k in r})
        lines += [f"### {name} ({res['tokens_per_s']:.0f} tokens/s training)", "",
                  "| model | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
        for model, r in res["rows"].items():
            lines.append(f"| {model} | " + " | ".join(f"{r.get(k, float('nan')):.4g}" for k in keys) + " |")
        lines.append("")
    (args.out / "g2pt.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
