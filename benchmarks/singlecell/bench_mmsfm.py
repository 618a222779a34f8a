"""MMSFM benchmark: triplet (k=2) vs pairwise (k=1, SF2M-like) vs OT-CFM (sigma=0), hold-one-out, several seeds.

Lee, Moradijamei & Shakeri, *Multi-Marginal Stochastic Flow Matching*, ICML 2025, §5 (hold-one-out on
the S- and α-Gaussians; metrics W1, W2², MMD at the left-out time).

* Datasets: S-Gaussians and α-Gaussians (7 marginals at t = 0..6; EACH interior marginal t = 1..5
  held out in turn) and scanpy's bundled ``krumsiek11`` simulation binned to 6 irregular snapshots
  (0, 10, 25, 60, 100, 159; each interior snapshot held out in turn).
* Variants: ``triplet`` (k=2, Brownian bridge sigma=0.15, PCHIP), ``pairwise`` (k=1, the same bridge:
  SF2M-like), ``ot-cfm`` (k=1, sigma=0: the deterministic OT-CFM path). Same network, optimiser,
  steps, batch and seeds for all three; sampling by dopri5 from the first marginal.
* Metrics at the held-out time between generated and held-out cells: ``W1`` (exact), ``W2_squared``
  (exact, not rooted), ``MMD_G`` (biased multi-bandwidth RBF MMD²).
* Seeds: the network init, the minibatch stream and (synthetic) the training/test draws change with
  the seed. A table cell is the mean ± sd over seeds of the per-seed average over held-out times.
* Spline timing: the training step with the vectorised torch PCHIP against the same step with one
  ``scipy.interpolate.PchipInterpolator`` per sample (the reference code's approach), and the spline
  call alone.

CPU-sized defaults (~20-25 min on one loaded core)::

    OMP_NUM_THREADS=1 python benchmarks/singlecell/bench_mmsfm.py

Paper-sized on a GPU: ``--steps 20000 --seeds 5 --n 2000 --width 64 --depth 2 --device cuda``
(``benchmarks/singlecell/paper.sh`` runs a reduced budget of it). ``--quick`` runs one
seed, one held-out time per dataset and 100 steps (a smoke test). Writes ``<out>/<name>.json`` and
``<out>/<name>.md``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch

warnings.filterwarnings("ignore")

VARIANTS = {
    "triplet": {"k": 2, "sigma": 0.15},
    "pairwise": {"k": 1, "sigma": 0.15},
    "ot-cfm": {"k": 1, "sigma": 0.0},
}
METRICS = ("W1", "W2_squared", "MMD_G")


# ---------------------------------------------------------------------------- spline timing
class ScipyPchip:
    """The reference code's spline: one ``scipy`` PchipInterpolator per trajectory, value and derivative."""

    def __init__(self, knots, y, kind="pchip"):
        if kind != "pchip":
            raise ValueError("the scipy baseline covers kind='pchip' only")
        self.knots, self.y = knots.detach().cpu().numpy(), y.detach().cpu().numpy()
        self.dtype = y.dtype

    def evaluate(self, t):
        from scipy.interpolate import PchipInterpolator

        t = t.detach().cpu().numpy()
        val, der = np.empty(self.y[:, 0].shape), np.empty(self.y[:, 0].shape)
        for i in range(len(t)):
            s = PchipInterpolator(self.knots[i], self.y[i], axis=0)
            val[i], der[i] = s(t[i]), s.derivative()(t[i])
        return torch.as_tensor(val, dtype=self.dtype), torch.as_tensor(der, dtype=self.dtype)


