"""G2PT benchmark: V.U.N. and the four MMD² on planar / tree / SBM (SPECTRE split 128/32/40),
validity / uniqueness / novelty / FCD on a MOSES subset; G2PT against an Erdős–Rényi baseline matched
in size and density (graphs) or the untrained, grammar-masked G2PT (molecules), and against the
train-vs-test reference; training throughput in tokens/s (non-pad tokens).

Protocol per graph family: train on the 128 training graphs, sample ``--n-samples`` graphs
unconditionally (temperature 1, no top-k, grammar mask on), score V.U.N. (novelty against train) and
MMD² against the 40 test graphs. Reference row: V.U.N. of 40 training graphs against the other 88,
MMD² of the training set against the test set. MMD² is the biased Gaussian-TV estimate
(:mod:`scigen.graphs.metrics.mmd`); papers often report its square root or ratios to the reference.

CPU scale (the defaults: G2PT-tiny, a few hundred steps per dataset) takes ~25 min on a loaded
2-core machine and shows what a minute-scale model learns, far from the paper's numbers. At CPU
scale the SBM graphs are smaller (2–3 blocks of 20–25 nodes instead of SPECTRE's 2–5 blocks of
20–40, so SPECTRE's validity test — 2–5 blocks of 20–40 nodes, Wald test — still applies): SPECTRE's SBM graphs make sequences of up to ~5,600 tokens, and causal attention over them
costs ~200 GFLOP per training step of 4 graphs even for G2PT-tiny. The paper's scale runs
unchanged on a GPU, e.g.::

    python benchmarks/graphs/bench_g2pt.py --size small --steps 300000 --batch-size 60 \\
        --lr 1e-4 --n-samples 1000 --sbm-blocks 2,5 --sbm-size 20,40 \\
        --moses-train 1584663 --moses-test 176074 --moses-samples 30000 --accelerator gpu

PolyGraph (``scigen-graphs[polygraph]``, when installed): every graph row also gets PolyGraph
Discrepancy (``PGD``, logistic-regression classifier; :mod:`scigen.graphs.metrics.pgd`) against the test
graphs and PolyGraph's own V.U.N. (``VUN[polygraph]``); ``--data polygraph`` trains and scores on
PolyGraph's procedural planar / SBM / lobster sets (128 train / 40 test graphs, its seeds) instead of
ours (the SBM set is SPECTRE-sized: 2–5 blocks of 20–40 nodes).

Writes ``<out>/<name>.json`` and ``<out>/<name>.md`` (``--name``, default ``g2pt``; with the exact
command, date and wall time). ``benchmarks/graphs/paper.sh`` runs a reduced paper configuration.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import sys
import time
from pathlib import Path

import torch

# CPU-scale defaults per dataset: (steps, batch size); --steps / --batch-size override all
CPU_SCALE = {"tree": (400, 12), "planar": (300, 8), "sbm": (300, 8), "lobster": (300, 8), "moses": (400, 24)}
FAMILY_KW = {"planar": "planar_nodes", "tree": "tree_nodes"}


def _fit(model, graphs, steps: int, batch_size: int, args) -> tuple[float, float]:
    """Train; returns (non-pad tokens per second, seconds)."""
    from scigen.graphs.g2pt.tokenizer import encode

    opts = {"progress": False}
    if args.accelerator != "cpu":
        opts.update(accelerator=args.accelerator, devices=1)
    t0 = time.perf_counter()
    model.fit(graphs, max_steps=steps, batch_size=batch_size, **opts)
    dt = time.perf_counter() - t0
    if args.accelerator != "cpu":  # Lightning's teardown left the network on the CPU: sample on the GPU
        model.to("cuda" if args.accelerator in ("gpu", "cuda") else args.accelerator)
    probe = graphs[: min(len(graphs), 256)]
    mean_len = sum(len(encode(g, model.vocab, ordering=model.config.ordering, node_ids=model.config.node_ids))
                   for g in probe) / len(probe)
    return steps * batch_size * mean_len / dt, dt


def _model(family: str, args, steps: int):
    from scigen.graphs.g2pt import G2PT

    lr = args.lr if args.lr is not None else (3e-3 if args.size == "tiny" else 1e-4)
    train = {"lr": lr, "warmup_steps": 2000, "seed": args.seed}  # fit caps the warm-up at steps // 10
    return G2PT(G2PT.Config.preset("paper", size=args.size, family=family, copies=args.copies,
                                   ordering=args.ordering, node_ids=args.node_ids, train=train))


def _size(graphs) -> dict:
    """Mean node count: tiny samples are trivially valid trees / planar graphs, so V.U.N. needs it."""
    return {"nodes": sum(g.number_of_nodes() for g in graphs) / max(len(graphs), 1)}


def _atoms(smiles) -> dict:
    from rdkit import Chem

    mols = [Chem.MolFromSmiles(s) for s in smiles if s]
    mols = [m for m in mols if m is not None]
    return {"atoms": sum(m.GetNumAtoms() for m in mols) / max(len(mols), 1)}


def polygraph_row(ref, gen, train, family: str) -> dict:
    """PGD of ``gen`` against ``ref`` and PolyGraph's V.U.N., when PolyGraph is installed (else nothing)."""
    from scigen.graphs.metrics.pgd import available, pgd, polygraph_vun

    if not available():
        return {}
    gen = [g for g in gen if g.number_of_nodes() > 0]
    out = pgd(ref, gen) if min(len(ref), len(gen)) >= 8 else {}
    return out | {"VUN[polygraph]": polygraph_vun(gen, train, family)["VUN"]} if gen else out


