"""The measured cost of ``Config()`` against ``preset("paper")`` per system: parameters and seconds per training
step on the same batch of 2 (``paper_presets.py --smoke``, one CPU thread), and their ratios; the figures that
the ``why_default_differs`` entries of the "compute scale" rows in each ``paper_preset.json`` quote.

    bash benchmarks/gpu/check.sh --smoke    # writes results/check_smoke_presets.json (the paper presets)
    OMP_NUM_THREADS=1 python benchmarks/gpu/paper_presets.py --steps 2 --smoke --device cpu --preset default
    python benchmarks/gpu/preset_cost.py      # -> results/preset_cost.md
"""

from __future__ import annotations

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    paper = {r["system"]: r for r in json.loads((RESULTS / "check_smoke_presets.json").read_text())}
    default = {r["system"]: r for r in json.loads((RESULTS / "default_presets_smoke.json").read_text())}
    lines = ["# Config() against preset(\"paper\"): cost per training step", "",
             "Same batch of 2, one CPU thread, median of the steps after the first (`paper_presets.py --smoke`); "
             "the accuracy of the two sizes is not compared here.", "",
             "| system | parameters (paper) | parameters (default) | ratio | s / step (paper) | s / step (default) | ratio |",
             "|---|---|---|---|---|---|---|"]
    for key in sorted(paper):
        p, d = paper[key], default.get(key, {})
        if not (p.get("ok") and d.get("ok")):
            lines.append(f"| {key} | {p.get('params', '')} | {d.get('params', '')} | | | | not run: "
                         f"{p.get('error') or d.get('error') or 'missing'} |")
            continue
        pr = f"{p['params'] / d['params']:.1f}x" if d["params"] else ""
        sr = f"{p['step_s'] / d['step_s']:.1f}x" if p.get("step_s") and d.get("step_s") else ""
        lines.append(f"| {key} | {p['params']:,} | {d['params']:,} | {pr} | {p.get('step_s')} | {d.get('step_s')} | {sr} |")
    (RESULTS / "preset_cost.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
