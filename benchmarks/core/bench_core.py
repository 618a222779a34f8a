"""Engine benchmark: scigen.core vs diffusers, torchcfm and torchdiffeq on the same MLP and data.

For each dataset (eight-Gaussians 2-d, 32-d Gaussian mixture):

(a) diffusion: one eps-prediction ResidualMLP trained with our ``denoising_loss`` on VPLinear through
    ``fit``; sampled by our dpmpp_2m / unipc / ddim (grids uniform, logsnr, edm and diffusers' own
    grid) and by diffusers' DPMSolverMultistep / UniPCMultistep / DDIM schedulers (same model, same
    noise, same NFE). The exact time mapping is in ``_diffusion.py``.
(b) flow matching: the same MLP trained (same steps, batch, lr, seed, data order) by ``fit`` with our
    ``flow_matching_loss``, by a plain loop with our loss, and by a plain loop with torchcfm's
    ConditionalFlowMatcher; training steps/s of each; our euler / heun / rk4 vs torchdiffeq
    euler / midpoint / rk4 / dopri5 on the same model, and both trained models under the same solvers.

Quality: exact W2 (POT ``emd2``, W2 not W2²) between ``--n-samples`` generated points and as many
held-out data points; "floor" = W2 between two held-out draws (the metric's finite-sample floor).
Ratios are ours / peer: < 1 is better for W2, > 1 is better for steps/s.

    python benchmarks/core/bench_core.py                  # default budget (about 10 min on 2 busy cores)
    python benchmarks/core/bench_core.py --quick          # smoke run (1 min)
    python benchmarks/core/bench_core.py --steps 20000 --width 256 --n-samples 5000

Writes ``benchmarks/core/results/<timestamp>.json`` and ``.md`` (gitignored) and prints the tables.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))

import _common as C  # noqa: E402
import _diffusion as D  # noqa: E402
import _flow as F  # noqa: E402
from _report import render  # noqa: E402

RESULTS = Path(__file__).parent / "results"
DATASETS = ("eight_gaussians", "gaussian_mixture_32d")


def _args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    p.add_argument("--families", nargs="+", default=["diffusion", "flow"], choices=["diffusion", "flow"])
    p.add_argument("--steps", type=int, default=3000, help="optimizer steps of every training run")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--depth", type=int, default=3)
    p.add_argument("--n-train", type=int, default=50_000, help="size of the (finite) training set")
    p.add_argument("--n-samples", type=int, default=2000, help="generated and held-out points for W2")
    p.add_argument("--nfe", type=int, nargs="+", default=[5, 10, 20, 50])
    p.add_argument("--tp-reps", type=int, default=5,
                   help="interleaved throughput repetitions (each trainer runs --tp-steps steps per repetition)")
    p.add_argument("--tp-steps", type=int, default=300)
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 = stable timing on shared cores)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="smoke run: 400 steps, 500 samples, NFE 5 and 20")
    p.add_argument("--out", type=Path, default=None, help="results path stem (default results/<timestamp>)")
    p.add_argument("--merge", type=Path, nargs="+", default=None,
                   help="do not run: merge these result .json files (e.g. one per dataset) into --out and print")
    p.add_argument("--from-log", type=Path, nargs="+", default=None,
                   help="do not run: rebuild the tables from the printed lines of (possibly interrupted) runs; "
                   "give the same flags as those runs")
    a = p.parse_args(argv)
    if a.quick:
        a.steps, a.n_samples, a.nfe, a.n_train, a.tp_reps, a.tp_steps = 400, 500, [5, 20], 10_000, 2, 100
    return a


def _rec(rows, **kw):
    rows.append(kw)
    print("  " + " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in kw.items()),
          flush=True)


def run_diffusion(a, split: C.Split, train_rows, rows):
    dim = split.train.shape[1]
    model = C.make_model(dim, a.width, a.depth, a.seed)
    st = C.fit_timed(model, D.eps_loss, split.train, steps=a.steps, batch_size=a.batch_size, lr=a.lr, seed=a.seed)
    model.eval()
    _rec(train_rows, dataset=split.name, family="diffusion", trainer="ours_fit", steps_per_s=st.steps_per_s,
         steady_steps_per_s=st.steady_steps_per_s, final_loss=sum(st.losses[-100:]) / len(st.losses[-100:]))
    for nfe in a.nfe:
        for method in D.OUR_METHODS:
            for grid in D.OUR_GRIDS:
                x, n = D.our_sample(model, split.noise, method, grid, nfe)
                _rec(rows, dataset=split.name, family="diffusion", side="ours", method=method, grid=grid,
                     budget=nfe, nfe=n, w2=C.w2(x, split.test))
            kind = D.PEERS[method]
            for variant in D.PEER_VARIANTS[kind]:
                x, n = D.diffusers_sample(model, split.noise, kind, variant, nfe)
                _rec(rows, dataset=split.name, family="diffusion", side="peer", method=f"diffusers_{kind}",
                     grid=variant, budget=nfe, nfe=n, w2=C.w2(x, split.test))


def run_flow(a, split: C.Split, train_rows, rows):
    dim = split.train.shape[1]
    models = {}
    for trainer, loss, loop in (("ours_fit", F.our_fm_loss, C.fit_timed),
                                ("ours_plain", F.our_fm_loss, C.plain_loop),
                                ("torchcfm_plain", F.cfm_loss_fn(), C.plain_loop)):
        model = C.make_model(dim, a.width, a.depth, a.seed)
        st = loop(model, loss, split.train, steps=a.steps, batch_size=a.batch_size, lr=a.lr, seed=a.seed)
        models[trainer] = model.eval()
        _rec(train_rows, dataset=split.name, family="flow", trainer=trainer, steps_per_s=st.steps_per_s,
             steady_steps_per_s=st.steady_steps_per_s, final_loss=sum(st.losses[-100:]) / len(st.losses[-100:]))
    throughput(a, split, train_rows)
    conv = {"ours_fit": "ours", "ours_plain": "ours", "torchcfm_plain": "cfm"}
    for nfe in a.nfe:
        for method in F.OURS:
            for trainer in models:
                x, n = F.our_sample(models[trainer], conv[trainer], split.noise, method, nfe)
                _rec(rows, dataset=split.name, family="flow", side="ours", model=trainer, method=method,
                     budget=nfe, nfe=n, w2=C.w2(x, split.test))
                peer = F.PEER_OF[method]
                x, n = F.odeint_sample(models[trainer], conv[trainer], split.noise, peer, budget=nfe)
                _rec(rows, dataset=split.name, family="flow", side="peer", model=trainer,
                     method=f"torchdiffeq_{peer}", budget=nfe, nfe=n, w2=C.w2(x, split.test))
    for tol in F.DOPRI_TOLS:
        for trainer in models:
            x, n = F.odeint_sample(models[trainer], conv[trainer], split.noise, "dopri5", tol=tol)
            _rec(rows, dataset=split.name, family="flow", side="peer", model=trainer, method="torchdiffeq_dopri5",
                 budget=None, tol=tol, nfe=n, w2=C.w2(x, split.test))


def _value(v: str):
    if v.startswith("["):
        return json.loads(v)
    if v == "None":
        return None
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return v


def from_logs(a, logs, out: Path) -> None:
    """Rebuild a result from the ``key=value`` lines runs print (rounded to 4 significant digits)."""
    train_rows, rows, floors = [], [], {}
    for log in logs:
        for line in Path(log).read_text().splitlines():
            if m := re.match(r"\[(\w+)\] W2 floor .* = ([\d.]+)", line):
                floors[m.group(1)] = float(m.group(2))
            elif line.startswith("  dataset="):
                rec = {k: _value(v) for k, v in re.findall(r"(\w+)=(\[[^\]]*\]|\S+)", line)}
                (train_rows if "trainer" in rec else rows).append(rec)
    meta = {"args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()},
            "torch": torch.__version__, "python": platform.python_version(), "versions": _versions(),
            "loadavg_start": [float("nan")] * 3, "loadavg_end": list(os.getloadavg()), "wall_s": float("nan"),
            "from_logs": [str(x) for x in logs]}
    _write({"meta": meta, "floors": floors, "training": train_rows, "samples": rows}, out)


def merge(paths, out: Path) -> None:
    """Concatenate result files of separate runs (same settings, different datasets) into one table."""
    parts = [json.loads(Path(p).read_text()) for p in paths]
    res = {"meta": dict(parts[0]["meta"]), "floors": {}, "training": [], "samples": []}
    res["meta"]["merged_from"] = [str(p) for p in paths]
    res["meta"]["wall_s"] = max(p["meta"]["wall_s"] for p in parts)
    res["meta"]["loadavg_end"] = max((p["meta"]["loadavg_end"] for p in parts), key=lambda v: v[0])
    for p in parts:
        res["floors"].update(p["floors"])
        res["training"] += p["training"]
        res["samples"] += p["samples"]
    _write(res, out)


def _write(result, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=1, default=str))
    md = render(result)
    out.with_suffix(".md").write_text(md)
    print("\n" + md)
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.md')}")


def throughput(a, split: C.Split, train_rows) -> None:
    """Steady training steps/s, interleaved (fit, plain-ours, plain-torchcfm, fit, ...) ``--tp-reps`` times on
    fresh models so that a change in machine load hits every trainer alike; the median is recorded."""
    import statistics

    dim = split.train.shape[1]
    runs = {"ours_fit": (F.our_fm_loss, C.fit_timed), "ours_plain": (F.our_fm_loss, C.plain_loop),
            "torchcfm_plain": (F.cfm_loss_fn(), C.plain_loop)}
    rates = {k: [] for k in runs}
    for _ in range(a.tp_reps):
        for name, (loss, loop) in runs.items():
            model = C.make_model(dim, a.width, a.depth, a.seed)
            st = loop(model, loss, split.train, steps=a.tp_steps, batch_size=a.batch_size, lr=a.lr, seed=a.seed)
            rates[name].append(st.steady_steps_per_s)
    for name, r in rates.items():
        _rec(train_rows, dataset=split.name, family="flow_interleaved", trainer=name,
             median_steps_per_s=statistics.median(r), all_steps_per_s=[round(v, 2) for v in r])


def main(argv=None):
    a = _args(argv)
    if a.from_log:
        return from_logs(a, a.from_log, a.out or RESULTS / f"{time.strftime('%Y%m%d-%H%M%S')}-from-log")
    if a.merge:
        return merge(a.merge, a.out or RESULTS / f"{time.strftime('%Y%m%d-%H%M%S')}-merged")
    torch.set_num_threads(a.threads)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = a.out or RESULTS / stamp
    meta = {"args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()},
            "torch": torch.__version__, "python": platform.python_version(),
            "loadavg_start": os.getloadavg(), "versions": _versions()}
    train_rows, rows, floors = [], [], {}
    t0 = time.perf_counter()
    for name in a.datasets:
        split = C.make_split(name, a.n_train, a.n_samples)
        floors[name] = C.w2(split.floor, split.test)
        print(f"[{name}] W2 floor (two held-out draws) = {floors[name]:.4f}", flush=True)
        if "diffusion" in a.families:
            print(f"[{name}] diffusion", flush=True)
            run_diffusion(a, split, train_rows, rows)
        if "flow" in a.families:
            print(f"[{name}] flow matching", flush=True)
            run_flow(a, split, train_rows, rows)
    meta["loadavg_end"] = os.getloadavg()
    meta["wall_s"] = time.perf_counter() - t0
    _write({"meta": meta, "floors": floors, "training": train_rows, "samples": rows}, out)


def _versions():
    from importlib.metadata import PackageNotFoundError, version

    v = {}
    for pkg in ("diffusers", "torchcfm", "torchdiffeq", "POT", "lightning"):
        try:
            v[pkg] = version(pkg)
        except PackageNotFoundError:
            v[pkg] = None
    return v


if __name__ == "__main__":
    main()
