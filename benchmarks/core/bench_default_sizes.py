"""Default network sizes against the paper's, at the same CPU-time budget (issue 32, item 2).

Five systems size their default network below the paper preset "for compute": AGDiff, SBGD, GIM, Inverse
Flow and D3U. Per system this trains two arms on the system's default data, one torch thread:

* ``default``: ``Config()``;
* ``paper sizes``: ``Config()`` with ONLY the compute-scale size rows of its ``paper_preset.json`` set to the
  paper's value (``SIZE_ROWS`` below; ``train.max_steps`` is the user's step budget and stays out);

each for the same CPU time (``time.process_time()``): two short calibration fits (``k`` and ``3k`` steps)
give the seconds per step ``s`` and the fixed cost ``o`` of a fit, and each arm then trains
``max_steps = (budget - o) / s`` steps from a fresh network; the table reports the steps and CPU seconds
each fit really took. Both arms are scored the way the system's demo scores (held-out split, same metric):

* AGDiff: AUC / F1 of ``score`` on the demo's split (half the normal graphs train, the rest + anomalies test);
* SBGD: MMD² (degree, clustering, orbit, spectre) of samples against the SPECTRE test split;
* GIM: W2 / MMD / target AUROC of 200 cells per out-of-distribution context (``score_contexts``);
* Inverse Flow: PSNR of ICM on the circle toy, against the hidden clean points (the size rows are U-Net rows:
  the default data are vectors, so both arms build the same MLP; the U-Net cost on the paper's 256² crops is
  measured separately, one step at the default batch extrapolated from batch 1);
* D3U: CRPS / MSE / QICE / PICP on 64 test windows (``evaluate``), early stopping on the validation split.

Run (about 35 min wall on a loaded 2-core machine at 60 CPU-s per arm, 2 seeds)::

    OMP_NUM_THREADS=1 nice python benchmarks/core/bench_default_sizes.py --budget 60 --seeds 0 1
    python benchmarks/core/bench_default_sizes.py --render     # results/default_sizes.{md,json}

``--systems agdiff gim`` runs a subset (each system writes ``results/default_sizes_parts/<system>.json``;
``--render`` merges the parts).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
PARTS = RESULTS / "default_sizes_parts"
ROOT = HERE.parent.parent

#: the compute-scale size rows per system (issue 32 item 2; ``train.max_steps`` and D3U's ``horizon`` stay out)
SIZE_ROWS = {
    "agdiff": ("hidden", "gin_layers", "latent_dim", "denoiser_hidden", "denoiser_layers", "detector_layers",
               "train.batch_size"),
    "sbgd": ("block_size", "hidden", "layers", "edge_hidden", "block_embedding", "steps", "train.batch_size"),
    "gim": ("width", "depth", "mc_samples", "train.batch_size"),
    "inverseflow": ("base_channels", "channel_mults", "patch", "n_patches"),
    "d3u": ("f_d_model", "f_d_ff", "d_model", "train.batch_size", "train.lr", "train.val_every",
            "train.early_stopping"),
}

PRESET_FILES = {
    "agdiff": "packages/graphs/src/scigen/graphs/agdiff/paper_preset.json",
    "sbgd": "packages/graphs/src/scigen/graphs/sbgd/paper_preset.json",
    "gim": "packages/singlecell/src/scigen/singlecell/gim/paper_preset.json",
    "inverseflow": "packages/singlecell/src/scigen/singlecell/inverseflow/paper_preset.json",
    "d3u": "packages/timeseries/src/scigen/timeseries/d3u/paper_preset.json",
}

#: calibration fit lengths (k, 3k steps)
CALIB = {"agdiff": 10, "sbgd": 6, "gim": 20, "inverseflow": 20, "d3u": 10}

#: the metric each table leads with, and whether lower is better
HEADLINE = {"agdiff": ("AUC", False), "sbgd": ("MMD_mean", True), "gim": ("W2", True),
            "inverseflow": ("PSNR", False), "d3u": ("CRPS", True)}

#: the columns of the markdown tables (the .json keeps every metric)
COLUMNS = {"agdiff": ("AUC", "F1"), "sbgd": ("degree", "clustering", "orbit", "spectre", "MMD_mean", "VUN"),
           "gim": ("W2", "MMD", "energy", "R2_means", "target_AUROC"), "inverseflow": ("PSNR", "PSNR_noisy"),
           "d3u": ("CRPS", "CRPS_sum", "QICE", "PICP", "MSE", "MAE")}

#: what the numbers alone do not say
NOTES = {
    "agdiff": "Since this run `Config()` has the paper sizes (a default the measurement does not justify goes back to "
              "the paper's value); `preset(\"small\")` keeps the narrower network of the `default` arm by name.",
    "gim": "GIM's calibration under-estimates the paper-size step (its later steps cost more than the "
           "calibration's first 60): those fits ran over the budget, i.e. the paper sizes had more CPU time.",
    "inverseflow": "The size rows are U-Net rows: on the default data (vectors) both arms build the same MLP "
                   "(the PSNR difference is the calibration's step count and seed noise); their cost on images "
                   "is the line below.",
}

QUIET = {"progress": False, "logger": None}


def paper_overrides(system: str) -> dict:
    """The ``SIZE_ROWS`` of ``system`` at their paper values, as nested ``Config`` overrides."""
    rows = {r["setting"]: r for r in json.loads((ROOT / PRESET_FILES[system]).read_text())["rows"]}
    out: dict = {}
    for name in SIZE_ROWS[system]:
        row = rows[name]
        assert row["default"] != row["paper"], (system, name)
        value = tuple(row["paper"]) if isinstance(row["paper"], list) else row["paper"]
        if name.startswith("train."):
            out.setdefault("train", {})[name.split(".", 1)[1]] = value
        else:
            out[name] = value
    return out


# ---------------------------------------------------------------------------------------------- systems
class Bench:
    """One system: ``data()`` -> context, ``fit(cls, overrides, steps, seed, ctx)`` -> model, ``score``."""

    system = ""

    def cls(self):
        raise NotImplementedError

    def data(self):
        raise NotImplementedError

    def fit(self, overrides: dict, steps: int, seed: int, ctx):
        train = {**overrides.get("train", {}), "max_steps": steps, "seed": seed, **QUIET}
        model = self.cls()(None, **{**overrides, "train": train})
        self._fit(model, ctx)
        return model

    def _fit(self, model, ctx):
        model.fit(ctx["train"])

    def score(self, model, ctx) -> dict:
        raise NotImplementedError


class AGDiffBench(Bench):
    system = "agdiff"

    def cls(self):
        from scigen.graphs.agdiff.system import AGDiff

        return AGDiff

    def data(self):
        from scigen.graphs.agdiff.demo import split_normal

        train, test = split_normal(self.cls().default_data(quick=False), seed=0)
        return {"train": train, "test": test}

    def score(self, model, ctx):
        from scigen.graphs.agdiff.graphs import anomaly_labels
        from scigen.graphs.agdiff.metrics import detection_scores

        r = detection_scores(anomaly_labels(ctx["test"]), model.score(ctx["test"]))
        return {"AUC": float(r["auc"]), "F1": float(r["f1"])}


class SBGDBench(Bench):
    system = "sbgd"

    def cls(self):
        from scigen.graphs.sbgd.system import SBGD

        return SBGD

    def data(self):
        from scigen.graphs.data import spectre_split

        train, _, test = spectre_split(self.cls().default_data(quick=False))
        return {"train": train, "test": test}

    def score(self, model, ctx):
        r = model.evaluate(ctx["test"], seed=1, orbit=True)
        out = {k: float(r[k]) for k in ("degree", "clustering", "orbit", "spectre") if k in r}
        out["MMD_mean"] = statistics.fmean(out.values())
        out["VUN"] = float(r["VUN"])
        return out


class GIMBench(Bench):
    system = "gim"

    def cls(self):
        from scigen.singlecell.gim.system import GIM

        return GIM

    def data(self):
        return {"train": self.cls().default_data(quick=False)}

    def score(self, model, ctx):
        from scigen.singlecell.gim.metrics import score_contexts

        ev = model.eval_contexts(ctx["train"])
        pred, probs = model.predict_contexts(ev, n_samples=200, seed=0)
        return {k: float(v) for k, v in score_contexts(pred, ev, probs).items()}


class InverseFlowBench(Bench):
    system = "inverseflow"

    def cls(self):
        from scigen.singlecell.inverseflow.system import InverseFlow

        return InverseFlow

    def data(self):
        return {"train": self.cls().default_data(quick=False)}

    def score(self, model, ctx):
        r = model.evaluate(ctx["train"], clean_layer="clean")
        return {"PSNR": float(r["PSNR"]), "PSNR_noisy": float(r["PSNR_noisy"])}


class D3UBench(Bench):
    system = "d3u"

    def cls(self):
        from scigen.timeseries.d3u.system import D3U

        return D3U

    def data(self):
        from scigen.timeseries.data import split_ratio

        return {"sp": split_ratio(self.cls().default_data(quick=False), self.cls().Config().context_length)}

    def _fit(self, model, ctx):
        model.fit(ctx["sp"].train, val_data=ctx["sp"].val)

    def score(self, model, ctx):
        r = model.evaluate(ctx["sp"].test, stride=model.config.horizon, max_windows=64)
        return {k: float(v) for k, v in r.items()}


BENCHES = {b.system: b for b in (AGDiffBench(), SBGDBench(), GIMBench(), InverseFlowBench(), D3UBench())}


# ---------------------------------------------------------------------------------------------- running
def n_params(model) -> int:
    return sum(p.numel() for p in model.network.parameters() if p.requires_grad) or \
        sum(p.numel() for p in model.network.parameters())


def timed_fit(bench: Bench, overrides: dict, steps: int, seed: int, ctx):
    t0 = time.process_time()
    model = bench.fit(overrides, steps, seed, ctx)
    return model, time.process_time() - t0


def steps_taken(model, planned: int) -> int:
    """Optimiser steps the fit really took (early stopping may end it before ``planned``)."""
    for attr in ("global_step", "steps"):
        v = getattr(model.history, attr, None)
        if isinstance(v, int) and v > 0:
            return v
    return planned


def calibrate(bench: Bench, overrides: dict, ctx, k: int, budget: float) -> dict:
    """Seconds per step ``s`` and fixed cost ``o`` of a fit (from fits of ``k`` and ``3k`` steps) and the
    steps ``(budget - o) / s`` that fill ``budget``."""
    k = max(k, 2)
    _, t1 = timed_fit(bench, overrides, k, 0, ctx)
    _, t2 = timed_fit(bench, overrides, 3 * k, 0, ctx)
    # the difference is noisy on a loaded machine: a step costs at least a quarter of the long fit's mean
    s = max((t2 - t1) / (2 * k), 0.25 * t2 / (3 * k))
    o = max(t1 - k * s, 0.0)
    steps = max(1, int((budget - o) / s))
    return {"s_per_step": s, "overhead_s": o, "steps": steps, "calib": [k, t1, 3 * k, t2]}


def unet_step_cost(overrides: dict) -> dict:
    """Inverse Flow on images: CPU seconds of one training step (forward + backward through the U-Net) of the
    default-size and the paper-size U-Net at the default batch on their crops (1 channel), measured on one
    crop and multiplied by the batch (the paper-size U-Net at batch 256 on 256² crops needs tens of GB: it
    cannot be run here at all)."""
    from scigen.singlecell.inverseflow.model import build_network
    from scigen.singlecell.inverseflow.system import InverseFlow

    out = {}
    for arm, over in (("default", {}), ("paper sizes", overrides)):
        cfg = InverseFlow(None, **over).config
        torch.manual_seed(0)
        net = build_network(cfg, "images", 1)
        net.train()
        x = torch.randn(1, 1, cfg.patch, cfg.patch)
        t = torch.full((1,), 0.05)
        net(x, t).square().mean().backward()  # warm
        t0 = time.process_time()
        net(x, t).square().mean().backward()
        per_item = time.process_time() - t0
        out[arm] = {"parameters": sum(p.numel() for p in net.parameters()), "patch": cfg.patch,
                    "batch": cfg.train.batch_size, "cpu_s_per_crop": per_item,
                    "cpu_s_per_step_est": per_item * cfg.train.batch_size}
    return out


def run_system(system: str, budget: float, seeds: list[int], calib_k: int | None = None) -> dict:
    torch.set_num_threads(1)
    bench = BENCHES[system]
    ctx = bench.data()
    arms = {"default": {}, "paper sizes": paper_overrides(system)}
    out = {"system": system, "budget_cpu_s": budget, "seeds": seeds, "rows": list(SIZE_ROWS[system]),
           "paper_values": arms["paper sizes"], "arms": {}}
    timed_fit(bench, {}, max(2, CALIB[system] // 2), 0, ctx)  # warm-up: imports and first-call costs
    for arm, over in arms.items():
        cal = calibrate(bench, over, ctx, calib_k or CALIB[system], budget)
        print(f"[{system}] {arm}: {cal['s_per_step']:.3f} CPU-s/step, overhead {cal['overhead_s']:.1f} s "
              f"-> {cal['steps']} steps", flush=True)
        runs = []
        for seed in seeds:
            model, cpu = timed_fit(bench, over, cal["steps"], seed, ctx)
            t0 = time.process_time()
            metrics = bench.score(model, ctx)
            runs.append({"seed": seed, "steps": steps_taken(model, cal["steps"]), "cpu_s": cpu,
                         "eval_cpu_s": time.process_time() - t0, "parameters": n_params(model), **metrics})
            print(f"[{system}] {arm} seed {seed}: {json.dumps(runs[-1])}", flush=True)
        out["arms"][arm] = {"calibration": cal, "runs": runs}
    if system == "inverseflow":
        out["unet_images"] = unet_step_cost(arms["paper sizes"])
        print(f"[{system}] images: {json.dumps(out['unet_images'])}", flush=True)
    PARTS.mkdir(parents=True, exist_ok=True)
    (PARTS / f"{system}.json").write_text(json.dumps(out, indent=1))
    return out


# ---------------------------------------------------------------------------------------------- report
def _ms(vals) -> str:
    vals = [v for v in vals if v == v]
    if not vals:
        return "n/a"
    sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
    return f"{statistics.fmean(vals):.4g} ± {sd:.2g}"


def verdict(default: list[float], paper: list[float], lower: bool) -> tuple[float, float, bool]:
    """(paper mean minus default mean, noise = twice the larger seed sd, whether the paper arm wins beyond it)."""
    gap = statistics.fmean(paper) - statistics.fmean(default)
    noise = 2 * max(statistics.stdev(default), statistics.stdev(paper)) if len(default) > 1 else 0.0
    return gap, noise, (gap < -noise) if lower else (gap > noise)


def render() -> None:
    parts = {p.stem: json.loads(p.read_text()) for p in sorted(PARTS.glob("*.json"))}
    lines = ["# Default network sizes against the paper's at equal CPU time", "",
             "`OMP_NUM_THREADS=1 nice python benchmarks/core/bench_default_sizes.py --budget B --seeds 0 1` "
             "(then `--render`). Per system two arms on its default data, one torch thread: `Config()` and "
             "`Config()` with only the compute-scale size rows at the paper's value; each arm trains "
             "`(B - o) / s` steps (seconds per step `s` and fixed cost `o` from two calibration fits), "
             "scored as the system's demo scores on held-out data. CPU-s = `time.process_time()` of the fit "
             "(evaluation not counted), so the load of other jobs on the machine does not enter it; mean ± sd over "
             "the seeds. Verdict: the paper sizes win only if their headline mean beats the default's by more "
             "than twice the larger seed sd.", ""]
    for system, r in parts.items():
        metric_keys = [k for k in COLUMNS[system] if k in r["arms"]["default"]["runs"][0]]
        head, lower = HEADLINE[system]
        lines += [f"## {system}", "",
                  f"Budget {r['budget_cpu_s']:g} CPU-s per fit, seeds {r['seeds']}; paper-size rows: "
                  + ", ".join(f"`{k}`" for k in r["rows"]) + f" = `{json.dumps(r['paper_values'])}`. "
                  f"Headline: {head} ({'lower' if lower else 'higher'} is better).", "",
                  "| arm | parameters | steps | CPU-s | " + " | ".join(metric_keys) + " |",
                  "|---|---|---|---|" + "---|" * len(metric_keys)]
        for arm, a in r["arms"].items():
            runs = a["runs"]
            steps = sorted({x["steps"] for x in runs})
            lines.append(f"| {arm} | {runs[0]['parameters']:,} | {'/'.join(map(str, steps))} | "
                         f"{_ms([x['cpu_s'] for x in runs])} | "
                         + " | ".join(_ms([x[k] for x in runs]) for k in metric_keys) + " |")
        d, p = ([x[head] for x in r["arms"][arm]["runs"]] for arm in ("default", "paper sizes"))
        gap, noise, wins = verdict(d, p, lower)
        lines += ["", f"Verdict ({head}, paper sizes minus default {gap:+.4g}; noise = 2 × the larger seed sd = "
                      f"{noise:.2g}): " + ("**the paper sizes are better beyond seed noise**" if wins else
                                          "the default is at least as good (better or within seed noise)") + "."]
        if system in NOTES:
            lines += ["", NOTES[system]]
        cal = {arm: a["calibration"] for arm, a in r["arms"].items()}
        lines += ["", "Calibration: " + "; ".join(f"{arm} {c['s_per_step']:.3g} CPU-s/step + {c['overhead_s']:.3g} s "
                                                 "per fit" for arm, c in cal.items()) + "."]
        if "unet_images" in r:
            u = r["unet_images"]
            lines += ["", "Images (the rows' only use): one training step of the U-Net on the camera image, "
                      "extrapolated from one crop: " + "; ".join(
                          f"{arm}: {v['parameters']:,} parameters, {v['patch']}² crops, batch {v['batch']}, "
                          f"{v['cpu_s_per_crop']:.3g} CPU-s per crop ≈ {v['cpu_s_per_step_est']:.3g} CPU-s per step"
                          for arm, v in u.items()) + "."]
        lines.append("")
    (RESULTS / "default_sizes.md").write_text("\n".join(lines))
    (RESULTS / "default_sizes.json").write_text(json.dumps(parts, indent=1))
    print("\n".join(lines))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--systems", nargs="+", default=list(BENCHES), choices=list(BENCHES))
    p.add_argument("--budget", type=float, default=60.0, help="CPU seconds per fit")
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    p.add_argument("--calib-k", type=int, default=None, help="calibration fit length k (default: CALIB)")
    p.add_argument("--render", action="store_true", help="only merge the parts into default_sizes.{md,json}")
    args = p.parse_args(argv)
    if not args.render:
        for system in args.systems:
            run_system(system, args.budget, args.seeds, args.calib_k)
    render()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
