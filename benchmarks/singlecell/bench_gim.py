"""GIM benchmark: GIM (MC and MAP/EM training; linear-Gaussian SCM and stationary-SDE backends) against
the baselines on the synthetic screen's partially and fully out-of-distribution contexts, in one run.

Schneider et al., *Generative Intervention Models for Causal Perturbation Modeling*, ICML 2025 (synthetic
setup: 40 Hill functions × 4 doses × 50 cells + 800 observational; partially OOD = same functions at 5
new doses; fully OOD = 20 new functions). The paper's numbers could not be read, so no paper column.

* Variants: ``gim-mc`` (relaxed-Bernoulli MC), ``gim-map`` (MAP/EM, exact E-step), ``gim-map-l1`` (EM with
  a stronger target sparsity ``target_l1 = 1``), ``gim-map-warm`` (EM whose first half of the steps uses
  the fixed per-context prior in the E-step, the head fitted to it), ``gim-mc-logdose`` (MC without the Hill head: the dose
  enters the MLP as ``log1p c``), ``gim-sde-mc`` (stationary linear SDE fitted by KDS, 32 cells per
  context), each predicted in ``map`` and ``mixture`` mode; ``per-context`` (GIM's MAP latents without the head g(γ); unseen contexts take the
  nearest training context), ``cond-gaussian`` (unstructured MLP mean + shared full covariance).
  CPA (``cpa-tools``) is not run: it needs ``scvi-tools<1.0`` and does not install with the torch pin.
* Metrics per split (200 predicted vs 50 observed cells per context, averaged over contexts): ``MMD``
  (biased multi-bandwidth RBF MMD²), ``energy``, ``W2`` (exact, rooted), ``R2_means``; ``target_AUROC``
  pooled over (context, variable); ``SHD`` of ``|W| > 0.2`` (GIM variants); ``train_s`` (wall time of
  ``fit``, this machine; the baseline's time is its own fit).

    OMP_NUM_THREADS=1 python benchmarks/singlecell/bench_gim.py [--steps 1200] [--seeds 1] [--quick]
        [--sciplex [PATH]]

sci-Plex3 (``--sciplex``; the catalog's cached ``.h5ad`` when no path is given, skipped with a message
when it is not cached): one cell line (A549, at most 20,000 cells), 10 PCs, the 1000 nM dose held out
(the paper's real-data evaluation: unseen dosages of known compounds); default GIM (MC; one-hot compound
features, :data:`scigen.singlecell.gim.sciplex.GIM_SCIPLEX_SETTINGS`) and the unstructured baseline scored
on the held-out contexts (no target truth on real data, so no AUROC/SHD); with cell-eval installed
(``scigen-singlecell[celleval]``) GIM's map row also carries cell-eval's ``pearson_delta``, ``mse`` and
``discrimination_score_l1`` on its gene-space predictions (:mod:`scigen.singlecell.gim.celleval`).

Writes ``<out>/gim.json`` and ``<out>/gim.md``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from scigen.singlecell.gim.baselines import ConditionalGaussian
from scigen.singlecell.gim.metrics import auroc, score_contexts
from scigen.singlecell.gim.scm import shd
from scigen.singlecell.gim.synthetic import synthetic_screen
from scigen.singlecell.gim.system import GIM

VARIANTS = {
    "gim-mc": {"training": "mc"},
    "gim-mc-l0.2": {"training": "mc", "target_l1": 0.2},
    "gim-map": {"training": "map"},
    "gim-map-l1": {"training": "map", "target_l1": 1.0},
    "gim-map-warm": {"training": "map", "em_warmup": 0.5},
    "gim-mc-logdose": {"training": "mc", "hill": False},
    "gim-sde-mc": {"training": "mc", "backend": "stationary_sde", "max_cells_per_context": 32},
    "per-context": {"training": "map", "use_head": False},
}
MODES = ("map", "mixture")
COLS = ["MMD", "energy", "W2", "R2_means", "target_AUROC"]


def run(steps: int, seed: int, quick: bool, variants: list[str]) -> dict:
    data = synthetic_screen(8, n_functions=12, n_ood_functions=6, n_control=400, seed=seed) if quick else \
        synthetic_screen(10, seed=seed)
    w_true = torch.as_tensor(np.asarray(data.uns["gim_truth"]["W"]))
    out = {}
    ref = None
    for name in variants:
        t0 = time.perf_counter()
        model = GIM(**VARIANTS[name], train={"max_steps": steps, "seed": seed}).fit(data, progress=False, logger=None)
        secs = time.perf_counter() - t0
        ev = model.eval_contexts(data)
        g_shd = float(shd(model.network.causal.w.detach().cpu(), w_true, model.config.edge_threshold))
        for mode in MODES:
            pred, probs = model.predict_contexts(ev, n_samples=200, seed=seed, intervention=mode)
            row = f"{name} ({mode})"
            out[row] = {**score_contexts(pred, ev, probs), "train_s": secs, "SHD": g_shd}
            print(row, {k: round(v, 3) for k, v in out[row].items() if "@" in k or k in ("SHD", "train_s")},
                  flush=True)
        ref = ref or model
    t0 = time.perf_counter()
    base = ConditionalGaussian().fit(ref, data, max_steps=steps, seed=seed)
    secs = time.perf_counter() - t0
    ev = ref.eval_contexts(data)
    bp = base.predict(ev["features"], ev["doses"], 200, seed=seed)
    scores = base.target_scores(ev["features"], ev["doses"])
    res = score_contexts(bp, ev, scores)
    split = np.asarray(ev["split"])
    for s in set(split.tolist()):
        res[f"target_AUROC@{s}"] = auroc(scores[split == s], np.asarray(ev["truth"])[split == s])
    out["cond-gaussian"] = {**res, "train_s": secs, "SHD": float("nan")}
    print("cond-gaussian", {k: round(v, 3) for k, v in res.items() if "@" in k}, flush=True)
    return out


def run_sciplex(steps: int, seed: int, path: Path | None = None, *, max_cells: int = 20000,
                n_comps: int = 10) -> dict:
    """GIM vs the unstructured baseline on sci-Plex3 with the 1000 nM dose held out (module docstring).
    Raises ``InvalidInputError`` when the file is missing."""
    from scigen.singlecell.data import load_sciplex3
    from scigen.singlecell.gim.sciplex import GIM_SCIPLEX_SETTINGS, prepare_sciplex

    data = prepare_sciplex(load_sciplex3(path, cell_lines="A549", max_cells=max_cells, seed=seed),
                           n_comps=n_comps, holdout_doses_nM=[1000.0])
    t0 = time.perf_counter()
    model = GIM(**GIM_SCIPLEX_SETTINGS, train={"max_steps": steps, "seed": seed}).fit(data, progress=False,
                                                                                      logger=None)
    secs = time.perf_counter() - t0
    ev = model.eval_contexts(data)
    out = {}
    for mode in MODES:
        pred, _ = model.predict_contexts(ev, n_samples=200, seed=seed, intervention=mode)
        out[f"gim-mc ({mode})"] = {**score_contexts(pred, ev), "train_s": secs}
    import importlib.util

    if importlib.util.find_spec("cell_eval") is not None:
        from scigen.singlecell.gim.celleval import cell_eval_scores

        out["gim-mc (map)"].update(cell_eval_scores(model, data, n_samples=200, seed=seed))
    t0 = time.perf_counter()
    base = ConditionalGaussian().fit(model, data, max_steps=steps, seed=seed)
    secs = time.perf_counter() - t0
    out["cond-gaussian"] = {**score_contexts(base.predict(ev["features"], ev["doses"], 200, seed=seed), ev),
                            "train_s": secs}
    return out


def sciplex_table(res: dict, steps: int) -> str:
    cols = ["MMD", "energy", "W2", "R2_means"]
    ce = [c for c in ("pearson_delta", "mse", "discrimination_score_l1")
          if any(f"cell_eval/{c}" in r for r in res.values())]
    lines = [f"## sci-Plex3 A549, 1000 nM held out ({steps} steps)", "",
             "| variant | " + " | ".join(cols + [f"cell-eval {c}" for c in ce]) + " | train s |",
             "|---|" + "---|" * (len(cols) + len(ce) + 1)]
    for name, r in res.items():
        lines.append(f"| {name} | " + " | ".join([f"{r[f'{c}@heldout_dose']:.3f}" for c in cols]
                                                  + [f"{r.get(f'cell_eval/{c}', float('nan')):.3f}" for c in ce])
                     + f" | {r['train_s']:.0f} |")
    return "\n".join(lines) + "\n"


def table(results: dict, steps: int, seeds: list[int]) -> str:
    lines = [f"# GIM on the synthetic screen ({steps} steps, seeds {seeds}; mean over seeds)", ""]
    for split in ("ood_partial", "ood_full"):
        lines += [f"## {split}", "", "| variant | " + " | ".join(COLS) + " | SHD | train s |",
                  "|---|" + "---|" * (len(COLS) + 2)]
        for name in results[seeds[0]]:
            vals = [np.mean([results[s][name].get(f"{c}@{split}", np.nan) for s in seeds]) for c in COLS]
            shd_v = np.mean([results[s][name]["SHD"] for s in seeds])
            tr = np.mean([results[s][name]["train_s"] for s in seeds])
            lines.append(f"| {name} | " + " | ".join(f"{v:.3f}" for v in vals) + f" | {shd_v:.1f} | {tr:.0f} |")
        lines.append("")
        if "gim-mc (map)" not in results[seeds[0]]:
            continue
        base = {c: np.mean([results[s]["cond-gaussian"][f"{c}@{split}"] for s in seeds]) for c in ("MMD", "W2")}
        gim = {c: np.mean([results[s]["gim-mc (map)"][f"{c}@{split}"] for s in seeds]) for c in ("MMD", "W2")}
        lines += [f"gim-mc (map) / cond-gaussian: MMD {gim['MMD'] / base['MMD']:.2f}, W2 {gim['W2'] / base['W2']:.2f}",
                  ""]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1200)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    ap.add_argument("--sciplex", nargs="?", const="cache", default=None,
                    help="also run sci-Plex3 (the cached catalog file, or this .h5ad)")
    a = ap.parse_args()
    torch.set_num_threads(1)
    seeds = list(range(a.seeds))
    results = {s: run(a.steps if not a.quick else 100, s, a.quick, a.variants.split(",")) for s in seeds}
    a.out.mkdir(parents=True, exist_ok=True)
    from scigen.core.files import atomic_write_text

    atomic_write_text(a.out / "gim.json", json.dumps({"steps": a.steps, "seeds": seeds, "results": results},
                                                      indent=2, default=float) + "\n")
    md = table(results, a.steps, seeds)
    if a.sciplex is not None:
        from scigen.core.errors import InvalidInputError
        from scigen.datasets.errors import DatasetError

        try:
            sp = run_sciplex(a.steps, seeds[0], None if a.sciplex == "cache" else Path(a.sciplex))
        except (InvalidInputError, DatasetError) as exc:  # not cached here: say so, keep the synthetic table
            print(f"sci-Plex3 skipped: {exc}", flush=True)
        else:
            md += "\n" + sciplex_table(sp, a.steps)
            atomic_write_text(a.out / "gim_sciplex.json", json.dumps(sp, indent=2, default=float) + "\n")
    atomic_write_text(a.out / "gim.md", md)
    print(md)


if __name__ == "__main__":
    main()