def run_family(family: str, args) -> dict:
    from scigen.graphs.data import erdos_renyi_like, generate, spectre_split
    from scigen.graphs.metrics import graph_mmds, vun

    steps, bs = args.steps or CPU_SCALE[family][0], args.batch_size or CPU_SCALE[family][1]
    opts = {"n_nodes": getattr(args, FAMILY_KW[family])} if family in FAMILY_KW else {}
    if family == "sbm":
        (b0, b1), (s0, s1) = (map(int, args.sbm_blocks.split(",")), map(int, args.sbm_size.split(",")))
        opts = {"min_blocks": b0, "max_blocks": b1, "min_size": s0, "max_size": s1}
    if args.data == "polygraph":
        from scigen.graphs.metrics.pgd import procedural_graphs

        train, test = procedural_graphs(family, "train", 128), procedural_graphs(family, "test", 40)
    else:
        train, _, test = spectre_split(generate(family, 200, seed=args.seed, **opts))
    model = _model(family, args, steps)
    tok_s, secs = _fit(model, train, steps, bs, args)
    t0 = time.perf_counter()
    gen = [g for g in model.sample(args.n_samples, seed=args.seed + 1, temperature=1.0) if g is not None]
    sample_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    rows = {"G2PT": _size(gen) | vun(gen, train, family) | graph_mmds(test, gen) | polygraph_row(test, gen, train, family)}
    er = erdos_renyi_like(train, args.n_samples, seed=args.seed + 2)
    rows["Erdős–Rényi (matched n, density)"] = (_size(er) | vun(er, train, family) | graph_mmds(test, er)
                                                | polygraph_row(test, er, train, family))
    rows["train vs test (reference)"] = (_size(test) | vun(train[: len(test)], train[len(test):], family)
                                         | graph_mmds(test, train)
                                         | polygraph_row(test, train[: len(test)], train[len(test):], family))
    return {"rows": rows, "steps": steps, "batch_size": bs, "tokens_per_s": tok_s, "train_seconds": secs,
            "sample_seconds": sample_s, "metric_seconds": time.perf_counter() - t0,
            "final_loss": model.history.final_loss, "n_generated": len(gen)}


def run_moses(args) -> dict:
    from scigen.graphs.convert import smiles_to_graphs
    from scigen.graphs.data import moses
    from scigen.graphs.g2pt import G2PT
    from scigen.graphs.g2pt.demo import untrained_samples
    from scigen.graphs.metrics.molecules import molecule_metrics

    steps, bs = args.steps or CPU_SCALE["moses"][0], args.batch_size or CPU_SCALE["moses"][1]
    train = moses("train", limit=args.moses_train)
    test = moses("test", limit=args.moses_test)
    graphs = smiles_to_graphs(train)
    model = _model("molecule", args, steps)
    model._setup(graphs)
    untrained = G2PT.to_smiles(untrained_samples(model, args.moses_samples, seed=args.seed + 1))
    tok_s, secs = _fit(model, graphs, steps, bs, args)
    t0 = time.perf_counter()
    gen = G2PT.to_smiles(model.sample(args.moses_samples, seed=args.seed + 1, temperature=1.0))
    sample_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    rows = {"G2PT": _atoms(gen) | molecule_metrics(gen, train, test),
            "G2PT untrained (grammar mask)": _atoms(untrained) | molecule_metrics(
                untrained, train, test, fcd_metric=sum(s is not None for s in untrained) > 1),
            "train vs test (reference)": _atoms(test) | molecule_metrics(train[: args.moses_samples],
                                                                        train[args.moses_samples:], test)}
    return {"rows": rows, "steps": steps, "batch_size": bs, "tokens_per_s": tok_s, "train_seconds": secs,
            "sample_seconds": sample_s, "metric_seconds": time.perf_counter() - t0,
            "final_loss": model.history.final_loss, "n_generated": len(gen)}


