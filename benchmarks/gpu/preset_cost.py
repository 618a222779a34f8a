"""The size of ``Config()`` against ``preset("paper")`` per system: trainable parameters of the built networks
and their ratio (``paper_presets.py --smoke`` rows); the figures that the ``why_default_differs`` entries of
the "compute scale" rows in each ``paper_preset.json`` quote. Seconds per step are in the two runs' own
tables; they are not compared here, because the runs so far shared a loaded 2-core machine at different
loads (a ratio of two such timings measures the load, not the network).

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
    lines = ["# Config() against preset(\"paper\"): network size", "",
             "Trainable parameters of the networks each builds on its default data (`paper_presets.py --smoke`); "
             "the accuracy of the two sizes is not compared here, and the timings of the two runs are not "
             "comparable (different machine load).", "",
             "| system | parameters (paper) | parameters (default) | paper / default |",
             "|---|---|---|---|"]
    for key in sorted(paper):
        p, d = paper[key], default.get(key, {})
        if not (p.get("ok") and d.get("ok")):
            lines.append(f"| {key} | {p.get('params', '')} | {d.get('params', '')} | not run: "
                         f"{p.get('error') or d.get('error') or 'missing'} |")
            continue
        pr = f"{p['params'] / d['params']:.1f}x" if d["params"] else "no trained parameters (closed-form EM)"
        lines.append(f"| {key} | {p['params']:,} | {d['params']:,} | {pr} |")
    (RESULTS / "preset_cost.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
