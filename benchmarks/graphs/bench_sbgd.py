"""SBGD benchmark: SBGD vs its full-graph baseline (same code, ``full_graph=True``) vs G2PT on
community/SBM graphs, in one run.

1. Memory per training step at N = 100, 500, 2000 (one graph per step; communities of ~25 nodes,
   ``p_in`` 0.3, ``p_out`` chosen so each node has ~1 inter-community edge): activation bytes saved for
   backward (:func:`scigen.graphs.sbgd.memory.activation_bytes`, exact on CPU), plus
   ``torch.cuda.max_memory_allocated`` on a GPU. A model whose step would not fit this machine is
   reported as extrapolated from the smaller sizes (quadratic for the full-graph baseline).
2. Quality at N ≈ 100 (train graphs of 75–125 nodes): the same training budget for each model, then
   MMD² (degree, clustering, orbit, spectre; biased Gaussian-TV) against held-out graphs, V.U.N.,
   wall time of training and sampling, and an Erdős–Rényi baseline matched in size and density.
3. Size generalisation: the models of 2. (trained on <= 125 nodes) sample graphs of 400 (and 1000 for
   SBGD) nodes, scored against held-out graphs of those sizes (degree MMD², and the absolute error of
   the mean clustering coefficient and of the mean degree).

4. Quality on large graphs (``--large-n LO HI``, e.g. ``450 550`` or ``1900 2100``): the models of
   ``--large-models`` (default SBGD alone) against the Erdős–Rényi baseline. The full-graph baseline's
   training and sampling at N ≈ 500 exceed a 12-minute CPU run together, so ``--save-models DIR --fit-only``
   trains it in one run and ``--load-models DIR`` scores it in a second; ``--large-from`` merges the
   sections of several runs (same node range and data seeds: one table).

PolyGraph (``scigen-graphs[polygraph]``, when installed): the quality rows also get PolyGraph Discrepancy
(``PGD``, logistic-regression classifier, :mod:`scigen.graphs.metrics.pgd`) against the test graphs;
``--data polygraph`` trains and scores part 2 on PolyGraph's procedural SBM set (SPECTRE-sized: 2–5 blocks
of 20–40 nodes, ``--n-train`` / ``--n-test`` graphs of its train / test splits) instead of our community
graphs, with SPECTRE's SBM validity in the V.U.N.

Training steps default to 1000 per model (chosen on validation data seeds 101/102, ``--data-seed 101``:
at 300 steps SBGD is undertrained and worse than Erdős–Rényi). A run can reuse what an earlier results
json measured (``--memory-from``, ``--g2pt-from``, ``--large-from``) so that each run fits a CPU time
budget; ``--parts``/``--models`` select what runs. ``--steps``/``--quality-n`` scale it up (see
``paper_sbgd.sh``). Writes ``<out>/<name>.json`` and ``<out>/<name>.md`` (``--name``, default ``sbgd``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import sys
import time
from pathlib import Path

import networkx as nx
import numpy as np
import torch

from scigen.graphs.data import sized_sbm_graphs


def sbgd_model(full: bool, args):
    from scigen.graphs.sbgd import SBGD

    return SBGD(SBGD.Config.preset("tiny", block_size=args.block_size, partition="metis", full_graph=full,
                                   steps=args.sample_steps, train={"progress": False, "batch_size": args.batch_size}))


def g2pt_model(args):
    from scigen.graphs.g2pt import G2PT

    return G2PT(G2PT.Config.preset("tiny", copies=4, train={"progress": False, "batch_size": args.batch_size,
                                                           "warmup_steps": 20}))


def step_bytes(kind: str, graphs, args) -> int:
    from scigen.graphs.sbgd.memory import activation_bytes, training_step_bytes

    if kind == "G2PT":
        m = g2pt_model(args)
        ds = m.prepare_data(graphs, role="data", copies=1)
        batch = torch.stack([ds[i] for i in range(len(graphs))])
        n, loss = activation_bytes(m.training_loss, m.network, batch)
        loss.backward()
        return n
    return training_step_bytes(sbgd_model(kind == "full-graph", args), graphs)


def memory_table(args) -> list[dict]:
    rows = []
    for n in args.memory_n:
        g = sized_sbm_graphs(1, min_nodes=n, max_nodes=n, seed=n)
        row = {"N": n, "edges": g[0].number_of_edges()}
        for kind in ("SBGD", "full-graph", "G2PT"):
            limit = {"SBGD": 10**9, "full-graph": args.full_max_n, "G2PT": args.g2pt_max_n}[kind]
            if n > limit:
                row[kind] = None
                continue
            t = time.perf_counter()
            row[kind] = step_bytes(kind, g, args)
            row[f"{kind}_s"] = time.perf_counter() - t
        rows.append(row)
    return extrapolate(rows)


def extrapolate(rows: list[dict]) -> list[dict]:
    """Fill what was too large to run here from the last two measured sizes: ``bytes ∝ N^p`` with the
    fitted exponent ``p`` (≈ 2 for the full-graph baseline, ≈ 1 for SBGD and G2PT at these lengths)."""
    for kind in ("full-graph", "G2PT"):
        known = [(r["N"], r[kind]) for r in rows if r[kind] is not None and not r.get(f"{kind}_extrapolated")]
        for r in rows:
            if (r[kind] is None or r.get(f"{kind}_extrapolated")) and len(known) >= 2:
                (n0, b0), (n1, b1) = known[-2:]
                power = float(np.log(b1 / b0) / np.log(n1 / n0))
                r[kind] = b1 * (r["N"] / n1) ** power
                r[f"{kind}_extrapolated"] = True
                r[f"{kind}_exponent"] = power
    for r in rows:
        r["full/SBGD"] = r["full-graph"] / r["SBGD"]
        r["G2PT/SBGD"] = r["G2PT"] / r["SBGD"]
    return rows


def graph_stats(graphs) -> dict[str, float]:
    return {"mean_degree": float(np.mean([2 * g.number_of_edges() / g.number_of_nodes() for g in graphs])),
            "mean_clustering": float(np.mean([nx.average_clustering(g) for g in graphs]))}


def quality(args, sizes: tuple[int, int], models: tuple[str, ...], big_n: list[int], g2pt_row: dict | None = None) -> dict:
    """Part 2 (and 3) at node counts ``sizes``: train each of ``models`` for ``args.steps`` steps on
    community graphs of data seed ``args.data_seed`` and score against those of ``args.data_seed + 1``;
    ``g2pt_row``: a G2PT row of an earlier run, used instead of training G2PT again."""
    from scigen.graphs.data import erdos_renyi_like
    from scigen.graphs.metrics import graph_mmds, mmd_degree, vun

    lo, hi = sizes
    family = "any"
    if getattr(args, "data", "scigen") == "polygraph":
        from scigen.graphs.metrics.pgd import procedural_graphs

        train, test, family = procedural_graphs("sbm", "train", args.n_train), procedural_graphs("sbm", "test", args.n_test), "sbm"
        lo, hi = min(g.number_of_nodes() for g in train), max(g.number_of_nodes() for g in train)
    else:
        train = sized_sbm_graphs(args.n_train, min_nodes=lo, max_nodes=hi, seed=args.data_seed)
        test = sized_sbm_graphs(args.n_test, min_nodes=lo, max_nodes=hi, seed=args.data_seed + 1)
    results: dict = {"train_sizes": [lo, hi], "data_seeds": [args.data_seed, args.data_seed + 1],
                     "n_train": args.n_train, "n_test": args.n_test, "data": getattr(args, "data", "scigen")}
    er = erdos_renyi_like(train, args.n_test, seed=3)
    results["Erdős–Rényi"] = graph_mmds(test, er) | vun(er, train, family) | graph_stats(er) | pgd_row(test, er)
    results["reference (train vs test)"] = (graph_mmds(test, train[:args.n_test]) | graph_stats(train)
                                            | pgd_row(test, train[:args.n_test]))
    big_sizes = {"SBGD": big_n, "full-graph": big_n[:1], "G2PT": []}
    for kind in models:
        if kind == "G2PT" and g2pt_row is not None:
            results[kind] = g2pt_row
            continue
        saved_dir = None if args.load_models is None else args.load_models / kind
        if saved_dir is not None and saved_dir.exists():  # trained by an earlier --fit-only run
            from scigen.graphs.g2pt import G2PT
            from scigen.graphs.sbgd import SBGD

            m = (G2PT if kind == "G2PT" else SBGD).load(saved_dir)
            fit = json.loads(saved_dir.with_suffix(".json").read_text())
            fit_s, steps, final_loss = fit["fit_s"], fit["steps"], fit["final_loss"]
        else:
            m = g2pt_model(args) if kind == "G2PT" else sbgd_model(kind == "full-graph", args)
            t = time.perf_counter()
            m.fit(train, max_steps=args.steps, logger=None)
            fit_s, steps, final_loss = time.perf_counter() - t, args.steps, m.history.final_loss
            if args.save_models is not None:
                m.save(args.save_models / kind, overwrite=True)
                from scigen.core.files import atomic_write_text

                atomic_write_text(args.save_models / f"{kind}.json", json.dumps(
                    {"fit_s": fit_s, "steps": steps, "final_loss": final_loss, "train_sizes": [lo, hi],
                     "command": shlex.join(["python", *sys.argv])}, default=float) + "\n")
            if args.fit_only:
                print(kind, "trained", f"{fit_s:.0f} s", flush=True)
                continue
        t = time.perf_counter()
        if kind == "G2PT":
            gen = [g for g in m.sample(args.n_test, seed=4) if g is not None and g.number_of_nodes() > 0]
        else:
            gen = m.sample(args.n_test, seed=4, n_nodes=[g.number_of_nodes() for g in test])
        sample_s = time.perf_counter() - t
        row = graph_mmds(test, gen) | vun(gen, train, family) | graph_stats(gen) | pgd_row(test, gen)
        row |= {"fit_s": fit_s, "sample_s": sample_s, "steps": steps, "final_loss": final_loss}
        if saved_dir is not None and saved_dir.exists():
            row["trained_by"] = fit["command"]
        for n in [n for n in big_sizes[kind] if n > 0]:
            held = sized_sbm_graphs(args.n_big, min_nodes=n, max_nodes=n, seed=10 + n)
            t = time.perf_counter()
            out = m.sample(args.n_big, seed=5, n_nodes=n)
            ref, got = graph_stats(held), graph_stats(out)
            row[f"gen{n}"] = {"degree_mmd": mmd_degree(held, out), "sample_s": time.perf_counter() - t,
                              "abs_err_mean_degree": abs(got["mean_degree"] - ref["mean_degree"]),
                              "abs_err_mean_clustering": abs(got["mean_clustering"] - ref["mean_clustering"]),
                              **{f"gen_{k}": v for k, v in got.items()}, **{f"ref_{k}": v for k, v in ref.items()}}
        results[kind] = row
        print(kind, json.dumps(row, default=float)[:400], flush=True)
    return results


def pgd_row(ref, gen) -> dict:
    """PolyGraph Discrepancy of ``gen`` against ``ref`` when PolyGraph is installed and both hold >= 8 graphs."""
    from scigen.graphs.metrics.pgd import available, pgd

    gen = [g for g in gen if g.number_of_nodes() > 0]
    return pgd(ref, gen) if available() and min(len(ref), len(gen)) >= 8 else {}


def inter_per_node(graphs, blocks_of) -> float:
    """Mean number of edges between different blocks per node (``blocks_of(g)``: the blocks of ``g``)."""
    vals = []
    for g in graphs:
        label = {v: i for i, blk in enumerate(blocks_of(g)) for v in blk}
        vals.append(sum(label[u] != label[v] for u, v in g.edges) / g.number_of_nodes())
    return float(np.mean(vals))


def size_generalisation(args) -> dict:
    """Part 3 alone (``--size-only``): train SBGD and the full-graph baseline once at the quality
    setting, sample at ``--big-n`` with each ``inter_block_scaling`` (a sampling-time switch, so one
    trained model serves both), and count inter-block edges per node: for held-out graphs between
    METIS blocks of ``--block-size`` (what training sees), for SBGD's graphs between the blocks the
    sampler drew (the balanced plan: consecutive node ranges)."""
    from scigen.graphs.metrics import mmd_degree
    from scigen.graphs.sbgd import partition
    from scigen.graphs.sbgd.sizes import block_plan

    def metis_blocks(g):
        return partition(g, args.block_size, "metis", seed=0)

    def plan_blocks(g):
        plan = block_plan(g.number_of_nodes(), args.block_size, "balanced", [], np.random.default_rng(0))
        starts = np.cumsum([0, *plan])
        return [range(int(a), int(b)) for a, b in zip(starts[:-1], starts[1:], strict=True)]

    lo, hi = args.quality_n
    train = sized_sbm_graphs(args.n_train, min_nodes=lo, max_nodes=hi, seed=1)
    out: dict = {"train_sizes": [lo, hi], "rows": [],
                 "train_inter_per_node": inter_per_node(train, metis_blocks)}
    held = {n: sized_sbm_graphs(args.n_big, min_nodes=n, max_nodes=n, seed=10 + n) for n in args.big_n}
    for n, gs in held.items():
        out["rows"].append({"model": "held-out", "N": n, "degree_mmd": 0.0, "inter_per_node": inter_per_node(gs, metis_blocks),
                            **graph_stats(gs)})
    for full in (False, True):
        m = sbgd_model(full, args)
        t = time.perf_counter()
        m.fit(train, max_steps=args.steps, logger=None)
        out["full-graph fit_s" if full else "SBGD fit_s"] = time.perf_counter() - t
        if not full:
            out["train_block_counts"] = m.metadata["block_counts"]
        for scaling in (["none"] if full else ["none", "per_block_count"]):
            for n in (args.big_n[:1] if full else args.big_n):
                t = time.perf_counter()
                gen = m.sample(args.n_big, seed=5, n_nodes=n, inter_block_scaling=scaling)
                row = {"model": "full-graph" if full else f"SBGD, {scaling}", "N": n,
                       "degree_mmd": mmd_degree(held[n], gen), "sample_s": time.perf_counter() - t,
                       "inter_per_node": None if full else inter_per_node(gen, plan_blocks), **graph_stats(gen)}
                out["rows"].append(row)
                print(json.dumps(row, default=float), flush=True)
    return out


def size_markdown(res: dict, seconds: float) -> str:
    q = res["size"]
    lines = [f"## Size generalisation by `inter_block_scaling` ({datetime.date.today()}, {seconds / 60:.1f} min)", "",
             f"`{res['command']}`", "",
             f"Trained on {q['train_sizes']} nodes (SBGD {q['SBGD fit_s']:.0f} s, full-graph "
             f"{q['full-graph fit_s']:.0f} s; training block counts k in {q['train_block_counts']}, "
             f"{q['train_inter_per_node']:.2f} inter-block edges per node between METIS blocks of the training "
             "graphs). Inter-block edges per node: held-out between METIS blocks, SBGD between its sampled blocks.",
             "", "| model | N | degree MMD² | mean degree | mean clustering | inter-block edges / node |",
             "|---|---|---|---|---|---|"]
    for r in sorted(q["rows"], key=lambda r: (r["N"], r["model"] != "held-out")):
        inter = "–" if r["inter_per_node"] is None else f"{r['inter_per_node']:.2f}"
        lines.append(f"| {r['model']} | {r['N']} | {r['degree_mmd']:.4f} | {r['mean_degree']:.2f} | "
                     f"{r['mean_clustering']:.3f} | {inter} |")
    return "\n".join(lines) + "\n"


def markdown(res: dict, args, seconds: float) -> str:
    command = res.get("command") or shlex.join(["python", *sys.argv])
    lines = [f"# SBGD benchmark ({datetime.date.today()}, {seconds / 60:.1f} min)", "", f"`{command}`", ""]
    lines += summary_markdown(res)
    if "memory" in res:
        lines += ["## Memory per training step (activation bytes saved for backward, one graph, MB"
                  + (f"; rows from `{res['memory_from']}`" if res.get("memory_from") else "") + ")", "",
                  "| N | edges | SBGD | full-graph | G2PT | full/SBGD | G2PT/SBGD |", "|---|---|---|---|---|---|---|"]
    for r in res.get("memory", []):
        def mb(kind, r=r):
            ext = r.get(f"{kind}_extrapolated")
            return f"{r[kind] / 1e6:.1f}" + (f" (extrap., N^{r[kind + '_exponent']:.2f})" if ext else "")
        lines.append(f"| {r['N']} | {r['edges']} | {mb('SBGD')} | {mb('full-graph')} | {mb('G2PT')} | "
                     f"{r['full/SBGD']:.1f}x | {r['G2PT/SBGD']:.1f}x |")
    if "quality" in res:
        lines += quality_markdown(res["quality"], "Quality", args)
    for q in large_sections(res):
        lines += quality_markdown(q, "Quality, large graphs", args)
    return "\n".join(lines) + "\n"


def summary_markdown(res: dict) -> list[str]:
    """One table over sizes: per N, each model's activation MB of one training step (the memory row of
    that N), its ratio to SBGD's, and the MMD² and fit time of the quality section whose node range holds N."""
    mem = {r["N"]: r for r in res.get("memory", [])}
    sections = ([res["quality"]] if "quality" in res else []) + large_sections(res)
    if not mem or not sections:
        return []
    lines = ["## Summary (activation MB of one training step at N; MMD² on graphs of the node range; "
             "details below)", "",
             "| N (quality range) | model | step MB | ×SBGD | degree | clustering | orbit | spectre | V.U.N. | steps | fit s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for n, r in sorted(mem.items()):
        q = next((q for q in sections if q["train_sizes"][0] <= n <= q["train_sizes"][1]), None)
        for kind in ("Erdős–Rényi", "SBGD", "full-graph", "G2PT"):
            row = q.get(kind) if q else None
            has_mem = kind in r and r[kind] is not None
            if row is None and not has_mem:
                continue
            if has_mem:
                ext = " (extrap.)" if r.get(f"{kind}_extrapolated") else ""
                mb, ratio = f"{r[kind] / 1e6:.1f}{ext}", f"{r[kind] / r['SBGD']:.1f}"
            else:
                mb = ratio = "–"
            rng = f"{n} ({q['train_sizes'][0]}–{q['train_sizes'][1]})" if q else str(n)
            if row is None:
                lines.append(f"| {rng} | {kind} | {mb} | {ratio} | – | – | – | – | – | – | – |")
                continue
            vun_s = f"{row['VUN']:.2f}" if "VUN" in row else "–"
            steps = str(row.get("steps", "–"))
            fit = f"{row['fit_s']:.0f}" if "fit_s" in row else "–"
            lines.append(f"| {rng} | {kind} | {mb} | {ratio} | {row['degree']:.4f} | {row['clustering']:.4f} | "
                         f"{row['orbit']:.4f} | {row['spectre']:.4f} | {vun_s} | {steps} | {fit} |")
    return lines + [""]


def quality_markdown(q: dict, title: str, args) -> list[str]:
    seeds = q.get("data_seeds", [1, 2])
    n_train, n_test = q.get("n_train", args.n_train), q.get("n_test", args.n_test)
    source = ("PolyGraph's procedural SBM set" if q.get("data") == "polygraph" else
              f"data seeds {seeds[0]} / {seeds[1]}")
    has_pgd = any("PGD" in r for r in q.values() if isinstance(r, dict))
    lines = ["", f"## {title} at N in {q['train_sizes']} ({n_train} train / {n_test} test graphs, {source}; "
             "biased MMD², lower is better" + ("; PGD: PolyGraph Discrepancy, logistic regression, 0 = "
                                               "indistinguishable, 1 = separable" if has_pgd else "") + ")", "",
             "| model | degree | clustering | orbit | spectre | " + ("PGD | " if has_pgd else "")
             + "V.U.N. | mean degree | mean clustering | steps | fit s |",
             "|---|---|---|---|---|---|---|---|---|---|" + ("---|" if has_pgd else "")]
    kinds = [k for k in ("reference (train vs test)", "Erdős–Rényi", "SBGD", "full-graph", "G2PT") if k in q]
    for k in kinds:
        r = q[k]
        vun_s = f"{r['VUN']:.2f}" if "VUN" in r else "–"
        fit = f"{r['fit_s']:.0f}" if "fit_s" in r else "–"
        steps = str(r.get("steps", "–")) + (" (earlier run)" if r.get("from") and k == "G2PT" else "")
        pgd_s = (f"{r['PGD']:.3f} | " if "PGD" in r else "– | ") if has_pgd else ""
        lines.append(f"| {k} | {r['degree']:.4f} | {r['clustering']:.4f} | {r['orbit']:.4f} | {r['spectre']:.4f} | "
                     f"{pgd_s}{vun_s} | {r['mean_degree']:.2f} | {r['mean_clustering']:.3f} | {steps} | {fit} |")
    gen = [(k, key[3:], r) for k in ("SBGD", "full-graph") if k in q for key, r in q[k].items() if key.startswith("gen")]
    if gen:
        lines += ["", "## Size generalisation (trained on the graphs above, sampled at larger N)", "",
                  "| model | N | degree MMD² | mean degree (gen / held-out) | mean clustering (gen / held-out) | sample s |",
                  "|---|---|---|---|---|---|"]
        for k, n, r in gen:
            lines.append(f"| {k} | {n} | {r['degree_mmd']:.4f} | {r['gen_mean_degree']:.2f} / "
                         f"{r['ref_mean_degree']:.2f} | {r['gen_mean_clustering']:.3f} / "
                         f"{r['ref_mean_clustering']:.3f} | {r['sample_s']:.0f} |")
    return lines


def large_sections(res: dict) -> list[dict]:
    """The large-graph sections of a results dict (one dict in older runs, a list since 2026-12-03)."""
    x = res.get("large", [])
    return x if isinstance(x, list) else [x]


def merge_large(files: list[Path]) -> list[dict]:
    """The large-graph sections of earlier runs, one per node range: sections of the same range and data
    seeds (the same train/test/Erdős–Rényi graphs) are merged, each model row tagged with its file."""
    merged: dict[tuple, dict] = {}
    for f in files:
        saved = json.loads(Path(f).read_text())
        for q in large_sections(saved):
            q = {"n_train": saved["args"]["n_train"], "n_test": saved["args"]["n_test"]} | q
            key = (tuple(q["train_sizes"]), tuple(q.get("data_seeds", [1, 2])), q["n_train"], q["n_test"])
            rows = {k: (v | {"from": str(f)} if isinstance(v, dict) and "fit_s" in v else v) for k, v in q.items()}
            if key in merged:
                old = merged[key]["Erdős–Rényi"]["degree"]
                if not np.isclose(old, q["Erdős–Rényi"]["degree"]):
                    raise ValueError(f"--large-from: {f} has other graphs at N in {q['train_sizes']} "
                                     f"(Erdős–Rényi degree MMD² {q['Erdős–Rényi']['degree']} vs {old})")
                merged[key] |= {k: v for k, v in rows.items() if isinstance(v, dict) and "fit_s" in v}
            else:
                merged[key] = rows
    return sorted(merged.values(), key=lambda q: q["train_sizes"])


def _json_default(x):
    """JSON for what ``json`` does not know: paths as strings, numpy/torch scalars as floats."""
    return str(x) if isinstance(x, Path) else float(x)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    p.add_argument("--memory-n", type=int, nargs="+", default=[100, 500, 2000])
    p.add_argument("--full-max-n", type=int, default=500, help="largest N the full-graph step runs at (else extrap.)")
    p.add_argument("--g2pt-max-n", type=int, default=500)
    p.add_argument("--block-size", type=int, default=32)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--steps", type=int, default=1000,
                   help="training steps of each model (1000: chosen on validation data seed 101/102 over 300, "
                        "where SBGD is undertrained)")
    p.add_argument("--sample-steps", type=int, default=50)
    p.add_argument("--quality-n", type=int, nargs=2, default=[75, 125])
    p.add_argument("--n-train", type=int, default=32)
    p.add_argument("--n-test", type=int, default=16)
    p.add_argument("--big-n", type=int, nargs="+", default=[400, 1000])
    p.add_argument("--n-big", type=int, default=4)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--memory-only", action="store_true", help="run part 1 only (writes sbgd_memory.md)")
    p.add_argument("--size-only", action="store_true",
                   help="run part 3 only, per inter_block_scaling (writes sbgd_size.md / sbgd_size.json)")
    p.add_argument("--rewrite", type=Path, default=None,
                   help="re-render a saved sbgd.json (re-extrapolating its memory rows) instead of running")
    p.add_argument("--memory-from", "--memory-from-run", dest="memory_from", type=Path, default=None,
                   help="take the memory rows from this earlier results json (a --memory-only run) instead of "
                        "measuring them; with --rewrite they replace the saved rows (--large-from likewise "
                        "replaces the large-graph sections). --memory-from-run is the same flag's older name")
    p.add_argument("--data-seed", type=int, default=1,
                   help="seed of the training graphs (test graphs: seed + 1); 1 reports, 101 validates")
    p.add_argument("--parts", nargs="*", choices=["memory", "quality"], default=["memory", "quality"],
                   help="parts to run (the large set runs when --large-n is given)")
    p.add_argument("--models", nargs="+", choices=["SBGD", "full-graph", "G2PT"],
                   default=["SBGD", "full-graph", "G2PT"], help="models of the quality part")
    p.add_argument("--g2pt-from", type=Path, default=None,
                   help="take the G2PT quality row from this earlier results json instead of training G2PT")
    p.add_argument("--large-n", type=int, nargs=2, default=None, metavar=("LO", "HI"),
                   help="also score SBGD against Erdős–Rényi on graphs of LO..HI nodes (SBGD only)")
    p.add_argument("--large-models", nargs="+", choices=["SBGD", "full-graph"], default=["SBGD"],
                   help="models trained on the large set (--large-n)")
    p.add_argument("--large-from", type=Path, nargs="+", default=None,
                   help="take the large-graph sections from these earlier results jsons (--large-n runs); "
                        "sections of the same node range are merged")
    p.add_argument("--save-models", type=Path, default=None,
                   help="save each trained model of the quality parts to <dir>/<model> (with its fit time)")
    p.add_argument("--fit-only", action="store_true",
                   help="with --save-models: train and save, then stop (so training and scoring can be two "
                        "runs that each fit the time budget)")
    p.add_argument("--load-models", type=Path, default=None,
                   help="use the models an earlier --save-models run saved in this folder instead of training")
    p.add_argument("--data", default="scigen", choices=["scigen", "polygraph"],
                   help="part 2's graphs: our community graphs or PolyGraph's procedural SBM set (its extra)")
    p.add_argument("--name", default="sbgd", help="results are written to <out>/<name>.json and .md")
    args = p.parse_args()
    if args.rewrite is not None:
        saved = json.loads(args.rewrite.read_text())
        for k, v in saved["args"].items():
            if k not in ("out", "rewrite", "memory_from", "large_from"):
                setattr(args, k, v)
        if args.memory_from is not None:
            other = json.loads(args.memory_from.read_text())
            saved["memory"] = other["memory"]
            saved["command"] = (saved.get("command", "python benchmarks/graphs/bench_sbgd.py") + "; memory rows: "
                                + other.get("command", str(args.memory_from)))
        if args.large_from is not None:
            saved["large"] = merge_large(args.large_from)
            saved["command"] = (saved.get("command", "python benchmarks/graphs/bench_sbgd.py") + "; large-graph "
                                "sections: " + "; ".join(json.loads(Path(f).read_text()).get("command", str(f))
                                                         for f in args.large_from))
        saved["memory"] = extrapolate(saved["memory"])
        from scigen.core.files import atomic_write_text

        atomic_write_text(args.rewrite, json.dumps(saved, indent=2, default=_json_default) + "\n")
        atomic_write_text(args.rewrite.with_suffix(".md"), markdown(saved, args, saved["seconds"]))
        return
    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    if args.size_only:
        from scigen.core.files import atomic_write_text

        res = {"command": shlex.join(["python", *sys.argv]), "size": size_generalisation(args)}
        seconds = time.perf_counter() - t0
        args.out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(args.out / "sbgd_size.json", json.dumps(res | {"seconds": seconds}, indent=2,
                                                                  default=float) + "\n")
        atomic_write_text(args.out / "sbgd_size.md", size_markdown(res, seconds))
        print(size_markdown(res, seconds))
        return
    res = {"command": shlex.join(["python", *sys.argv])}
    if args.memory_from is not None:
        res["memory"] = extrapolate(json.loads(args.memory_from.read_text())["memory"])
        res["memory_from"] = str(args.memory_from)
    elif "memory" in args.parts:
        res["memory"] = memory_table(args)
        print(json.dumps(res["memory"], default=float), flush=True)
    if args.memory_only:
        from scigen.core.files import atomic_write_text

        args.out.mkdir(parents=True, exist_ok=True)
        text = markdown(res, args, time.perf_counter() - t0)
        atomic_write_text(args.out / "sbgd_memory.md", text)
        atomic_write_text(args.out / "sbgd_memory.json", json.dumps(res, indent=2, default=float) + "\n")
        return
    if "quality" in args.parts:
        g2pt_row = None
        if args.g2pt_from is not None:
            g2pt_row = json.loads(args.g2pt_from.read_text())["quality"]["G2PT"] | {"from": str(args.g2pt_from)}
        res["quality"] = quality(args, tuple(args.quality_n), tuple(args.models), args.big_n, g2pt_row)
    if args.large_n is not None:
        res["large"] = [quality(args, tuple(args.large_n), tuple(args.large_models), [])]
        if args.fit_only:
            return
    elif args.large_from is not None:
        res["large"] = merge_large(args.large_from)
    seconds = time.perf_counter() - t0
    args.out.mkdir(parents=True, exist_ok=True)
    from scigen.core.files import atomic_write_text

    atomic_write_text(args.out / f"{args.name}.json", json.dumps({"args": vars(args) | {"out": str(args.out)},
                                                                "seconds": seconds, **res}, indent=2,
                                                               default=_json_default) + "\n")
    atomic_write_text(args.out / f"{args.name}.md", markdown(res, args, seconds))
    print(markdown(res, args, seconds))


if __name__ == "__main__":
    main()
