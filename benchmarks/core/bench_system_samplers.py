"""One sampler table across systems: every diffusion/flow system x every sampler that applies x NFE.

Issue 13's benchmark. One model is trained per system (its ``tiny`` preset with ``--quick``), then
sampled with its paper sampler and with ``ddpm``, ``ddim``, ``dpmpp_2m``, ``unipc``, ``heun`` and
``euler_maruyama`` (where meaningful) at NFE 10, 20, 50 and the paper's, through the system's own
``sample(..., method=, steps=, seed=)`` (the engine's ``scigen.core.samplers.sample`` under every system
but MMSFM, whose integrators are its own). The adapters are in ``_system_adapters.py``.
Reported per cell: the system's headline metric (direction in the header), the sampling wall time and
the model calls counted by forward hooks. The paper sampler's cell is drawn with 3 sampling seeds
(mean and spread reported; every other cell uses the first seed), to size the seed noise.

    python benchmarks/core/bench_system_samplers.py [--systems core/toy-fm,...] [--quick] [--out DIR]
    python benchmarks/core/bench_system_samplers.py --merge a.json b.json ...   # one table from several runs

Writes ``DIR/system_samplers.{json,md}`` (default ``results/``). ``steps = NFE // calls per step``.

**Fast presets (issue 36).** ``--fast`` runs, per system, the paper's sampler and the candidates of
``_system_adapters.FAST`` with every seed of ``FAST_SEEDS`` (held-out data as in the table above) and picks the
cheapest candidate (fewest model calls; at a tie the one listed first) whose mean metric is within seed noise of the paper sampler's:
``|mean_c - mean_p| <= 2 sqrt((s_p^2 + s_c^2) / n)`` (two standard errors of the difference of two means over
``n`` seeds; ``s`` the seeds' standard deviations), and whose larger step counts of the same method are within
noise too (a match that more steps lose is truncation error landing near the data). Where none is, ``fast`` is
the paper sampler. Writes
``DIR/system_samplers_fast.{json,md}``; each system's ``Config.SAMPLERS["fast"]`` states the choice::

    python benchmarks/core/bench_system_samplers.py --fast --systems core/toy-fm --out /tmp/x
    python benchmarks/core/bench_system_samplers.py --fast --merge /tmp/*/system_samplers_fast.json
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _system_adapters import ADAPTERS, FAST, Adapter  # noqa: E402

NFES = (10, 20, 50)
SEEDS = (3, 4, 5)
FAST_SEEDS = (3, 4, 5)


@contextmanager
def counting(modules):
    """Count forward calls of ``modules`` (a one-element list, filled on exit)."""
    n = [0]

    def hook(*_):
        n[0] += 1

    handles = [m.register_forward_hook(hook) for m in modules]
    try:
        yield n
    finally:
        for h in handles:
            h.remove()


def cell(ad: Adapter, model, label: str, steps: int | None, seed: int) -> dict:
    """One timed draw (sampling only) and its score (not timed); errors are reported, not hidden."""
    with counting(ad.counted(model)) as calls:
        t0 = time.perf_counter()
        try:
            samples, err = ad.draw(model, label, steps, seed), None
        except Exception as exc:  # a solver that cannot run here is reported, not hidden
            samples, err = None, f"{type(exc).__name__}: {exc}"[:200]
        seconds = time.perf_counter() - t0
    value, extra = float("nan"), {}
    if err is None:
        out = ad.score(model, samples)
        value, extra = (out if isinstance(out, tuple) else (out, {}))
    return {"value": float(value), "seconds": seconds, "model_calls": calls[0], "extra": extra, "error": err}


def run(keys: list[str], quick: bool) -> list[dict]:
    rows = []
    for key in keys:
        ad = ADAPTERS[key]()
        t0 = time.perf_counter()
        model = ad.train(quick)
        train_s = time.perf_counter() - t0
        nfes = ad.nfes or tuple(sorted(set(NFES) | {ad.paper_nfe}))
        for label in ad.methods:
            per = ad.calls_per_step(label)
            for nfe in (nfes if per is not None else (None,)):
                if nfe == ad.paper_nfe and nfe not in NFES and ad.at_paper_nfe and label not in ad.at_paper_nfe:
                    continue
                steps = None if per is None else max(1, nfe // per)
                paper = label == ad.paper_method and nfe == ad.paper_nfe
                res = cell(ad, model, label, steps, SEEDS[0])
                row = {"system": ad.key, "metric": ad.metric, "method": label, "nfe": None if per is None else steps * per,
                       "steps": steps, "paper": paper, "train_seconds": train_s, "seed": SEEDS[0], **res}
                if paper:
                    others = [cell(ad, model, label, steps, s) for s in SEEDS[1:]]
                    vals = [res["value"]] + [o["value"] for o in others]
                    row["seed_values"] = vals
                    row["seed_seconds"] = [res["seconds"]] + [o["seconds"] for o in others]
                    row["seed_std"] = statistics.stdev(vals) if all(map(math.isfinite, vals)) else float("nan")
                rows.append(row)
                print(json.dumps(row), flush=True)
        for n in ad.notes:
            rows.append({"system": ad.key, "note": n})
    return rows


def within_noise(paper: list[float], cand: list[float]) -> bool:
    """The fast rule: the candidate's mean within two standard errors of the difference of the two means."""
    if not (all(map(math.isfinite, paper)) and all(map(math.isfinite, cand))):
        return False
    n = min(len(paper), len(cand))
    se = math.sqrt((statistics.variance(paper) + statistics.variance(cand)) / n)
    return abs(statistics.fmean(cand) - statistics.fmean(paper)) <= 2 * se


