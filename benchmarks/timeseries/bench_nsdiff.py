"""NsDiff vs TMDM mode vs a Gaussian baseline on drifting-variance data (issue 5).

    python benchmarks/timeseries/bench_nsdiff.py [--quick] [--out benchmarks/timeseries/results]

On a GPU (``benchmarks/timeseries/paper.sh``: ETTh1 only, the paper networks)::

    python benchmarks/timeseries/bench_nsdiff.py --datasets ETTh1 --device cuda --name paper_nsdiff

Datasets: the seeded synthetic series whose mean and variance drift (3000 h x 3), statsmodels
``macrodata`` (203 quarters x 6, levels), and ETTh1 with the paper protocol (context 96 -> horizon
192, 12/4/4-month split) when it is in the scigen-datasets cache (``scigen data fetch ETTh1``).

Protocol (controlled: one f for all; the paper's optional pre-training made the default here):
stage 1 pre-trains the mean f (NS-Transformer, MSE); then, around that frozen f, NsDiff trains g and
then the denoiser, TMDM the denoiser. Every stage early-stops on the validation loss of its own
terms (a summed criterion stopped the denoiser early when g's validation term rose on macrodata):
* ``NsDiff`` — g and the denoiser (Analytic-DPM reverse variance, scale-equivariant g and denoiser);
* ``NsDiff (paper var)`` — the same trained weights sampled with the paper's reverse variance σ̂ only;
* ``TMDM`` — ``mode="tmdm"`` (g = σ = 1): the denoiser, same code, budget and f;
* ``Gaussian`` — the shared point forecast f plus a constant per-variable residual variance
  fitted on the validation windows: ``f + sqrt(v)·z``.

Scores on the test windows (stride = horizon), standardised with the training statistics: CRPS,
CRPS_sum, QICE (fraction), PICP (5-95 %, fraction; nominal 0.9), MSE/MAE of the sample mean, ES / VS
(energy and order-0.5 variogram score of each window's horizon × variables forecast), with scoringrules
installed (``scigen-timeseries[scoringrules]``) its ES / VS beside ours, and the training seconds (wall
clock, this machine). Writes ``nsdiff.json`` and ``nsdiff.md``.
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import time
from pathlib import Path

import torch

from scigen.core.files import atomic_write_text
from scigen.timeseries import NsDiff
from scigen.timeseries.data import macrodata, split_ett, split_ratio, synthetic_nonstationary
from scigen.timeseries.metrics import forecast_metrics, reference_scores

SMALL_NETS = dict(d_model=32, n_heads=4, e_layers=1, d_layers=1, d_ff=64, g_hidden=64, denoiser_hidden=64,
                  dropout=0.05)


def datasets(quick: bool, only: tuple[str, ...] = ("synthetic", "macrodata", "ETTh1")):
    """``(name, splits, config, steps, max_test_windows)`` for every available dataset named in ``only``."""
    syn = synthetic_nonstationary(3000, 3, seed=0)
    c_syn = dict(context_length=48, horizon=12, rolling_length=12, diffusion_steps=50, beta_end=0.3,
                 train=dict(batch_size=64, lr=2e-3, val_every=100, early_stopping=3), **SMALL_NETS)
    if "synthetic" in only:
        yield "synthetic (drifting mean+variance)", split_ratio(syn, 48), c_syn, 300 if quick else 1500, 40
    mac = macrodata(["realgdp", "realcons", "realinv", "cpi", "unemp", "tbilrate"])
    c_mac = dict(context_length=16, horizon=4, rolling_length=4, diffusion_steps=50, beta_end=0.3,
                 train=dict(batch_size=32, lr=2e-3, val_every=50, early_stopping=4), **SMALL_NETS)
    if "macrodata" in only:
        yield "macrodata (quarterly, levels)", split_ratio(mac, 16), c_mac, 200 if quick else 800, 40
    if "ETTh1" not in only:
        return
    try:
        from scigen.timeseries.data import load_ett

        ett = load_ett("ETTh1")
    except Exception as exc:  # not cached on this machine
        print(f"ETTh1 skipped: {str(exc).splitlines()[0]}")
        return
    c_ett = dict(context_length=96, horizon=192, rolling_length=24, diffusion_steps=100, beta_end=0.15,
                 train=dict(batch_size=32, lr=1e-3, val_every=200, early_stopping=5))  # paper networks (defaults)
    yield "ETTh1 (96->192, paper protocol)", split_ett(ett, 96), c_ett, 500 if quick else 4000, 100


def scored(samples, obs) -> dict[str, float]:
    """:func:`forecast_metrics` and, when scoringrules is installed, its CRPS / CRPS_sum / ES / VS beside them."""
    import importlib.util

    s = forecast_metrics(samples, obs)
    if importlib.util.find_spec("scoringrules") is not None:
        s.update(reference_scores(samples, obs))
    return s


def _fit(model, device: str, data, **kw):
    """``model.fit`` with Lightning on ``device``. The data is prepared on the CPU and Lightning moves each
    batch; its teardown returns the network to the CPU (where ``fit``'s own post-training measurements
    run), so the network is moved to ``device`` afterwards and sampling and evaluation run there too.
    ``cpu``: a plain ``fit``, as before."""
    if device == "cpu":
        return model.fit(data, **kw)
    model.to("cpu")
    model.fit(data, accelerator="gpu" if device.startswith("cuda") else device, **kw)
    return model.to(device)


def run_one(name, sp, cfg, steps, max_windows, n_samples=100, device="cpu"):
    """Stage 1: pre-train f (MSE, early stopping); stage 2: NsDiff and TMDM diffusion around that same f."""
    ns = NsDiff(**cfg, n_samples=n_samples)
    t0 = time.perf_counter()
    _fit(ns, device, sp.train, max_steps=steps, val_data=sp.val, parts=("f",))
    f_secs, f_best = time.perf_counter() - t0, ns.history.best_step
    tm = NsDiff(**cfg, mode="tmdm", n_samples=n_samples)
    tm.metadata = copy.deepcopy(ns.metadata)
    tm.network = tm.build_network()
    tm.network.f.load_state_dict(ns.network.f.state_dict())
    rows = []
    h = ns.config.horizon
    for label, model, stages in (("NsDiff", ns, ("g", "denoiser")), ("TMDM", tm, ("denoiser",))):
        t0 = time.perf_counter()
        best = [f"f {f_best}"]
        for part in stages:  # each stage early-stops on its own loss terms
            _fit(model, device, sp.train, max_steps=steps, val_data=sp.val, parts=(part,))
            best.append(f"{part} {model.history.best_step}")
        secs = f_secs + time.perf_counter() - t0
        info = {"dataset": name, "train_s": secs, "steps": model.metadata["trained_steps"], "best_step": ", ".join(best)}
        t0 = time.perf_counter()
        scores = model.evaluate(sp.test, stride=h, max_windows=max_windows, seed=0)
        info["sample_s"] = time.perf_counter() - t0
        rows.append({"model": label, **scores, **info})
        if label == "NsDiff":
            paper = NsDiff(**{**cfg, "reverse_variance": "posterior"}, n_samples=n_samples)
            paper.network, paper.metadata, paper.history = model.network, model.metadata, model.history
            t0 = time.perf_counter()
            scores = paper.evaluate(sp.test, stride=h, max_windows=max_windows, seed=0)
            rows.append({"model": "NsDiff (paper var)", **info, **scores, "sample_s": time.perf_counter() - t0})
    # Gaussian: the shared point forecast f + a constant per-variable residual variance from the validation windows
    ns.to("cpu")
    Xv, Yv = ns._windows(sp.val, 1, "val")
    X, Y = ns._windows(sp.test, h, "test")
    X, Y = X[:max_windows], Y[:max_windows]
    with torch.no_grad():
        fv = ns.network.mean_var(Xv)[0]
        f = ns.network.mean_var(X)[0]
    var = ((Yv - fv) ** 2).mean((0, 1))
    z = torch.randn((n_samples, *Y.shape), generator=torch.Generator().manual_seed(0))
    s = scored(f + var.sqrt() * z, Y)
    rows.append({"dataset": name, "model": "Gaussian (f + const. var)", **s, "QICE_x100": 100 * s["QICE"],
                 "windows": float(X.shape[0]), "train_s": f_secs, "sample_s": 0.0, "steps": None,
                 "best_step": f"f {f_best}"})
    return rows


def markdown(rows) -> str:
    cols = ["CRPS", "CRPS_sum", "QICE", "PICP", "MSE", "MAE", "ES", "VS", "train_s", "sample_s"]
    if any("ES[scoringrules]" in r for r in rows):
        cols[8:8] = ["ES[scoringrules]", "VS[scoringrules]"]
    out = ["| dataset | model | " + " | ".join(cols) + " | steps (best) |", "|" + "---|" * (len(cols) + 3)]
    for r in rows:
        steps = f"{r['steps'] or '-'} ({r['best_step']})"
        out.append(f"| {r['dataset']} | {r['model']} | " + " | ".join(f"{r.get(c, float('nan')):.3f}" if not c.endswith("_s") else
                                                                        f"{r.get(c, float('nan')):.1f}" for c in cols) + f" | {steps} |")
    return "\n".join(out)


def parse_args(doc: str, extra=()) -> argparse.Namespace:
    """The benchmarks' common flags (``--quick``, ``--out``, ``--threads``) plus ``extra`` ``(flag, help)`` switches;
    sets torch's thread count."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="short training (smoke run)")
    for flag, text in extra:
        ap.add_argument(flag, action="store_true", help=text)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    ap.add_argument("--threads", type=int, default=1, help="torch threads (0 = torch's default)")
    ap.add_argument("--datasets", default="synthetic,macrodata,ETTh1",
                    help="comma-separated subset of synthetic, macrodata, ETTh1 (ETTh1 runs when cached)")
    ap.add_argument("--steps", type=int, default=None, help="max steps per stage (default: per dataset)")
    ap.add_argument("--device", default="cpu", help="cpu | cuda: training, sampling and evaluation device")
    ap.add_argument("--name", default="nsdiff", help="result file stem: <out>/<name>.json and .md")
    args = ap.parse_args()
    args.only = tuple(d.strip() for d in args.datasets.split(",") if d.strip())
    unknown = sorted(set(args.only) - {"synthetic", "macrodata", "ETTh1"})
    if unknown:
        ap.error(f"--datasets: unknown {unknown}; choose from synthetic, macrodata, ETTh1")
    if args.threads:
        torch.set_num_threads(args.threads)
    return args