def spline_timing(steps: int, batch: int, width: int, depth: int) -> dict:
    """ms per training step (triplet, S-Gaussians, t=3 held out) with the torch spline vs per-sample scipy."""
    import scigen.singlecell.mmsfm.objective as objective
    from scigen.singlecell import MMSFM
    from scigen.singlecell.data import s_gaussians
    from scigen.singlecell.mmsfm.spline import Spline

    data = s_gaussians(1000, seed=0)
    out = {}
    for name, cls in (("torch", Spline), ("scipy_per_sample", ScipyPchip)):
        objective.Spline = cls
        try:
            m = MMSFM(k=2, sigma=0.15, width=width, depth=depth,
                      train={"batch_size": batch, "max_steps": steps, "progress": False})
            t0 = time.perf_counter()
            m.fit(data, holdout=[3.0])
            out[f"{name}_step_ms"] = 1e3 * (time.perf_counter() - t0) / steps
        finally:
            objective.Spline = Spline
    # the spline call alone, for one step's trajectories (4 triplet windows x batch)
    rng = np.random.default_rng(0)
    n = 4 * batch
    knots = torch.tensor(np.tile([0.0, 1 / 6, 2 / 6], (n, 1)))
    y = torch.tensor(rng.normal(size=(n, 3, 2)))
    t = torch.tensor(rng.uniform(0, 2 / 6, n))
    for name, cls, reps in (("torch", Spline, 200), ("scipy_per_sample", ScipyPchip, 5)):
        t0 = time.perf_counter()
        for _ in range(reps):
            cls(knots, y, "pchip").evaluate(t)
        out[f"{name}_spline_ms"] = 1e3 * (time.perf_counter() - t0) / reps
    a, b = Spline(knots, y, "pchip").evaluate(t), ScipyPchip(knots, y).evaluate(t)
    out["max_abs_diff"] = float(max((a[0] - b[0]).abs().max(), (a[1] - b[1]).abs().max()))
    out["trajectories_per_step"] = n
    out["timing_steps"] = steps
    return out


# ---------------------------------------------------------------------------- the objective's target
def target_w2sq(dataset: str, holdout: float, variant: str, sigma: float = 0.15, n: int = 1500) -> float:
    """W2² at ``holdout`` that a perfectly trained variant would reach on a Gaussian chain (infinite batch).

    With equal isotropic covariances the OT coupling of consecutive marginals is a translation, so each
    window's trajectories are its spline through the true means plus a constant offset, widened by the
    bridge (``sigma·sqrt(tau(1−tau))`` per min-max-scaled coordinate). The learned ODE reproduces the
    training paths' marginal, i.e. the mixture over the windows that cover ``holdout`` (equal weights:
    they share the interval, and stratified sampling gives each interval the same count). The W2² of
    that mixture to the true ``N(mu, 0.5 I)`` is estimated with ``n`` samples per side (exact OT).
    """
    from scigen.core.metrics import w2_squared
    from scigen.singlecell.data.synthetic import ALPHA_MEANS, S_MEANS
    from scigen.singlecell.mmsfm.objective import windows
    from scigen.singlecell.mmsfm.spline import Spline

    means = np.asarray({"s_gaussians": S_MEANS, "alpha_gaussians": ALPHA_MEANS}[dataset], dtype=float)
    times = np.arange(len(means), dtype=float)
    keep = times != holdout
    tm, mm = times[keep], means[keep]
    k, sig = VARIANTS[variant]["k"], VARIANTS[variant]["sigma"]
    scale = (mm.max(0) - mm.min(0)) + 2 * 3 * np.sqrt(0.5)  # min-max range of the training cells (≈ means ± 3 sd)
    g = torch.Generator().manual_seed(0)
    comps = []
    for w in windows(len(tm), k):
        a, b = tm[w[0]], tm[w[-1]]
        if a < holdout < b:
            sp = Spline(torch.tensor(tm[list(w)]), torch.tensor(mm[list(w)])[None], "pchip")
            mu = sp(torch.tensor([holdout], dtype=torch.float64))[0].numpy()
            tau = (holdout - a) / (b - a)
            comps.append((mu, 0.5 + (sig * np.sqrt(tau * (1 - tau)) * scale) ** 2))
    which = torch.randint(len(comps), (n,), generator=g).numpy()
    z = torch.randn(n, 2, generator=g, dtype=torch.float64).numpy()
    x = np.stack([comps[c][0] for c in which]) + z * np.sqrt(np.stack([comps[c][1] for c in which]))
    y = means[int(holdout)] + torch.randn(n, 2, generator=g, dtype=torch.float64).numpy() * np.sqrt(0.5)
    return float(w2_squared(torch.tensor(x), torch.tensor(y)))


# ---------------------------------------------------------------------------- runs
def datasets(n: int, test_n: int, seed: int, quick: bool) -> dict:
    from scigen.singlecell.data import alpha_gaussians, krumsiek11_time_course, s_gaussians

    out = {
        "s_gaussians": (s_gaussians(n, seed=seed), s_gaussians(test_n, seed=10_000 + seed), None),
        "alpha_gaussians": (alpha_gaussians(n, seed=seed), alpha_gaussians(test_n, seed=10_000 + seed), None),
    }
    kr = krumsiek11_time_course()  # 24-52 cells per snapshot: batch 20; held-out cells are unseen in training
    out["krumsiek11"] = (kr, kr, 20)
    if quick:
        out = {k: v for k, v in out.items()}
    return out