def _table(name: str, res: dict) -> list[str]:
    keys = [k for k in ("nodes", "atoms", "validity", "uniqueness", "novelty", "VUN", "degree", "clustering", "orbit", "spectre",
                        "PGD", "VUN[polygraph]", "FCD") if any(k in r for r in res["rows"].values())]
    lines = [f"### {name}: {res['steps']} steps × batch {res['batch_size']}, "
             f"{res['tokens_per_s']:.0f} tokens/s training ({res['train_seconds']:.0f} s), "
             f"sampling {res['sample_seconds']:.0f} s, final loss {res['final_loss']:.3f}", "",
             "| model | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
    for model, r in res["rows"].items():
        lines.append(f"| {model} | " + " | ".join(f"{r[k]:.4g}" if k in r else "–" for k in keys) + " |")
    return lines + [""]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default="tree,planar,sbm,moses")
    ap.add_argument("--size", default="tiny", choices=["tiny", "small", "base", "large"])
    ap.add_argument("--steps", type=int, default=None, help=f"training steps (default per dataset: {CPU_SCALE})")
    ap.add_argument("--batch-size", type=int, default=None)
    ap.add_argument("--lr", type=float, default=None, help="default 3e-3 for tiny, else the paper's 1e-4")
    ap.add_argument("--ordering", default="deg", choices=["deg", "bfs", "uniform"])
    ap.add_argument("--node-ids", default="random,first_seen",
                    help="comma list, one trained model per entry: 'random' (the paper's permuted labels) and/or "
                         "'first_seen' (ours: labels renumbered by first appearance in the edge sequence)")
    ap.add_argument("--copies", type=int, default=100)
    ap.add_argument("--n-samples", type=int, default=40, help="graphs sampled per family (SPECTRE: 40)")
    ap.add_argument("--planar-nodes", type=int, default=64)
    ap.add_argument("--tree-nodes", type=int, default=64)
    ap.add_argument("--sbm-blocks", default="2,3", help="min,max blocks (paper / SPECTRE: 2,5)")
    ap.add_argument("--sbm-size", default="20,25", help="min,max block size (paper / SPECTRE: 20,40)")
    ap.add_argument("--moses-train", type=int, default=5000)
    ap.add_argument("--moses-test", type=int, default=1000)
    ap.add_argument("--moses-samples", type=int, default=500)
    ap.add_argument("--data", default="scigen", choices=["scigen", "polygraph"],
                    help="graph families: ours (SPECTRE split of scigen.graphs.data) or PolyGraph's procedural sets "
                         "(planar, sbm, lobster; needs scigen-graphs[polygraph])")
    ap.add_argument("--accelerator", default="cpu", help="cpu | gpu (Lightning accelerator for training)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    ap.add_argument("--name", default="g2pt", help="result file stem: <out>/<name>.json and .md")
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    if args.accelerator == "cpu":
        torch.set_num_threads(1)
    command = "python benchmarks/graphs/bench_g2pt.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    t_start = time.perf_counter()
    record = {"command": command.strip(), "date": datetime.date.today().isoformat(),
              "args": {k: str(v) for k, v in vars(args).items()}, "results": {}}
    args.out.mkdir(parents=True, exist_ok=True)
    node_ids = args.node_ids.split(",")
    if bad := [v for v in node_ids if v not in ("random", "first_seen")]:
        ap.error(f"--node-ids: unknown value(s) {bad}; expected random and/or first_seen")
    for name in args.datasets.split(","):
        for ids in node_ids:
            key = name if len(node_ids) == 1 else f"{name}, node_ids={ids}"
            run = argparse.Namespace(**(vars(args) | {"node_ids": ids}))
            record["results"][key] = run_moses(run) if name == "moses" else run_family(name, run)
            record["wall_seconds"] = time.perf_counter() - t_start
            (args.out / f"{args.name}.json").write_text(json.dumps(record, indent=2, default=float))
            print("\n".join(_table(key, record["results"][key])), flush=True)
    lines = [f"# G2PT-{args.size} benchmark (CPU scale)" if args.accelerator == "cpu" else
             f"# G2PT-{args.size} benchmark", "",
             f"`OMP_NUM_THREADS=1 {record['command']}` — {record['date']}, wall {record['wall_seconds']:.0f} s"
             f" ({'one torch thread on a shared 2-core CPU' if args.accelerator == 'cpu' else args.accelerator}).",
             "", "MMD columns: biased MMD² (Gaussian-TV kernel; degree σ=1, clustering σ=0.1, 4-node orbits σ=30, "
             "normalised-Laplacian spectrum σ=1) against the 40 test graphs; lower is better. "
             "PGD: PolyGraph Discrepancy against the test graphs (max over six descriptors of a classifier's JS "
             "lower bound; logistic regression, not the paper's TabPFN; 0 = indistinguishable, 1 = separable); "
             "VUN[polygraph]: PolyGraph's V.U.N. with our validity rule. "
             f"Data: {'PolyGraph procedural sets (128 train / 40 test)' if args.data == 'polygraph' else 'scigen.graphs.data, SPECTRE split'}. "
             "V.U.N. = valid ∧ unique ∧ novel; `nodes` / `atoms` = mean size of the samples (reference row: of the test "
             "set), since tiny samples are trivially valid. FCD: fcd-torch against the first "
             f"{args.moses_test} MOSES test molecules (small sets: the reference row shows the floor). Sampling: temperature 1, grammar mask on, unconditional.", ""]
    for name, res in record["results"].items():
        lines += _table(name, res)
    (args.out / f"{args.name}.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