def main() -> None:
    args = parse_args(__doc__)
    rows = []
    for name, sp, cfg, steps, mw in datasets(args.quick, args.only):
        steps = args.steps or steps
        print(f"== {name}: {steps} steps max")
        rows += run_one(name, sp, cfg, steps, mw, device=args.device)
        print(markdown([r for r in rows if r["dataset"] == name]))
    write_results(args, args.name, rows, "standardised space; QICE fraction (x100 = paper scale); PICP nominal 0.9; "
                  "train_s wall clock on a shared 2-core CPU (f pre-training included); steps = optimizer steps over "
                  "both stages, best = early-stopping step of each stage")


def write_results(args, stem: str, rows: list[dict], note: str, header: str | None = None) -> None:
    """``<out>/<stem>.json`` (rows + run metadata) and ``<out>/<stem>.md`` (the table, after ``header`` as an HTML
    comment when given), atomically; print the table."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"quick": args.quick, "torch": torch.__version__, "threads": args.threads, "machine": platform.machine(),
            "device": args.device, "datasets": list(args.only), "steps": args.steps, "note": note}
    atomic_write_text(out / f"{stem}.json", json.dumps({"meta": meta, "rows": rows}, indent=1))
    atomic_write_text(out / f"{stem}.md", (f"<!-- {header} -->\n" if header else "") + markdown(rows) + "\n")
    print(markdown(rows))


if __name__ == "__main__":
    main()
