"""D3U (with each built-in forecaster) beside NsDiff, TMDM and the Gaussian baseline, in one run (issue 15).

    python benchmarks/timeseries/bench_d3u.py [--quick] [--out benchmarks/timeseries/results] [--skip-nsdiff]

Same datasets, splits, test windows (stride = horizon, first ``max_windows``), standardisation and
metrics as ``bench_nsdiff.py`` (whose rows it reruns: NsDiff, NsDiff with the paper's reverse
variance, TMDM, Gaussian = NS-Transformer f + constant per-variable variance). Per forecaster
(PatchTST, iTransformer, NS-Transformer; the same small widths as NsDiff's f):

* ``D3U (<forecaster>)`` — stage 1 trains the forecaster with MSE (early stopping on validation),
  stage 2 the residual PatchDN with it frozen (early stopping), sampled with DPM-Solver++ 20 steps;
* ``<forecaster> + const. var`` — that same frozen forecaster plus ``N(0, σ²_{h,n})``, σ fitted per
  horizon step and variable on the validation residuals (the homoscedastic baseline);
* ``seasonal naive`` — the last season repeated (a point forecast: its CRPS is its MAE);
* ``DeepAR (GluonTS)`` — a probabilistic forecaster from a well-kept library at the same step budget
  (``_deepar.py``; only when ``gluonts`` is installed: ``pip install gluonts==0.17.0``).

``train_s`` is wall clock for both stages (the forecaster's included), ``sample_s`` for sampling
and scoring the test windows (``n_samples = 100``). Writes ``d3u.json`` and ``d3u.md``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))

from bench_nsdiff import datasets, markdown, parse_args, run_one, scored, write_results  # noqa: E402

from scigen.timeseries import D3U  # noqa: E402
from scigen.timeseries.baselines import gaussian_around, residual_std, seasonal_naive  # noqa: E402
from scigen.timeseries.metrics import energy_score, variogram_score  # noqa: E402

FORECASTERS = ("patchtst", "itransformer", "nstransformer")
SMALL = dict(f_d_model=32, f_n_heads=4, f_e_layers=1, f_d_layers=1, f_d_ff=64, f_dropout=0.05, d_model=32, n_heads=4)
PERIOD = {"synthetic": 24, "macrodata": 4, "ETTh1": 24}


def d3u_config(cfg: dict) -> dict:
    """D3U settings on the same windows and optimiser as the NsDiff config ``cfg``."""
    out = dict(context_length=cfg["context_length"], horizon=cfg["horizon"], train=cfg["train"])
    if cfg["horizon"] < 100:  # the small datasets: small networks as NsDiff's
        out.update(SMALL)
        out["patch_len"], out["patch_stride"] = (8, 4) if cfg["horizon"] < 8 else (16, 8)
        out["f_patch_len"], out["f_patch_stride"] = (8, 4) if cfg["context_length"] < 32 else (16, 8)
    return out


def run_d3u(name: str, sp, cfg: dict, steps: int, max_windows: int, n_samples: int = 100, deepar: bool = True):
    rows = []
    for fc in FORECASTERS:
        model = D3U(**d3u_config(cfg), forecaster=fc, n_samples=n_samples)
        t0 = time.perf_counter()
        model.fit(sp.train, max_steps=steps, val_data=sp.val, stage="forecaster")
        f_best, f_secs = model.history.best_step, time.perf_counter() - t0
        model.fit(sp.train, max_steps=steps, val_data=sp.val, stage="residual")
        secs = time.perf_counter() - t0
        h = model.config.horizon
        t0 = time.perf_counter()
        scores = model.evaluate(sp.test, stride=h, max_windows=max_windows, seed=0)
        info = {"dataset": name, "train_s": secs, "sample_s": time.perf_counter() - t0,
                "steps": model.history.steps, "best_step": f"forecaster {f_best}, residual {model.history.best_step}"}
        rows.append({"model": f"D3U ({fc})", **scores, **info})
        Xv, Yv = model.evaluation_windows(sp.val, stride=1)
        X, Y = model.evaluation_windows(sp.test, stride=h, max_windows=max_windows)
        y_hat = model.point_forecast(X)
        s = scored(gaussian_around(y_hat, residual_std(model.point_forecast(Xv), Yv), n_samples,
                                             torch.Generator().manual_seed(0)), Y)
        rows.append({"model": f"{fc} + const. var", **s, "QICE_x100": 100 * s["QICE"], "windows": float(X.shape[0]),
                     "dataset": name, "train_s": f_secs, "sample_s": 0.0, "steps": None,
                     "best_step": f"forecaster {f_best}"})
    period = next(v for k, v in PERIOD.items() if name.startswith(k))
    naive = seasonal_naive(X, h, period)
    e = naive - Y  # a point forecast: CRPS = MAE, CRPS_sum = MAE of the sums, ES = the error's norm; no quantiles
    s = {"CRPS": float(e.abs().mean()), "CRPS_sum": float(e.sum(-1).abs().mean()), "QICE": float("nan"),
         "PICP": float("nan"), "MSE": float((e**2).mean()), "MAE": float(e.abs().mean()),
         "ES": energy_score(naive[None].cpu(), Y.cpu()), "VS": variogram_score(naive[None].cpu(), Y.cpu())}
    rows.append({"model": f"seasonal naive (m={period}, point)", **s, "QICE_x100": float("nan"), "dataset": name,
                 "windows": float(X.shape[0]), "train_s": 0.0, "sample_s": 0.0, "steps": None, "best_step": "-"})
    if deepar:
        from _deepar import deepar_rows

        try:  # a third-party failure costs its row, not the run
            rows += deepar_rows(name, model, sp, steps, max_windows, n_samples)
        except Exception as exc:  # noqa: BLE001
            print(f"DeepAR failed on {name}: {type(exc).__name__}: {str(exc).splitlines()[0]}")
    return rows


def main() -> None:
    args = parse_args(__doc__, [("--skip-nsdiff", "only the D3U rows"),
                                ("--no-deepar", "leave out GluonTS's DeepAR (skipped anyway without it)")])
    rows, t_run, budget = [], time.perf_counter(), {}
    for name, sp, cfg, steps, mw in datasets(args.quick, args.only):
        steps = args.steps or steps
        budget[name.split(" ")[0]] = steps
        print(f"== {name}: {steps} steps max per stage", flush=True)
        if not args.skip_nsdiff:
            rows += run_one(name, sp, cfg, steps, mw)
        rows += run_d3u(name, sp, cfg, steps, mw, deepar=not args.no_deepar)
        print(markdown([r for r in rows if r["dataset"] == name]), flush=True)
    write_results(args, "d3u" if args.name == "nsdiff" else args.name, rows, "standardised space; QICE fraction (x100 = paper scale); PICP nominal 0.9; "
                  "train_s wall clock (forecaster / f stage included), sample_s = sampling + scoring the test windows "
                  "(100 samples); steps = optimizer steps over all stages, best = early-stopping step of each stage",
                  header=f"python benchmarks/timeseries/bench_d3u.py {' '.join(sys.argv[1:])}: at most "
                         f"{', '.join(f'{k} {v}' for k, v in budget.items())} steps per stage (early stopping on "
                         f"validation), {args.threads} thread(s), one run, {time.perf_counter() - t_run:.0f} s wall "
                         "in all; same test windows for every row (stride = horizon, first 40), 100 samples")


if __name__ == "__main__":
    main()
