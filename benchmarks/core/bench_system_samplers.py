"""One sampler table across systems: every diffusion/flow system x every engine solver x NFE.

Issue 13's benchmark. One model is trained per system (its ``tiny`` preset, or what ``--steps`` says),
then sampled with its paper sampler and with ``ddpm``, ``ddim``, ``dpmpp_2m``, ``unipc``, ``heun`` and
``euler_maruyama`` (where meaningful) at NFE 10, 20, 50 and the paper's, all through the same
``System.sample(..., method=, steps=)``: the engine's ``scigen.core.samplers.sample`` under every system.
Reported per cell: the system's headline metric (direction in the header) and the sampling wall time.
The baseline of each row is the system's own paper sampler at the paper's NFE, in the same run.

    python benchmarks/core/bench_system_samplers.py [--systems core/toy,...] [--quick]

Writes ``results/system_samplers.{json,md}``. Model calls per step: 1 (ddpm, ddim, dpmpp_2m, unipc,
euler, euler_maruyama), 2 (heun), 4 (rk4); ``steps = NFE // calls``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

CALLS = {"ddpm": 1, "ddim": 1, "dpmpp_2m": 1, "unipc": 1, "euler": 1, "euler_maruyama": 1, "heun": 2, "rk4": 4}
NFES = (10, 20, 50)


@dataclass
class Adapter:
    """How to train one system and score a sample drawn with ``method``/``steps``."""

    key: str
    metric: str  # name and direction, e.g. "W2 (lower)"
    paper_method: str
    paper_nfe: int
    methods: tuple[str, ...]
    train: Callable[[bool], Any]  # quick -> trained model
    draw: Callable[[Any, str, int], Any]  # (model, method, steps) -> samples (timed)
    score: Callable[[Any, Any], float]  # (model, samples) -> metric (not timed)
    notes: list[str] = field(default_factory=list)


def _toy(objective: str) -> Adapter:
    from scigen.core.metrics import w2
    from scigen.core.toy import toy_data
    from scigen.core.toy.system import ToySystem

    test = toy_data("eight_gaussians", 1000, seed=1)

    def train(quick: bool):
        return ToySystem(objective=objective, train={"max_steps": 400 if quick else 1500, "progress": False,
                                                     "logger": None}).fit(ToySystem.default_data(quick=quick))

    def draw(model, method, steps):
        return model.sample(1000, method=method, steps=steps, seed=3)

    def score(model, samples):
        return float(w2(samples, test))

    paper = ("heun", 20) if objective == "flow_matching" else ("dpmpp_2m", 20)
    methods = ("heun", "euler", "dpmpp_2m", "unipc", "ddim", "ddpm")
    notes = []
    if objective == "diffusion":
        methods += ("euler_maruyama",)
    else:
        notes.append("euler_maruyama is not run on the linear path: its SDE drift alpha'/alpha is infinite at t = 1")
    return Adapter(f"core/toy ({objective})", "W2 (lower)", paper[0], paper[1], methods, train, draw, score, notes)


def _placement() -> Adapter:
    from scigen.placement.diffusion.system import DiffusionPlacer
    from scigen.placement.synthetic import SynthConfig, generate_netlist

    held_out = {}

    def train(quick: bool):
        model = DiffusionPlacer(DiffusionPlacer.Config.preset("tiny" if quick else "small",
                                                              train={"progress": False, "logger": None}))
        held_out["netlist"] = generate_netlist(10_000, SynthConfig.for_size(model.config.train_objects))
        return model.fit()

    def draw(model, method, steps):  # guided sampling + legalisation of the demo's held-out circuit
        return model.place(held_out["netlist"], method=method, steps=steps, seed=3, progress=False)[1]

    def score(model, metrics):
        return float(metrics["hpwl"]) if metrics["legality"] >= 0.99 else float("nan")

    notes = ["HPWL (chip units) after legalisation of one held-out circuit (the demo's), NaN when legality < 0.99; "
             "every model call also runs the guidance's inner Adam steps, so wall time grows with NFE"]
    return Adapter("placement/diffusion", "HPWL after legalisation (lower)", "ddpm", 1000,
                   ("ddpm", "ddim", "dpmpp_2m", "unipc", "heun", "euler_maruyama"), train, draw, score, notes)


ADAPTERS: dict[str, Callable[[], Adapter]] = {
    "core/toy-fm": lambda: _toy("flow_matching"),
    "core/toy-diffusion": lambda: _toy("diffusion"),
    "placement/diffusion": _placement,
}


def run(keys: list[str], quick: bool) -> list[dict]:
    rows = []
    for key in keys:
        ad = ADAPTERS[key]()
        t0 = time.perf_counter()
        model = ad.train(quick)
        train_s = time.perf_counter() - t0
        nfes = sorted(set(NFES) | {ad.paper_nfe})
        for method in ad.methods:
            for nfe in nfes:
                steps = max(1, nfe // CALLS[method])
                t0 = time.perf_counter()
                try:
                    samples = ad.draw(model, method, steps)
                    seconds = time.perf_counter() - t0
                    value, err = ad.score(model, samples), None
                except Exception as exc:  # a solver that cannot run here is reported, not hidden
                    value, err, seconds = float("nan"), f"{type(exc).__name__}: {exc}"[:160], time.perf_counter() - t0
                rows.append({"system": ad.key, "metric": ad.metric, "method": method, "nfe": steps * CALLS[method],
                             "steps": steps, "value": value, "seconds": seconds,
                             "paper": method == ad.paper_method and nfe == ad.paper_nfe, "train_seconds": train_s,
                             "error": err})
                print(json.dumps(rows[-1]), flush=True)
        for n in ad.notes:
            rows.append({"system": ad.key, "note": n})
    return rows


def table(rows: list[dict]) -> str:
    out = []
    for system in dict.fromkeys(r["system"] for r in rows):
        notes = [r["note"] for r in rows if r["system"] == system and "note" in r]
        rs = [r for r in rows if r["system"] == system and "note" not in r]
        base = next((r for r in rs if r["paper"]), None)
        nfes = sorted({r["nfe"] for r in rs})
        out.append(f"### {system}: {rs[0]['metric']}; paper sampler {base['method']} @ NFE {base['nfe']} = "
                   f"{base['value']:.4g} ({base['seconds']:.2f} s)\n" if base else f"### {system}\n")
        out.append("| method | " + " | ".join(f"NFE {n}" for n in nfes) + " |")
        out.append("|---|" + "---|" * len(nfes))
        for m in dict.fromkeys(r["method"] for r in rs):
            cells = []
            for n in nfes:
                r = next((x for x in rs if x["method"] == m and x["nfe"] == n), None)
                cells.append("-" if r is None else ("error" if r["error"] else f"{r['value']:.4g} ({r['seconds']:.2f} s)"))
            out.append(f"| {m} | " + " | ".join(cells) + " |")
        out += [f"\n{n}." for n in notes]
        out.append("")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", default=",".join(ADAPTERS))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    rows = run([k for k in a.systems.split(",") if k], a.quick)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "system_samplers.json").write_text(json.dumps(rows, indent=2) + "\n")
    text = table(rows)
    (a.out / "system_samplers.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
