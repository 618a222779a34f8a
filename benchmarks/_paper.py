"""The published figures of the five pilot papers, and the table that prints a run's metric beside them.

Used by ``benchmarks/<domain>/paper.sh`` after the domain's benchmark has written its JSON::

    python benchmarks/_paper.py <domain> <bench result .json> [--out <stem>]

prints ``| metric | measured | paper | source |`` and writes ``<stem>.md`` and ``<stem>.json``
(default: ``<result>_vs_paper``). The figures are transcribed from ``/work/shared/SYSTEMS.md`` and the
research notes beside it (``research/graphs.md`` §1.6, ``research/molecules_placement.md`` §1.6/§2.11,
``research/ts_weather_wireless.md`` §1.5); where a paper's table could not be read the row says so and
no figure is printed. Every measured value is read from the result file; nothing is filled in.
Fractions in the result files are printed as percentages where the paper prints percentages.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Figure:
    """One published number and how to read the matching value from a benchmark's JSON."""

    metric: str
    paper: float | None  # None: the paper's table could not be read
    source: str
    read: Callable[[dict], float | None]
    scale: float = 1.0  # measured value x scale = the paper's unit (fraction -> %: 100)


def _get(d: Any, *keys: str) -> float | None:
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return None if d is None else float(d)


# ---------------------------------------------------------------------------- NsDiff (timeseries)
def _nsdiff_row(res: dict, model: str = "NsDiff") -> dict | None:
    return next((r for r in res.get("rows", []) if str(r.get("dataset", "")).startswith("ETTh1")
                 and r.get("model") == model), None)


_NSDIFF_SRC = "released code on ETTh1, user-reported (NsDiff issue #5); the paper's table was not read"
NSDIFF = [Figure(m, v, _NSDIFF_SRC, lambda r, m=m: _get(_nsdiff_row(r), m))
          for m, v in (("CRPS", 0.415), ("CRPS_sum", 1.91), ("MSE", 0.648), ("MAE", 0.543), ("QICE", 0.0278))]
NSDIFF.append(Figure("PICP (5-95 %, nominal 0.9)", None, "released code's PICP is broken (divides twice)",
                     lambda r: _get(_nsdiff_row(r), "PICP")))

# ---------------------------------------------------------------------------- G2PT (graphs)
_T2 = "G2PT paper Table 2, G2PT-small"
_T4 = "G2PT paper Table 4, G2PT-small (MOSES, scaffold test set)"
_MMD = " [MMD note]"
G2PT = []
for fam, (deg, clus, orb, spec, vun) in {"planar": (4.7e-3, 2.4e-3, 0.0, 1.6e-2, 95.0),
                                        "tree": (2e-3, 0.0, 0.0, 7.4e-3, 99.0),
                                        "sbm": (3.5e-3, 1.2e-2, 7e-4, 7.6e-3, 100.0)}.items():
    G2PT.append(Figure(f"{fam} V.U.N. %", vun, _T2, lambda r, f=fam: _get(r, "results", f, "rows", "G2PT", "VUN"), 100.0))
    for key, val in (("degree", deg), ("clustering", clus), ("orbit", orb), ("spectre", spec)):
        G2PT.append(Figure(f"{fam} {key} MMD", val, _T2 + _MMD,
                           lambda r, f=fam, k=key: _get(r, "results", f, "rows", "G2PT", k)))
for key, val, scale in (("validity", 95.1, 100.0), ("uniqueness", 100.0, 100.0), ("novelty", 91.7, 100.0),
                        ("FCD", 1.10, 1.0)):
    G2PT.append(Figure(f"MOSES {key}{' %' if scale == 100 else ''}", val,
                       _T4 + (" — ours is against the MOSES test split, not TestSF" if key == "FCD" else ""),
                       lambda r, k=key: _get(r, "results", "moses", "rows", "G2PT", k), scale))

# ---------------------------------------------------------------------------- UniGEM / EDM (molecules)
_MOL_SRC = "QM9, 10k samples: UniGEM Table 1 as transcribed by MolFLAE (third party)"
MOLECULES = []
for system, figs in (("unigem", (99.0, 89.8, 95.0, 93.2)), ("edm", (98.7, 82.0, 91.9, 90.7))):
    for key, val in zip(("atom_stability", "molecule_stability", "validity", "valid_x_unique"), figs, strict=True):
        MOLECULES.append(Figure(f"{system.upper() if system == 'edm' else 'UniGEM'} {key} %", val, _MOL_SRC,
                                lambda r, s=system, k=key: _get(r, "results", s, k), 100.0))
MOLECULES.append(Figure("UniGEM property MAE (gap, meV)", None, "UniGEM's property table was not read",
                        lambda r: _get(r, "results", "unigem", "mae_gap")))

# ---------------------------------------------------------------------------- diffusion placement
ISPD2005 = {"adaptec1": 9.19, "adaptec2": 31.0, "adaptec3": 54.4, "adaptec4": 54.5,
            "bigblue1": 2.64, "bigblue2": 38.8, "bigblue3": 35.9, "bigblue4": 141.0}
_PL_SRC = "Chip Placement with Diffusion Models, Table 10 (ISPD2005 macro-only HPWL x10^5)"


def _placement_hpwl(res: dict, design: str, method: str = "diffusion") -> float | None:
    row = next((r for r in res.get("rows", []) if r.get("circuit") == design and r.get("method") == method), None)
    return None if row is None else float(row["hpwl"])


