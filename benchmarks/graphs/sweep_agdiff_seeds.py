"""AGDiff variants over several data seeds and training seeds, on larger test sets (issue 19).

The single-split sweep (``sweep_agdiff.py``) tests on 60 anomalies, an AUC standard error of about 0.02;
this one plants ``--anomalies`` (default 240) anomalies in ``synthetic_anomaly_graphs(300, A, seed=S,
strength=...)``, trains each variant on the same 150 normal graphs (``split_normal(seed=0)``) once per
training seed (``config.train.seed``), and tests on the other 150 normal graphs + every anomaly.

    python benchmarks/graphs/sweep_agdiff_seeds.py '{"agdiff": {}, "random": {"pseudo": "random"}}' \\
        --data-seeds 1 2 3 --train-seeds 0 1 --strength 0.2

A variant ``{"baseline": "ocgin"}`` / ``{"baseline": "wl"}`` runs that baseline instead of AGDiff
(OCGIN with the training seed); a ``"steps"`` key overrides ``--steps`` for that variant. One JSON line per (variant, data seed, training seed), then one summary
line per variant: mean AUC, per data seed mean, the paired difference to the first variant (mean
and standard error over the (data seed, training seed) pairs), and the mean AUC per planted anomaly kind
(the normal test graphs against the anomalies of that kind only: which anomalies a detector misses).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch


def _detector(over: dict, steps: int, train_seed: int):
    from scigen.graphs.agdiff import AGDiff
    from scigen.graphs.agdiff.baselines import OCGIN, WLOneClass

    kind = over.get("baseline")
    if kind == "ocgin":
        return OCGIN(seed=train_seed)
    if kind == "wl":
        return WLOneClass()
    over = dict(over)
    train = {"progress": False, "logger": None, "seed": train_seed, "max_steps": int(over.pop("steps", steps)),
             **over.pop("train", {})}
    return AGDiff(AGDiff.Config.preset("tiny", train=train, **over))


def main(argv: list[str] | None = None) -> int:
    from scigen.graphs.agdiff.demo import split_normal
    from scigen.graphs.agdiff.graphs import anomaly_labels
    from scigen.graphs.agdiff.metrics import detection_scores
    from scigen.graphs.agdiff.synthetic import synthetic_anomaly_graphs

    p = argparse.ArgumentParser()
    p.add_argument("variants")
    p.add_argument("--data-seeds", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument("--train-seeds", type=int, nargs="+", default=[0])
    p.add_argument("--anomalies", type=int, default=240)
    p.add_argument("--strength", type=float, default=0.2)
    p.add_argument("--steps", type=int, default=400)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    variants = json.loads(args.variants)
    auc: dict[str, dict[tuple[int, int], float]] = {k: {} for k in variants}
    by_kind: dict[str, dict[str, list[float]]] = {k: {} for k in variants}
    for ds in args.data_seeds:
        data = synthetic_anomaly_graphs(300, args.anomalies, seed=ds, strength=args.strength)
        train, test = split_normal(data, seed=0)
        y = anomaly_labels(test)
        kinds = np.array([g.graph.get("kind", "anomaly" if a else "normal") for g, a in zip(test, y, strict=True)])
        for ts in args.train_seeds:
            for name, over in variants.items():
                t0 = time.time()
                det = _detector(over, args.steps, ts).fit(train)
                scores = det.score(test)
                a = detection_scores(y, scores)["auc"]
                auc[name][(ds, ts)] = a
                per_kind = {}
                for kind in sorted(set(kinds[np.asarray(y) == 1])):
                    keep = (kinds == "normal") | (kinds == kind)
                    per_kind[kind] = detection_scores(np.asarray(y)[keep], np.asarray(scores)[keep])["auc"]
                    by_kind[name].setdefault(kind, []).append(per_kind[kind])
                print(json.dumps({"name": name, "data_seed": ds, "train_seed": ts, "auc": round(a, 4),
                                  "auc_by_kind": {k: round(v, 4) for k, v in per_kind.items()},
                                  "sec": round(time.time() - t0)}), flush=True)
    first = next(iter(variants))
    for name in variants:
        keys = sorted(auc[name])
        v = np.array([auc[name][k] for k in keys])
        d = np.array([auc[name][k] - auc[first][k] for k in keys])
        per_seed = {ds: round(float(np.mean([auc[name][k] for k in keys if k[0] == ds])), 4) for ds in args.data_seeds}
        se = float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else float("nan")
        print(json.dumps({"summary": name, "overrides": variants[name], "auc_mean": round(float(v.mean()), 4),
                          "per_data_seed": per_seed, f"diff_vs_{first}": round(float(d.mean()), 4),
                          "diff_se": round(se, 4),
                          "auc_by_kind": {k: round(float(np.mean(v)), 4) for k, v in by_kind[name].items()}}),
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
