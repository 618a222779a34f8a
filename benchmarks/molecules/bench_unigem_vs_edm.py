"""UniGEM vs EDM on the same QM9 data with the same budget, one run.

Reports atom / molecule stability, validity, uniqueness, valid×unique, novelty on ``--samples``
generated molecules, property MAE (α Bohr³, gap/homo/lumo meV, μ D, Cv cal/(mol K)) on the test
molecules against the predict-the-training-mean baseline (UniGEM only: EDM has no property head),
and throughput (training molecules/s, sampling molecules/s). Writes ``results.json`` and
``results.md`` into ``--out``.

CPU scale (default): ``--train 2000 --steps 1000 --hidden 64 --layers 4 --samples 1000``.
Paper configuration (GPU): ``--train 0 --steps 1500000 --hidden 256 --layers 9 --batch 64 --lr 1e-4
--ema 0.9999 --samples 10000`` (``--train 0`` = EDM's full 100,000-molecule training split; test =
EDM's 13,083-molecule test split).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from scigen.molecules import EDM, UniGEM, load_qm9

PROPS = ("alpha", "gap", "homo", "lumo", "mu", "Cv")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", type=int, default=2000, help="training molecules (0 = EDM's full train split)")
    ap.add_argument("--test", type=int, default=500, help="test molecules for property MAE (0 = full test split)")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--ema", type=float, default=0.999)
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--sample-steps", type=int, default=None, help="ancestral steps (default: all T=1000)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/molecules/out"))
    a = ap.parse_args()

    train = load_qm9("train", limit=a.train or None)
    test = load_qm9("test", limit=a.test or None)
    common = dict(hidden=a.hidden, n_layers=a.layers, lr=a.lr, ema_decay=a.ema, batch_size=a.batch,
                  sample_steps=a.sample_steps)
    rows = {}
    for cls in (UniGEM, EDM):
        kw = dict(common, properties=PROPS if cls is UniGEM else ())
        model = cls(**kw)
        t0 = time.perf_counter()
        model.fit(train, max_steps=a.steps, accelerator="gpu" if a.device == "cuda" else "cpu")
        train_s = time.perf_counter() - t0
        model.network.to(a.device)
        t0 = time.perf_counter()
        scores = model.evaluate(test, n_samples=a.samples)
        eval_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        model.sample(min(a.samples, 200), seed=1)
        sample_s = time.perf_counter() - t0
        scores["train_molecules_per_s"] = a.steps * a.batch / train_s
        scores["sample_molecules_per_s"] = min(a.samples, 200) / sample_s
        scores["train_seconds"], scores["eval_seconds"] = train_s, eval_s
        rows[cls.name] = scores
        print(cls.name, json.dumps(scores, indent=1))
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "results.json").write_text(json.dumps({"args": {k: str(v) for k, v in vars(a).items()}, "results": rows},
                                                   indent=2))
    keys = ["atom_stability", "molecule_stability", "validity", "uniqueness", "valid_x_unique", "novelty"]
    keys += [f"mae_{p}" for p in PROPS] + [f"mae_mean_baseline_{p}" for p in PROPS]
    keys += ["train_molecules_per_s", "sample_molecules_per_s"]
    lines = ["| metric | UniGEM | EDM |", "|---|---|---|"]
    for k in keys:
        cell = [f"{rows[n][k]:.4g}" if k in rows[n] else "—" for n in ("unigem", "edm")]
        lines.append(f"| {k} | {cell[0]} | {cell[1]} |")
    (a.out / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