def _placement_legality(res: dict) -> float | None:
    vals = [float(r["legality"]) for r in res.get("rows", [])
            if r.get("circuit") in ISPD2005 and r.get("method") == "diffusion"]
    return sum(vals) / len(vals) if vals else None


#: the benchmark's diffusion rows: the paper's sampler, and (when the benchmark has it) + our quadratic refinement
PLACEMENT_METHODS = ("diffusion", "diffusion + refine")
PLACEMENT = [Figure(f"{d} HPWL x1e5", v, _PL_SRC, lambda r, d=d: _placement_hpwl(r, d), 1e-5)
             for d, v in ISPD2005.items()]
PLACEMENT.append(Figure("ISPD2005 mean legality (diffusion)", None,
                        "released samples: 0.971-0.9997 per design (no single paper figure)", _placement_legality))

# ---------------------------------------------------------------------------- MMSFM (singlecell)
_MM_SRC = "MMSFM paper's tables could not be read (research/singlecell.md); no figure to compare"


def _mmsfm(res: dict, dataset: str, variant: str, metric: str) -> float | None:
    vals = [float(r[metric]) for r in res.get("rows", []) if r.get("dataset") == dataset and r.get("variant") == variant]
    return sum(vals) / len(vals) if vals else None


MMSFM = [Figure(f"{d} {v} {m} (mean over held-out times, seeds)", None, _MM_SRC,
                lambda r, d=d, v=v, m=m: _mmsfm(r, d, v, m))
         for d in ("s_gaussians", "alpha_gaussians", "krumsiek11") for v in ("triplet", "pairwise")
         for m in ("W1", "W2_squared")]

FIGURES: dict[str, list[Figure]] = {"timeseries": NSDIFF, "graphs": G2PT, "molecules": MOLECULES,
                                    "placement": PLACEMENT, "singlecell": MMSFM}


def compare(domain: str, result: dict) -> list[dict]:
    """One row per published figure: ``metric, measured`` (in the paper's unit, ``None`` when the run did
    not produce it), ``paper`` (``None`` when not read) and ``source``."""
    if domain not in FIGURES:
        raise SystemExit(f"error: unknown domain {domain!r}; known: {', '.join(FIGURES)}")
    rows = []
    for f in FIGURES[domain]:
        v = f.read(result)
        rows.append({"metric": f.metric, "measured": None if v is None or math.isnan(v) else v * f.scale,
                     "paper": f.paper, "source": f.source})
    if domain == "placement":  # averages over the designs this run placed, beside the paper's over the same
        for method in PLACEMENT_METHODS:
            done = [d for d in ISPD2005 if _placement_hpwl(result, d, method) is not None]
            if method != "diffusion" and not done:
                continue  # a benchmark without that stage
            rows.append({"metric": f"mean HPWL x1e5 over the {len(done)} designs run ({method})",
                         "measured": sum(_placement_hpwl(result, d, method) for d in done) * 1e-5 / len(done)
                         if done else None,
                         "paper": sum(ISPD2005[d] for d in done) / len(done) if done else None,
                         "source": _PL_SRC + " (paper: its diffusion placer on the same designs; average over "
                                             "all eight: 45.9)"})
    return rows


def _fmt(v: float | None) -> str:
    return "–" if v is None else f"{v:.4g}"


def markdown(domain: str, rows: list[dict], result_path: str, note: str = "") -> str:
    lines = [f"# {domain}: paper-scale run beside the published figures", "", f"Result file: `{result_path}`", "",
             *([f"**{note}**", ""] if note else []),
             "| metric | measured | paper | source |", "|---|---|---|---|"]
    lines += [f"| {r['metric']} | {_fmt(r['measured'])} | {_fmt(r['paper'])} | {r['source']} |" for r in rows]
    lines += ["", "`–` under measured: this run did not produce the metric (dataset skipped or not cached); "
              "under paper: the paper's table could not be read."]
    if any(_MMD in r["source"] for r in rows):
        lines += ["", "[MMD note]: the paper follows DiGress/SPECTRE's MMD; ours is the biased Gaussian-TV MMD² "
                  "(scigen.graphs.metrics.mmd): compare with the train-vs-test reference row of the benchmark's table."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("domain", choices=sorted(FIGURES))
    ap.add_argument("result", type=Path, help="the benchmark's JSON result file")
    ap.add_argument("--out", type=Path, default=None, help="output stem (default: <result>_vs_paper)")
    ap.add_argument("--note", default="", help="a line printed above the table (e.g. that this was a smoke run)")
    a = ap.parse_args(argv)
    if not a.result.is_file():
        print(f"error: result file {a.result} not found (did the benchmark run finish?)", file=sys.stderr)
        return 2
    try:
        result = json.loads(a.result.read_text())
    except json.JSONDecodeError as exc:
        print(f"error: {a.result} is not JSON ({exc})", file=sys.stderr)
        return 2
    rows = compare(a.domain, result)
    stem = a.out or a.result.with_name(a.result.stem + "_vs_paper")
    md = markdown(a.domain, rows, str(a.result), a.note)
    for suffix, text in ((".md", md), (".json", json.dumps({"domain": a.domain, "result": str(a.result), "note": a.note,
                                                            "rows": rows}, indent=1) + "\n")):
        target = stem.with_name(stem.name + suffix)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(text)
        tmp.replace(target)  # atomic: a reader never sees half a table
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