def run_fast(keys: list[str], quick: bool) -> list[dict]:
    """Paper sampler and ``FAST[key]["candidates"]``, each over ``FAST_SEEDS``; one row per (label, steps)."""
    rows = []
    for key in keys:
        ad, spec = ADAPTERS[key](), FAST[key]
        t0 = time.perf_counter()
        model = ad.train(quick)
        train_s = time.perf_counter() - t0
        paper = None
        for i, (label, steps) in enumerate([spec["paper"], *spec["candidates"]]):
            cells = [cell(ad, model, label, steps, s) for s in FAST_SEEDS]
            vals = [c["value"] for c in cells]
            err = next((c["error"] for c in cells if c["error"]), None)
            row = {"system": ad.key, "metric": ad.metric, "method": label, "steps": steps, "paper": i == 0,
                   "train_seconds": train_s, "seeds": list(FAST_SEEDS), "values": vals, "error": err,
                   "mean": statistics.fmean(vals), "std": statistics.stdev(vals),
                   "model_calls": statistics.fmean(c["model_calls"] for c in cells),
                   "seconds": statistics.median(c["seconds"] for c in cells),
                   "extra": [c["extra"] for c in cells]}
            if i == 0:
                paper = row
            else:
                row["within_noise"] = within_noise(paper["values"], vals)
            rows.append(row)
            print(json.dumps(row), flush=True)
        for n in ad.notes:
            rows.append({"system": ad.key, "note": n})
    return rows


def fast_choice(rs: list[dict]) -> dict:
    """The cheapest candidate within noise whose larger step counts (same method) are within noise too (a match
    that more steps lose is the truncation error landing near the data, not the paper sampler's solution); fewest
    model calls, at a tie the one listed first; else the paper row."""
    paper = next(x for x in rs if x["paper"])

    ok = [(i, r) for i, r in enumerate(rs)
          if r.get("within_noise") and holds_with_more_steps(rs, r) and r["model_calls"] < paper["model_calls"]]
    return min(ok, key=lambda ir: (ir[1]["model_calls"], ir[0]))[1] if ok else paper


def holds_with_more_steps(rs: list[dict], r: dict) -> bool:
    """Every candidate of the same method as ``r`` with more steps is within noise too."""
    return all(x["within_noise"] for x in rs if not x["paper"] and x["method"] == r["method"]
               and (x["steps"] or 0) > (r["steps"] or 0))


def fast_table(rows: list[dict]) -> str:
    out = [f"Fast sampling presets (issue 36): per system the paper's sampler and the candidates, each over seeds "
           f"{FAST_SEEDS} on held-out data; `fast` = the cheapest candidate with |mean - paper mean| <= 2 SE of "
           "the difference whose larger step counts (same method) are within noise too (`bench_system_samplers.py "
           "--fast --quick`; one CPU thread, shared machine, so read cost from the model calls, not the wall "
           "time).\n"]
    systems = list(dict.fromkeys(r["system"] for r in rows))
    out += ["| system | metric | paper sampler: calls, mean | fast: sampler, calls, mean |", "|---|---|---|---|"]
    for system in systems:
        rs = [r for r in rows if r["system"] == system and "note" not in r]
        paper, best = next(r for r in rs if r["paper"]), fast_choice(rs)
        name = "= paper" if best["paper"] else f"{best['method']} @ {best['steps']}"
        own = "adaptive" if paper["method"] == "dopri5" else "all T"
        out.append(f"| {system} | {rs[0]['metric']} | {paper['method']} @ {paper['steps'] or own}: "
                   f"{paper['model_calls']:.0f}, {paper['mean']:.4g} | {name}: {best['model_calls']:.0f}, "
                   f"{best['mean']:.4g} |")
    out.append("\nNot in the table, `fast` = the paper sampler: G2PT (autoregressive, no solver), GIM and SBGM (no "
               "solver), AGDiff (its sampler's steps also draw its training pseudo-anomalies), Inverse Flow (ICM: one "
               "call; IFM: the training's grid). Each config's `SAMPLER_NOTES` says why.\n")
    for system in systems:
        notes = [r["note"] for r in rows if r["system"] == system and "note" in r]
        rs = [r for r in rows if r["system"] == system and "note" not in r]
        best = fast_choice(rs)
        steps = "its own count" if best["steps"] is None else f"{best['steps']} steps"
        chosen = ("the paper sampler (no cheaper candidate within noise)" if best["paper"]
                  else f"{best['method']}, {steps}")
        out.append(f"### {system}: {rs[0]['metric']}; model trained in {rs[0]['train_seconds']:.0f} s\n")
        out.append(f"**fast = {chosen}**\n")
        out.append("| sampler | steps | model calls | seconds | mean ± std | seeds | within noise |")
        out.append("|---|---|---|---|---|---|---|")
        for r in rs:
            vals = ", ".join(f"{v:.4g}" for v in r["values"])
            tag = "paper" if r["paper"] else ("**yes**" if r["within_noise"] else "no")
            if not r["paper"] and r["within_noise"] and not holds_with_more_steps(rs, r):
                tag += " (more steps: no)"
            if r is best and not r["paper"]:
                tag += " (fast)"
            steps = "-" if r["steps"] is None else r["steps"]
            res = "error" if r["error"] else f"{r['mean']:.4g} ± {r['std']:.2g}"
            out.append(f"| {r['method']} | {steps} | {r['model_calls']:.0f} | {r['seconds']:.2f} | {res} | {vals} "
                       f"| {tag} |")
        errors = [f"{r['method']} @ {r['steps']}: {r['error']}" for r in rs if r["error"]]
        out += [f"\n{n}." for n in notes] + [f"\nerror: {e}" for e in errors]
        out.append("")
    return "\n".join(out)