def run_one(train, test, holdout, variant, args, seed, batch):
    from scigen.singlecell import MMSFM

    model = MMSFM(**VARIANTS[variant], width=args.width, depth=args.depth,
                  train={"batch_size": batch, "lr": args.lr, "max_steps": args.steps, "seed": seed, "progress": False})
    t0 = time.perf_counter()
    if args.device == "cpu":
        model.fit(train, holdout=[holdout], lr_schedule=args.lr_schedule)
    else:  # Lightning moves the batches; its teardown returns the network to the CPU: evaluate on the GPU
        model.fit(train, holdout=[holdout], lr_schedule=args.lr_schedule,
                  accelerator="gpu" if args.device.startswith("cuda") else args.device)
        model.to(args.device)
    secs = time.perf_counter() - t0
    s = model.evaluate(test, times=[holdout], seed=seed)
    return {**{m: s[m] for m in METRICS}, "train_s": secs, "ms_per_step": 1e3 * secs / args.steps,
            "final_loss": model.history.final_loss}


def fmt(values) -> str:
    v = np.asarray(values, dtype=float)
    if len(v) < 2:
        return f"{v.mean():.3f}"
    return f"{v.mean():.3f} ± {v.std(ddof=1):.3f}"


def summarise(rows: list[dict], names: list[str], spline: dict | None, header: list[str]) -> str:
    seeds = sorted({r["seed"] for r in rows})
    lines = header + ["", "## Mean over held-out times (mean ± sd over seeds)", "",
                      "| dataset | variant | held-out times | W1 | W2² | MMD_G | best W2² (cases) | ms/step |",
                      "|---|---|---|---|---|---|---|---|"]
    for name in names:
        sel = [r for r in rows if r["dataset"] == name]
        if not sel:
            continue
        cases = sorted({(r["holdout"], r["seed"]) for r in sel})
        wins = {v: 0 for v in VARIANTS}
        for h, s in cases:
            cand = [r for r in sel if r["holdout"] == h and r["seed"] == s]
            if len(cand) == len({r["variant"] for r in sel}):
                wins[min(cand, key=lambda r: r["W2_squared"])["variant"]] += 1
        for variant in VARIANTS:
            vs = [r for r in sel if r["variant"] == variant]
            if not vs:
                continue
            hs = ",".join(f"{h:g}" for h in sorted({r["holdout"] for r in vs}))
            per_seed = {m: [np.mean([r[m] for r in vs if r["seed"] == s]) for s in seeds
                            if any(r["seed"] == s for r in vs)] for m in (*METRICS, "ms_per_step")}
            lines.append(f"| {name} | {variant} | {hs} | {fmt(per_seed['W1'])} | {fmt(per_seed['W2_squared'])} | "
                         f"{fmt(per_seed['MMD_G'])} | {wins[variant]}/{len(cases)} | "
                         f"{np.mean(per_seed['ms_per_step']):.1f} |")
    present = [v for v in VARIANTS if any(r["variant"] == v for r in rows)]
    lines += ["", "## Per held-out time: W2² (mean ± sd over seeds) [target: a perfectly trained model]", "",
              "| dataset | held-out t | " + " | ".join(present) + " |", "|---|---|" + "---|" * len(present)]
    for name in names:
        for h in sorted({r["holdout"] for r in rows if r["dataset"] == name}):
            cells = []
            for variant in present:
                v = [r["W2_squared"] for r in rows if r["dataset"] == name and r["holdout"] == h
                     and r["variant"] == variant]
                cell = fmt(v) if v else "-"
                if name in ("s_gaussians", "alpha_gaussians"):
                    cell += f" [{target_w2sq(name, h, variant):.2f}]"
                cells.append(cell)
            lines.append(f"| {name} | {h:g} | " + " | ".join(cells) + " |")
    if spline:
        lines += ["", "## Spline: vectorised torch PCHIP vs one scipy PchipInterpolator per sample", "",
                  "| | torch (vectorised) | scipy per sample | ratio |", "|---|---|---|---|",
                  f"| training step, ms (triplet, S-Gaussians, {spline['timing_steps']} steps) | "
                  f"{spline['torch_step_ms']:.1f} | {spline['scipy_per_sample_step_ms']:.1f} | "
                  f"{spline['scipy_per_sample_step_ms'] / spline['torch_step_ms']:.1f}x |",
                  f"| spline value + derivative for {spline['trajectories_per_step']} trajectories, ms | "
                  f"{spline['torch_spline_ms']:.2f} | {spline['scipy_per_sample_spline_ms']:.1f} | "
                  f"{spline['scipy_per_sample_spline_ms'] / spline['torch_spline_ms']:.0f}x |",
                  "", f"Max |torch − scipy| over values and derivatives: {spline['max_abs_diff']:.1e}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=400, help="training steps per run")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--n", type=int, default=1000, help="synthetic training cells per marginal")
    p.add_argument("--test-n", type=int, default=500, help="synthetic held-out cells per marginal")
    p.add_argument("--batch", type=int, default=64, help="cells per marginal per window (synthetic)")
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--lr-schedule", default="none", choices=["none", "cosine", "warmup"])
    p.add_argument("--datasets", default="s_gaussians,alpha_gaussians,krumsiek11")
    p.add_argument("--variants", default=",".join(VARIANTS), help="subset of " + ",".join(VARIANTS))
    p.add_argument("--holdouts", default="", help="held-out times to run (default: every interior time)")
    p.add_argument("--timing-steps", type=int, default=30, help="0 skips the spline timing")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu", help="cpu | cuda: training and evaluation device")
    p.add_argument("--quick", action="store_true", help="1 seed, 1 held-out time per dataset, 100 steps")
    p.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    p.add_argument("--name", default="mmsfm")
    args = p.parse_args()
    if args.lr_schedule == "none":
        args.lr_schedule = None
    if args.quick:
        args.steps, args.seeds, args.timing_steps = 100, 1, 5
    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    names = [d for d in args.datasets.split(",") if d]
    wall0 = time.perf_counter()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows: list[dict] = []
    json_path, md_path = args.out / f"{args.name}.json", args.out / f"{args.name}.md"

    def header(wall: float) -> list[str]:
        return [f"# MMSFM hold-one-out benchmark ({args.name})", "",
                f"Command: `OMP_NUM_THREADS=1 python {' '.join(['benchmarks/singlecell/bench_mmsfm.py', *sys.argv[1:]])}`",
                f"Date: {started}; wall time {wall / 60:.1f} min on {platform.processor() or platform.machine()}, "
                f"{args.threads} torch thread(s), torch {torch.__version__}.",
                f"Settings: {args.steps} steps, lr {args.lr} ({args.lr_schedule or 'constant'}), MLP width "
                f"{args.width} depth {args.depth}, batch {args.batch} per marginal per window (krumsiek11: 20), "
                f"{args.seeds} seed(s); synthetic {args.n} training / {args.test_n} test cells per marginal; "
                "W2² = squared 2-Wasserstein (not rooted), MMD_G = biased multi-bandwidth RBF MMD²."]

    for seed in range(args.seeds):
        data = datasets(args.n, args.test_n, seed, args.quick)
        for name in names:
            train, test, batch = data[name]
            times = sorted(set(train.obs["time"].tolist()))
            interior = times[1:-1]
            if args.quick:
                interior = interior[len(interior) // 2: len(interior) // 2 + 1]
            if args.holdouts:
                interior = [h for h in interior if any(abs(h - float(x)) < 1e-9 for x in args.holdouts.split(","))]
            for h in interior:
                for variant in args.variants.split(","):
                    r = run_one(train, test, h, variant, args, seed, batch or args.batch)
                    rows.append({"dataset": name, "holdout": h, "variant": variant, "seed": seed, **r})
                    print(f"[{(time.perf_counter() - wall0) / 60:5.1f} min] {name} t={h:g} {variant} seed {seed}: "
                          + " ".join(f"{m} {r[m]:.3f}" for m in METRICS) + f" ({r['ms_per_step']:.1f} ms/step)",
                          flush=True)
                json_path.write_text(json.dumps({"args": vars(args) | {"out": str(args.out)}, "rows": rows},
                                                indent=1, default=str) + "\n")
    spline = spline_timing(args.timing_steps, args.batch, args.width, args.depth) if args.timing_steps else None
    print(spline, flush=True)
    wall = time.perf_counter() - wall0
    json_path.write_text(json.dumps({"args": vars(args) | {"out": str(args.out)}, "started": started,
                                     "wall_s": wall, "rows": rows, "spline": spline}, indent=1, default=str) + "\n")
    md_path.write_text(summarise(rows, names, spline, header(wall)))
    print(md_path.read_text())


if __name__ == "__main__":
    main()
