"""Default step budgets against the paper's (issue 32, item 2): ``train.max_steps`` where the paper's count fits
a CPU.

Per system two arms of ``Config()`` on its default data, one torch thread, differing ONLY in
``train.max_steps``: the default's count and the paper's (from ``paper_preset.json``). Scored as the system's
demo scores (``bench_default_sizes.py``'s benches; MMSFM as its lr benchmark: W2² at the held-out time 2 and W1 at
an observed time, S-Gaussians, 300 cells per marginal). Early stopping, where ``Config()`` has it (D3U with
validation data), may end either arm early: the table reports the steps each fit really took; ``d3u_noval`` fits
D3U without validation data, so both arms train their whole count.

Verdict: the paper's count is better when its headline mean beats the default's by more than twice the larger
seed sd; otherwise the default is at least as good, at the CPU time the table shows.

Systems whose paper count does not fit a CPU (SBGD 100,000 steps, Inverse Flow 200,000, AGDiff 20,000 at about
1 CPU-s each, UniGEM/EDM 4.7 million) are not run: their rows cite the measured cost per step
(``results/default_sizes.md``'s calibration) instead.

    OMP_NUM_THREADS=1 nice python benchmarks/core/bench_default_steps.py --seeds 0 1 2   # -> results/default_steps.{md,json}
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_default_sizes import BENCHES, PRESET_FILES, ROOT, Bench, _ms, steps_taken, verdict  # noqa: E402

RESULTS = HERE / "results"


class MMSFMBench(Bench):
    system = "mmsfm"

    def cls(self):
        from scigen.singlecell.mmsfm.system import MMSFM

        return MMSFM

    def data(self):
        from scigen.singlecell.data import s_gaussians

        return {"train": s_gaussians(300, seed=0), "test": s_gaussians(300, seed=1)}

    def fit(self, overrides: dict, steps: int, seed: int, ctx):
        return super().fit({**overrides, "holdout": [2.0]}, steps, seed, ctx)

    def score(self, model, ctx):
        r = model.evaluate(ctx["test"], times=[2.0, 6.0])
        return {"W2_squared@2": float(r["W2_squared@2"]), "W1@6": float(r["W1@6"])}


class D3UNoValidationBench(type(BENCHES["d3u"])):
    """D3U fitted without ``val_data``: no early stopping, so each arm trains its whole count."""

    system = "d3u_noval"

    def _fit(self, model, ctx):
        model.fit(ctx["sp"].train)


STEP_BENCHES = {"gim": BENCHES["gim"], "d3u": BENCHES["d3u"], "d3u_noval": D3UNoValidationBench(),
                "mmsfm": MMSFMBench()}
FILES = {**PRESET_FILES, "d3u_noval": PRESET_FILES["d3u"],
         "mmsfm": "packages/singlecell/src/scigen/singlecell/mmsfm/paper_preset.json"}
HEADLINE = {"gim": ("W2", True), "d3u": ("CRPS", True), "d3u_noval": ("CRPS", True), "mmsfm": ("W2_squared@2", True)}
COLUMNS = {"gim": ("W2", "MMD", "energy", "target_AUROC"), "d3u": ("CRPS", "MSE", "QICE", "PICP"),
           "d3u_noval": ("CRPS", "MSE", "QICE", "PICP"), "mmsfm": ("W2_squared@2", "W1@6")}
#: what followed from a verdict
NOTES = {"mmsfm": "Since this run `Config()` trains the paper's 1,000 steps (a default that the measurement does not "
                  "justify goes back to the paper's value). The observed-time W1 went the other way (1.02 at 2,000 "
                  "steps against 1.89 at 1,000): past 1,000 steps the flow fits the observed marginals better and "
                  "interpolates the held-out one worse."}


def step_counts(system: str) -> dict[str, int]:
    rows = {r["setting"]: r for r in json.loads((ROOT / FILES[system]).read_text())["rows"]}
    row = rows["train.max_steps"]
    return {"default": int(row["default"]), "paper": int(row["paper"])}


def run_system(system: str, seeds: list[int]) -> dict:
    torch.set_num_threads(1)
    bench = STEP_BENCHES[system]
    ctx = bench.data()
    counts = step_counts(system)
    out = {"system": system, "seeds": seeds, "max_steps": counts, "arms": {}}
    for arm, steps in counts.items():
        runs = []
        for seed in seeds:
            t0 = time.process_time()
            model = bench.fit({}, steps, seed, ctx)
            cpu = time.process_time() - t0
            runs.append({"seed": seed, "steps": steps_taken(model, steps), "cpu_s": cpu, **bench.score(model, ctx)})
            print(f"[{system}] {arm} ({steps}) seed {seed}: {json.dumps(runs[-1])}", flush=True)
        out["arms"][arm] = runs
    return out


def render(parts: dict) -> str:
    lines = ["# Default step budgets against the paper's", "",
             "`OMP_NUM_THREADS=1 nice python benchmarks/core/bench_default_steps.py --seeds ...`: `Config()` with "
             "only `train.max_steps` changed, on the system's default data, one torch thread, scored as its demo "
             "scores; CPU-s = `time.process_time()` of the fit; mean ± sd over the seeds. Verdict: the paper's "
             "count is better only if its headline mean beats the default's by more than twice the larger seed sd.",
             ""]
    for system, r in parts.items():
        head, lower = HEADLINE[system]
        cols = COLUMNS[system]
        lines += [f"## {system}", "", f"Seeds {r['seeds']}; headline {head} ({'lower' if lower else 'higher'} is "
                  "better).", "", "| arm | max_steps | steps taken | CPU-s | " + " | ".join(cols) + " |",
                  "|---|---|---|---|" + "---|" * len(cols)]
        for arm, runs in r["arms"].items():
            taken = "/".join(str(x["steps"]) for x in runs)
            lines.append(f"| {arm} | {r['max_steps'][arm]:,} | {taken} | {_ms([x['cpu_s'] for x in runs])} | "
                         + " | ".join(_ms([x[k] for x in runs]) for k in cols) + " |")
        d, p = ([x[head] for x in r["arms"][arm]] for arm in ("default", "paper"))
        gap, noise, wins = verdict(d, p, lower)
        cost = statistics.fmean(x["cpu_s"] for x in r["arms"]["paper"]) / \
            statistics.fmean(x["cpu_s"] for x in r["arms"]["default"])
        lines += ["", f"Verdict ({head}, paper minus default {gap:+.4g}; noise = 2 × the larger seed sd = "
                      f"{noise:.2g}; the paper's count costs {cost:.2g}× the CPU time): "
                      + ("**the paper's count is better beyond seed noise**" if wins else
                         "the default is at least as good (better or within seed noise)") + ".", ""]
        if system in NOTES:
            lines += [NOTES[system], ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--systems", nargs="+", default=list(STEP_BENCHES), choices=list(STEP_BENCHES))
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--render", action="store_true", help="only rewrite default_steps.md from the .json")
    args = p.parse_args(argv)
    out = RESULTS / "default_steps.json"
    parts = json.loads(out.read_text()) if out.exists() else {}
    for system in [] if args.render else args.systems:
        parts[system] = run_system(system, args.seeds)
        out.write_text(json.dumps(parts, indent=1) + "\n")
        (RESULTS / "default_steps.md").write_text(render(parts))
    print(render(parts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