def _fmt(r: dict | None) -> str:
    if r is None:
        return "-"
    if r["error"]:
        return "error"
    nominal = r["nfe"]
    calls = f", {r['model_calls']} calls" if r["model_calls"] and r["model_calls"] != nominal else ""
    return f"{r['value']:.4g} ({r['seconds']:.2f} s{calls})"


def table(rows: list[dict]) -> str:
    out = []
    for system in dict.fromkeys(r["system"] for r in rows):
        notes = [r["note"] for r in rows if r["system"] == system and "note" in r]
        rs = [r for r in rows if r["system"] == system and "note" not in r]
        base = next((r for r in rs if r["paper"]), None)
        head = f"### {system}: {rs[0]['metric']}; model trained in {rs[0]['train_seconds']:.0f} s"
        if base:
            vals = ", ".join(f"{v:.4g}" for v in base.get("seed_values", [base["value"]]))
            head += (f"\n\nPaper sampler {base['method']} @ NFE {base['nfe'] or base['model_calls']}: "
                     f"{base['value']:.4g} ({base['seconds']:.2f} s); seeds {SEEDS}: {vals} "
                     f"(std {base.get('seed_std', float('nan')):.2g})")
        out.append(head + "\n")
        cols = sorted({r["nfe"] for r in rs if r["nfe"] is not None})
        adaptive = any(r["nfe"] is None for r in rs)
        out.append("| method | " + " | ".join([f"NFE {n}" for n in cols] + ["adaptive"] * adaptive) + " |")
        out.append("|---|" + "---|" * (len(cols) + adaptive))
        for m in dict.fromkeys(r["method"] for r in rs):
            cells = [_fmt(next((x for x in rs if x["method"] == m and x["nfe"] == n), None)) for n in cols]
            if adaptive:
                cells.append(_fmt(next((x for x in rs if x["method"] == m and x["nfe"] is None), None)))
            out.append(f"| {m} | " + " | ".join(cells) + " |")
        errors = [f"{r['method']} @ {r['nfe']}: {r['error']}" for r in rs if r["error"]]
        out += [f"\n{n}." for n in notes] + [f"\nerror: {e}" for e in errors]
        out.append("")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", default=",".join(ADAPTERS))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--merge", nargs="+", type=Path, help="join the JSON files of several runs into one table")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    ap.add_argument("--fast", action="store_true", help="the fast-preset run (paper + FAST candidates, 3 seeds)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    if a.fast:
        keys = [k for k in a.systems.split(",") if k] if a.systems != ",".join(ADAPTERS) else list(FAST)
        rows = ([r for p in a.merge for r in json.loads(p.read_text())] if a.merge else run_fast(keys, a.quick))
        a.out.mkdir(parents=True, exist_ok=True)
        (a.out / "system_samplers_fast.json").write_text(json.dumps(rows, indent=2) + "\n")
        text = fast_table(rows)
        (a.out / "system_samplers_fast.md").write_text(text)
        print(text)
        return
    if a.merge:
        rows = [r for p in a.merge for r in json.loads(p.read_text())]
    else:
        rows = run([k for k in a.systems.split(",") if k], a.quick)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "system_samplers.json").write_text(json.dumps(rows, indent=2) + "\n")
    text = table(rows)
    (a.out / "system_samplers.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
