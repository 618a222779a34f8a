"""UniGEM vs EDM on the same QM9 data with the same budget, one run.

For each system: train ``--steps`` steps of ``--batch`` molecules on the first ``--train`` molecules of
EDM's training split, then generate ``--samples`` molecules and report atom / molecule stability,
validity, uniqueness, valid×unique and novelty (EDM's definitions, :mod:`scigen.molecules.metrics`),
property MAE on the first ``--test`` molecules of EDM's test split against the predict-the-training-mean
baseline (α Bohr³, gap/homo/lumo meV, μ D, Cv cal/(mol K); UniGEM only: EDM has no property head), and
throughput: training molecules/s (steps × batch / wall time of ``fit``, after a warm-up fit that pays the import cost)
and sampling molecules/s (measured with ``--sampler``/``--sample-steps``; the figure for EDM's
1000-step ancestral sampler is extrapolated from the measured time per model call, since
every step costs one call). The QM9 test molecules themselves are scored as a reference row. With
``posebusters`` installed (``scigen-molecules[posebusters]``) every column also gets PoseBusters' pass
rate per check on the same molecules (``mol_fast``: chemistry, bond lengths / angles, clashes, flatness;
:mod:`scigen.molecules.pose_checks`) and the fraction passing all.

CPU scale (the defaults; ~20 min on a loaded 2-core machine, one torch thread)::

    OMP_NUM_THREADS=1 python benchmarks/molecules/bench_unigem_vs_edm.py

Paper configuration (GPU; Feng et al. 2025 / Hoogeboom et al. 2022: 9 blocks, width 256, full QM9,
batch 64, lr 1e-4, EMA 0.9999, 1000-step ancestral sampling = the engine's ``ddpm``)::

    python benchmarks/molecules/bench_unigem_vs_edm.py --train 0 --test 0 --steps 1500000 --hidden 256 \\
        --layers 9 --batch 64 --lr 1e-4 --ema 0.9999 --sampler ddpm --sample-steps 1000 \\
        --samples 10000 --threads 0

(``--train 0`` = EDM's full 100,000-molecule training split, ``--test 0`` = its 13,083-molecule test
split; add ``--device cuda`` to train, sample and score on the GPU; ``benchmarks/molecules/paper.sh`` runs a
reduced budget of it.) Writes ``<name>.json`` and ``<name>.md`` into ``--out``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import torch

from scigen.molecules import EDM, UniGEM, load_qm9
from scigen.molecules.metrics import element_fractions, molecule_metrics
from scigen.molecules.pose_checks import posebusters_metrics
from scigen.molecules.unigem.config import METHODS
from scigen.molecules.unigem.process import DISCRETE_METHODS, predict_types

PROPS = ("alpha", "gap", "homo", "lumo", "mu", "Cv")
MEV = ("gap", "homo", "lumo")
GEN_KEYS = ("atom_stability", "molecule_stability", "validity", "uniqueness", "valid_x_unique", "novelty")


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", type=int, default=5000, help="training molecules (0 = EDM's full train split)")
    ap.add_argument("--test", type=int, default=500, help="test molecules for property MAE (0 = full test split)")
    ap.add_argument("--steps", type=int, default=800, help="training steps (same for both systems)")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--ema", type=float, default=0.99, help="EMA decay (0 = none)")
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--sampler", choices=METHODS, default="dpmpp_2m")
    ap.add_argument("--sample-steps", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (0 = torch's default)")
    ap.add_argument("--systems", default="unigem,edm")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    ap.add_argument("--name", default="bench_unigem_vs_edm")
    ap.add_argument("--device", default="cpu", help="cpu | cuda: training, sampling and scoring device")
    return ap.parse_args(argv)


def calls_per_step(method: str) -> float:
    """Model calls per sampler step (the engine's ``METHODS[method].nfe_per_step``)."""
    from scigen.core.samplers import METHODS

    return float(METHODS[method].nfe_per_step)


def run_system(cls, a: argparse.Namespace, train, test) -> dict:
    kw = dict(hidden=a.hidden, n_layers=a.layers, properties=PROPS if cls is UniGEM else (),
              train={"lr": a.lr, "ema_decay": a.ema or None, "batch_size": a.batch, "seed": a.seed, "progress": False})
    model = cls(**kw)
    t0 = time.perf_counter()
    if a.device == "cpu":
        model.fit(train, max_steps=a.steps)
    else:  # data prepared on the CPU, batches moved by Lightning, whose teardown returns the network to the CPU
        model.fit(train, max_steps=a.steps, accelerator="gpu" if a.device.startswith("cuda") else a.device)
        model.to(a.device)
    train_s = time.perf_counter() - t0
    row: dict = {"train_seconds": train_s, "train_molecules_per_s": a.steps * a.batch / train_s,
                 "final_loss": model.history.final_loss}
    t0 = time.perf_counter()
    samples = model.sample(a.samples, method=a.sampler, steps=a.sample_steps, seed=a.seed + 1)
    sample_s = time.perf_counter() - t0
    n_calls = a.sample_steps * calls_per_step(a.sampler) + 1  # + the final k = 0 call
    row.update(sample_seconds=sample_s, sample_molecules_per_s=a.samples / sample_s,
               sample_molecules_per_s_ancestral_1000=a.samples / (sample_s / n_calls * 1001))
    t0 = time.perf_counter()
    row.update(molecule_metrics(samples, model.metadata["train_smiles"]))
    row["metrics_seconds"] = time.perf_counter() - t0
    row.update(pose_rates(samples))
    row["hydrogen_fraction"] = element_fractions(samples).get("H", 0.0)
    if cls is UniGEM:
        row["type_head_accuracy"] = type_accuracy(model, test)
        pred = model.predict(test)
        for j, p in enumerate(PROPS):
            scale = 1000.0 if p in MEV else 1.0
            y = test.properties[p]
            row[f"mae_{p}"] = float(np.abs(pred[p].to_numpy() - y).mean()) * scale
            row[f"mae_mean_baseline_{p}"] = float(np.abs(model.metadata["prop_mean"][j] - y).mean()) * scale
    return row


def pose_rates(molecules) -> dict[str, float]:
    """PoseBusters' pass rates (``posebusters/<check>``) when it is installed, with the seconds they took."""
    import importlib.util

    if importlib.util.find_spec("posebusters") is None:
        return {}
    t0 = time.perf_counter()
    out = posebusters_metrics(molecules)
    return {**out, "posebusters_seconds": time.perf_counter() - t0}


def type_accuracy(model, test) -> float:
    """Fraction of the test molecules' atoms whose element UniGEM's type head (k = 0) gets right from the
    true geometry."""
    ms = model.as_molecule_set(test, need_properties=False)
    dev = next(model.network.parameters()).device
    model.network.eval()
    hits = total = 0
    for s in range(0, len(ms), 256):
        items = [ms[i] for i in range(s, min(s + 256, len(ms)))]
        pos, mask, types = (torch.stack([it[k] for it in items]).to(dev) for k in ("pos", "mask", "types"))
        pred = predict_types(model.network, pos, mask, model.config.atom_vocab)
        hits += int((pred == types[mask]).sum())
        total += int(mask.sum())
    return hits / total


def table(rows: dict, a: argparse.Namespace) -> list[str]:
    names = [n for n in ("unigem", "edm", "qm9_test") if n in rows]
    head = {"unigem": "UniGEM", "edm": "EDM", "qm9_test": "QM9 test molecules"}
    lines = ["| metric | " + " | ".join(head[n] for n in names) + " |", "|---" * (len(names) + 1) + "|"]
    pose = sorted({k for r in rows.values() for k in r if k.startswith("posebusters/")}, key=lambda k: (k != "posebusters/all", k))
    keys = list(GEN_KEYS) + pose + ["hydrogen_fraction", "type_head_accuracy"] + [f"mae_{p}" for p in PROPS] + [f"mae_mean_baseline_{p}" for p in PROPS]
    keys += ["train_molecules_per_s", "sample_molecules_per_s", "sample_molecules_per_s_ancestral_1000",
             "train_seconds", "sample_seconds"]
    label = {"hydrogen_fraction": "hydrogen_fraction (of all atoms)",
             "type_head_accuracy": "type_head_accuracy (test atoms, true geometry, k = 0)",
             "sample_molecules_per_s": f"sample_molecules_per_s ({a.sampler}, {a.sample_steps} steps)",
             "sample_molecules_per_s_ancestral_1000": "sample_molecules_per_s (ancestral, 1000 steps; extrapolated)"}
    for p in PROPS:
        unit = "meV" if p in MEV else {"alpha": "Bohr³", "mu": "D", "Cv": "cal/(mol K)"}[p]
        label[f"mae_{p}"] = f"mae_{p} [{unit}]"
        label[f"mae_mean_baseline_{p}"] = f"mae_mean_baseline_{p} [{unit}]"
    for k in keys:
        cells = [f"{rows[n][k]:.4g}" if k in rows[n] else "—" for n in names]
        lines.append(f"| {label.get(k, k)} | " + " | ".join(cells) + " |")
    return lines


def main(argv=None) -> None:
    a = parse(argv)
    if a.threads:
        torch.set_num_threads(a.threads)
    if a.sampler in DISCRETE_METHODS and a.sample_steps > 1000:
        raise SystemExit("--sample-steps must be <= T = 1000 for ddpm / ddim (the integer grid)")
    start = time.perf_counter()
    train = load_qm9("train", limit=a.train or None)
    test = load_qm9("test", limit=a.test or None)
    # warm-up (imports, Lightning start-up) so that neither system's throughput pays for it
    UniGEM(hidden=8, n_layers=2, properties=("gap",), train={"batch_size": 4, "progress": False}).fit(
        train.subset(range(8)), max_steps=1)
    rows: dict[str, dict] = {}
    for name in a.systems.split(","):
        cls = {"unigem": UniGEM, "edm": EDM}[name.strip()]
        rows[cls.name] = run_system(cls, a, train, test)
        print(cls.name, json.dumps(rows[cls.name], indent=1), flush=True)
    ref = test if len(test) <= a.samples else test.subset(range(a.samples))
    rows["qm9_test"] = molecule_metrics(ref.to_molecules(), None)
    rows["qm9_test"]["hydrogen_fraction"] = element_fractions(ref.to_molecules())["H"]
    rows["qm9_test"].update(pose_rates(ref.to_molecules()))
    wall = time.perf_counter() - start
    cmd = "OMP_NUM_THREADS=1 python " + " ".join(shlex.quote(x) for x in ["benchmarks/molecules/bench_unigem_vs_edm.py",
                                                                         *(sys.argv[1:] if argv is None else argv)])
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    a.out.mkdir(parents=True, exist_ok=True)
    meta = {"command": cmd, "date": date, "wall_seconds": wall, "torch_threads": torch.get_num_threads(),
            "machine": platform.platform(), "args": {k: str(v) for k, v in vars(a).items()}}
    (a.out / f"{a.name}.json").write_text(json.dumps({**meta, "results": rows}, indent=2) + "\n")
    lines = ["# UniGEM vs EDM on QM9 (CPU scale)", "",
             f"Command: `{cmd}`  ", f"Date: {date}; wall time {wall / 60:.1f} min; torch threads "
             f"{torch.get_num_threads()}; {platform.platform()}", "",
             f"Both systems: {a.train or 100_000} EDM-split training molecules, {a.steps} steps × batch {a.batch}, "
             f"EGNN {a.layers} blocks × width {a.hidden}, lr {a.lr}, EMA {a.ema or 'none'}; {a.samples} samples "
             f"with `{a.sampler}` ({a.sample_steps} steps); property MAE on {len(test)} EDM-split test molecules. "
             "Novelty is against the training SMILES; the QM9 column scores test molecules (their novelty is not "
             "computed).", ""]
    lines += table(rows, a)
    (a.out / f"{a.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
