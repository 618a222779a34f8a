"""MOSES metrics of the G2PT authors' own samples (``shared/data/g2pt_samples/moses-base-deg.smiles.txt``,
G2PT-base, degree ordering), to check our molecule metrics reproduce the paper (Table 3: validity 96.4,
FCD 0.97).

Protocol = MOSES ``get_all_metrics``: validity over all lines (the file writes ``None`` for samples
that failed to decode), invalid ones removed and the rest canonicalised, ``FCD/Test`` against MOSES'
precomputed statistics of the whole test split (176,074 molecules, ``test_stats.npz`` in the molsets
wheel) and ``FCD/TestSF`` against the scaffold test split, novelty against the (already canonical)
MOSES train split.

FCD is computed twice on the same molecules: by :func:`scigen.graphs.metrics.molecules.fcd` and by
``fcd_torch.FCD`` called directly (the reference implementation MOSES uses) with RDKit
canonicalisation written out here. ChemNet on CPU runs at ~100 molecules/s per core: ~10 min here.

    OMP_NUM_THREADS=1 python benchmarks/graphs/fcd_authors.py [--limit N]
"""

from __future__ import annotations

import argparse
import datetime
import json
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / ".." / "shared" / "data" / "g2pt_samples" / "moses-base-deg.smiles.txt"
PAPER = {"validity": 0.964, "FCD": 0.97}  # Table 3 does not say against which MOSES split


def reference_fcd(gen: list[str]) -> dict[str, float]:
    """fcd-torch + MOSES' statistics, without scigen code: MOSES' FCD/Test and FCD/TestSF on ``gen``
    (one ChemNet pass)."""
    from fcd_torch import FCD
    from rdkit import Chem, RDLogger

    from scigen.datasets.bundled import moses_csv_path

    RDLogger.DisableLog("rdApp.*")
    mols = (Chem.MolFromSmiles(s) for s in gen)
    canon = [Chem.MolToSmiles(m) for m in mols if m is not None]
    metric = FCD(device="cpu", n_jobs=1, batch_size=512)
    pgen = metric.precalc(canon)
    out = {}
    for split, name in (("test", "FCD/Test"), ("test_scaffolds", "FCD/TestSF")):
        with np.load(moses_csv_path(split).with_name(f"{split}_stats.npz"), allow_pickle=True) as z:
            out[f"{name} (fcd_torch reference)"] = float(metric(pgen=pgen, pref=z["stats"].item()["FCD"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=Path, default=SAMPLES)
    ap.add_argument("--limit", type=int, default=None, help="first N lines only (default: all)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "graphs" / "results")
    args = ap.parse_args()
    torch.set_num_threads(1)
    from scigen.graphs.data import moses, moses_fcd_stats
    from scigen.graphs.metrics.molecules import fcd, novelty, uniqueness, validity

    t_start = time.perf_counter()
    lines = [s.strip() for s in args.samples.read_text().splitlines() if s.strip()]
    lines = lines[: args.limit] if args.limit else lines
    gen = [None if s == "None" else s for s in lines]
    out = {"n_lines": len(gen), "validity": validity(gen), "unique@1000": uniqueness(gen, k=1000),
           "unique@10000": uniqueness(gen, k=10000)}
    out["novelty"] = novelty(gen, moses("train"), canonicalize_train=False)
    t0 = time.perf_counter()
    out["FCD/Test (scigen)"] = fcd(gen, ref_stats=moses_fcd_stats("test"))
    out["seconds_fcd_scigen"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    out.update(reference_fcd([s for s in gen if s]))
    out["seconds_fcd_reference"] = time.perf_counter() - t0
    wall = time.perf_counter() - t_start
    record = {"date": datetime.date.today().isoformat(), "command": "OMP_NUM_THREADS=1 python "
              "benchmarks/graphs/fcd_authors.py" + (f" --limit {args.limit}" if args.limit else ""),
              "samples": str(args.samples.name), "wall_seconds": wall, "metrics": out, "paper": PAPER}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "fcd_authors.json").write_text(json.dumps(record, indent=2))
    md = [f"# MOSES metrics of the G2PT authors' samples ({args.samples.name})", "",
          f"`{record['command']}` — {record['date']}, wall {wall:.0f} s (2 shared CPU cores)", "",
          "| metric | ours | paper (G2PT-base, Table 3) |", "|---|---|---|"]
    for k, v in out.items():
        if k.startswith("seconds") or k == "n_lines":
            continue
        paper = PAPER.get(k.split("/")[0].split(" ")[0], "")
        md.append(f"| {k} | {v:.4f} | {paper} |")
    md += ["", f"{len(gen)} lines; validity counts the `None` lines (decoding failures) as invalid. FCD/Test is "
           "MOSES' protocol: valid, canonicalised samples against the precomputed ChemNet statistics of the "
           "whole MOSES test split (molsets `test_stats.npz`); FCD/TestSF the same against the scaffold test "
           "split (`test_scaffolds_stats.npz`). The fcd_torch rows call fcd-torch directly, without scigen "
           "code. The paper's 0.97 matches FCD/TestSF, not FCD/Test."]
    (args.out / "fcd_authors.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
