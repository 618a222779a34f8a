"""Speed of every system (issue 36.5): training steps per CPU-second of ``fit`` against a plain PyTorch loop on
the same network, loss and batch, and samples per CPU-second of the system's sampler against the paper's.

**Training.** Each system (``tiny`` preset, ``default_data(quick=True)``) is fitted for a few steps through its
public ``fit`` while ``scigen.core.train.fit`` is wrapped to record every call the system makes (one per stage
for staged systems): a copy of the network as the call received it (weights and frozen flags), the loss, the
data and the options. Every recorded call is then timed three times, interleaved ``--reps`` times, from that
copy:

* ``fit`` with the recorded options (optimizer, lr schedule, clipping, EMA, precision, collate, the stage's
  freeze check; no checkpoints, logger, validation or progress bar), on its default loop; with ``--trainer``
  also on ``loop="trainer"``;
* a plain loop a user would write for the same recipe: torch's default optimizer implementation (the named
  optimizer with the recorded lr / weight decay, momentum 0.9 for SGD), the same ``LambdaLR`` schedule,
  ``clip_grad_norm_``, an EMA updated with one ``lerp_`` per parameter, batches of the same size (rows of a
  per-epoch permutation of a tensor, or ``DataLoader(shuffle=True, collate_fn=)`` over a Dataset), and
  ``float(loss)`` every step (what ``fit`` records);
* the same plain loop on the optimizer kernel ``fit`` builds (torch's fused Adam/AdamW where it takes every
  parameter, else the multi-tensor one: ``scigen.core.train.module.make_optimizer``). ``fit / plain`` is what a
  user gains; ``fit / plain (same kernel)`` is the cost of ``fit``'s loop itself (its checks, records and hooks).

Rates are steps per CPU-second of this process (``time.process_time``; one torch thread) over the steps after
the first ``warm`` (warm-up excluded); each timing runs at least ``--steps`` steps, and as many as fill about
``--budget`` CPU-seconds when steps are fast (short timings of millisecond steps are mostly noise: garbage
collection, cache state); ``fit``'s set-up (Fabric, optimizer, EMA copy) is reported apart.

**Sampling.** The same model (trained for those few steps: sampling cost does not depend on the weights except
for adaptive solvers) draws ``n`` samples through ``sample_for_cli(n, seed)`` (what ``scigen ... sample``
runs) with the ``tiny`` preset's sampler and with the paper's sampler settings (the ``method`` / ``steps`` /
``inner_steps`` / ``refine_steps`` / ``legalize_steps`` / ``n_steps`` of ``preset("paper")`` put on the tiny
network; systems with one sampler have one row). Forward hooks on the network's modules count the
outermost model calls and the CPU time spent inside them, so each row also says how much of the sampler's time
is spent outside the network (solver arithmetic, bookkeeping, post-processing such as legalisation). The
tiny preset's sampler is timed after one warm-up draw of one sample.

    python benchmarks/core/bench_speed.py --quick          # all systems, a few minutes on one busy core
    python benchmarks/core/bench_speed.py --systems core/toy,graphs/sbgd --trainer
    python benchmarks/core/bench_speed.py --quick --preset small   # the small networks: results/speed_small

Writes ``results/speed.{json,md}`` (``--out`` to change).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import math
import os
import statistics
import sys
import time
import traceback
from pathlib import Path

import torch
from lightning.pytorch.callbacks import Callback
from torch import nn
from torch.utils.data import DataLoader

RESULTS = Path(__file__).parent / "results"
SAMPLER_FIELDS = ("method", "steps", "inner_steps", "refine_steps", "legalize_steps", "n_steps")
#: samples drawn per system (quick, full): small where one sample is a long chain (molecules, placement)
N_SAMPLES = {"core/toy": (512, 2000), "molecules/unigem": (4, 16), "molecules/edm": (4, 16),
             "placement/diffusion": (1, 2), "graphs/sbgd": (4, 16), "graphs/g2pt": (4, 16), "graphs/agdiff": (4, 16),
             "weather/nowcast": (2, 4), "timeseries/nsdiff": (20, 100), "timeseries/d3u": (20, 100),
             "singlecell/mmsfm": (64, 256), "singlecell/gim": (64, 256), "singlecell/inverseflow": (64, 256),
             "wireless/sbgm": (16, 64)}


def systems() -> dict[str, type]:
    from scigen.core.system.registry import discover

    found, _ = discover()
    return {f"{d}/{n}": spec.load() for d, byname in sorted(found.items()) for n, spec in sorted(byname.items())}


# ------------------------------------------------------------------ training
class _Recorder:
    """Wraps ``scigen.core.train.fit``: records each call (network copy, loss, data, options), then runs it."""

    def __init__(self) -> None:
        self.calls: list[dict] = []

    @contextlib.contextmanager
    def installed(self):
        import scigen.core.train as train

        real = train.fit

        def recording(module, loss_fn, data, **kw):
            state = loss_fn.state_dict() if callable(getattr(loss_fn, "state_dict", None)) else None
            self.calls.append({"module": copy.deepcopy(module), "loss_fn": loss_fn, "data": data, "kw": dict(kw),
                               "loss_state": copy.deepcopy(state)})
            return real(module, loss_fn, data, **kw)

        train.fit = recording
        try:
            yield real
        finally:
            train.fit = real


class _CPUClock(Callback):
    """CPU time from the start of step ``warm`` to the end of step ``last`` (the clock is read twice, as the
    plain loop reads it)."""

    def __init__(self, warm: int, last: int) -> None:
        self.warm, self.last, self.t0, self.t1, self.n = warm, last, None, None, 0

    def on_train_batch_start(self, trainer, *args) -> None:
        if self.n == self.warm:
            self.t0 = time.process_time()

    def on_train_batch_end(self, trainer, *args) -> None:
        self.n += 1
        if self.n == self.last:
            self.t1 = time.process_time()


def _fresh(call: dict):
    module = copy.deepcopy(call["module"])
    if call["loss_state"] is not None:
        call["loss_fn"].load_state_dict(copy.deepcopy(call["loss_state"]))
    return module


def _time_fit(real_fit, call: dict, steps: int, warm: int, loop: str) -> tuple[float, float]:
    """(steps per CPU-second after warm-up, set-up CPU seconds) of ``fit`` on the recorded call."""
    module = _fresh(call)
    clock = _CPUClock(warm, steps)
    kw = {**call["kw"], "max_steps": steps, "checkpoint_dir": None, "resume": False, "val_data": None,
          "early_stopping": None, "logger": None, "progress": False, "loop": loop,
          "callbacks": [*call["kw"].get("callbacks", ()), clock]}
    c0 = time.process_time()
    real_fit(module, call["loss_fn"], call["data"], **kw)
    total = time.process_time() - c0
    loop_cpu = clock.t1 - clock.t0
    return (clock.n - warm) / max(loop_cpu, 1e-9), total - loop_cpu * clock.n / max(clock.n - warm, 1)


def _batches(data, batch_size: int, collate_fn, seed: int = 0):
    """Full batches: rows of a per-epoch permutation of a tensor (through ``collate_fn`` when the system gives
    one, as fit's loader does), or a shuffling DataLoader over a Dataset."""
    g = torch.Generator().manual_seed(seed)
    if isinstance(data, torch.Tensor):
        n = data.shape[0]
        while True:
            perm = torch.randperm(n, generator=g)
            for i in range(0, max(n - batch_size, 0) + 1, batch_size):
                rows = data[perm[i:i + batch_size]]
                yield collate_fn(rows) if collate_fn is not None else rows
    loader = data if isinstance(data, DataLoader) else DataLoader(
        data, batch_size=batch_size, shuffle=True, generator=g, collate_fn=collate_fn,
        drop_last=len(data) >= batch_size)
    while True:
        yield from loader


def _time_plain(call: dict, steps: int, warm: int, kernel: str = "default") -> float:
    """Steps per CPU-second after warm-up of a plain loop with the recorded recipe, on torch's default optimizer
    implementation (``kernel="default"``) or the one ``fit`` builds (``"fit"``)."""
    import random

    import numpy as np

    from scigen.core.train.module import fused_supported, lr_lambda

    kw = call["kw"]
    module = _fresh(call)
    module.train()
    seed = int(kw.get("seed", 0))  # the random numbers fit draws (a loss's noise can change its cost)
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
    params = [p for p in module.parameters() if p.requires_grad]
    name, lr, wd = kw.get("optimizer", "adamw"), kw.get("lr", 1e-3), kw.get("weight_decay", 0.0)
    if callable(name):
        opt = name(params)
    elif name == "sgd":
        opt = torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=wd, foreach=True if kernel == "fit" else None)
    else:
        impl = {"fused": True} if kernel == "fit" and fused_supported(params) else {}
        opt = (torch.optim.AdamW if name == "adamw" else torch.optim.Adam)(params, lr=lr, weight_decay=wd, **impl)
    max_steps = kw.get("max_steps", steps)
    warmup = kw.get("warmup_steps")
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda(kw.get("lr_schedule"), max_steps,
                                                             max_steps // 20 if warmup is None else warmup))
    decay = kw.get("ema_decay")
    ema = copy.deepcopy(module).requires_grad_(False) if decay else None
    clip = kw.get("grad_clip")
    n = len(call["data"]) if not isinstance(call["data"], DataLoader) else None
    batch_size = kw.get("batch_size") or (min(n, 128) if n else None)
    batches = _batches(call["data"], batch_size, kw.get("collate_fn"))
    loss_fn = call["loss_fn"]
    t0 = None
    for step in range(steps):
        if step == warm:
            t0 = time.process_time()
        batch = next(batches)
        loss = loss_fn(module, batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(params, clip)
        opt.step()
        sched.step()
        if ema is not None:
            with torch.no_grad():
                for e, p in zip(ema.parameters(), module.parameters(), strict=True):
                    e.lerp_(p, 1.0 - decay)
        float(loss.detach())
    return (steps - warm) / max(time.process_time() - t0, 1e-9)


def _describe(call: dict) -> dict:
    kw, data = call["kw"], call["data"]
    module = call["module"]
    trainable = sum(p.numel() for p in module.parameters() if p.requires_grad)
    total = sum(p.numel() for p in module.parameters())
    kind = "tensor" if isinstance(data, torch.Tensor) else ("DataLoader" if isinstance(data, DataLoader) else
                                                            type(data).__name__)
    stage = next((getattr(cb, "stage", None) for cb in kw.get("callbacks", ()) if hasattr(cb, "stage")), None)
    return {"stage": stage, "params": total, "trainable": trainable, "batch_size": kw.get("batch_size"),
            "data": kind, "optimizer": kw.get("optimizer") if isinstance(kw.get("optimizer"), str) else "callable",
            "ema": kw.get("ema_decay"), "clip": kw.get("grad_clip"), "precision": kw.get("precision", "32-true")}


# ------------------------------------------------------------------ sampling
class _NetClock:
    """Forward hooks on every module of the network: the outermost calls (a sampler may call the network or
    its parts, e.g. a denoiser) and the CPU seconds spent inside them."""

    def __init__(self, network: nn.Module) -> None:
        self.calls, self.inside, self._t, self._depth = 0, 0.0, 0.0, 0
        self._handles = [h for m in network.modules() for h in (m.register_forward_pre_hook(self._pre),
                                                                m.register_forward_hook(self._post))]

    def _pre(self, *args) -> None:
        if self._depth == 0:
            self._t = time.process_time()
        self._depth += 1

    def _post(self, *args) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.calls += 1
            self.inside += time.process_time() - self._t

    def close(self) -> None:
        for h in self._handles:
            h.remove()


def _sampler_settings(cls, config) -> dict:
    paper = cls.Config.preset("paper").model_dump()
    mine = config.model_dump()
    return {k: paper[k] for k in SAMPLER_FIELDS if k in mine and k in paper and paper[k] != mine[k]}


def _time_sampling(model, n: int, warm_up: bool) -> dict:
    if warm_up:  # first calls pay lazy imports and allocator growth
        with torch.no_grad():
            model.sample_for_cli(1, 0)
    clock = _NetClock(model.network)
    try:
        with torch.no_grad():
            c0 = time.process_time()
            model.sample_for_cli(n, 0)
            cpu = time.process_time() - c0
    finally:
        clock.close()
    return {"n": n, "cpu_s": cpu, "samples_per_cpu_s": n / max(cpu, 1e-9), "model_calls": clock.calls,
            "share_in_network": clock.inside / max(cpu, 1e-9)}


# ------------------------------------------------------------------ one system
def run_system(key: str, cls, *, quick: bool, steps: int, warm: int, reps: int, trainer: bool,
               budget: float, preset: str = "tiny") -> dict:
    out: dict = {"system": key, "training": [], "sampling": [], "errors": []}
    rec = _Recorder()
    model = cls(cls.Config.preset(preset, train={"progress": False, "logger": None}))
    data = cls.default_data(quick=True)
    with rec.installed() as real_fit:
        model.fit(data, max_steps=4)
    for i, call in enumerate(rec.calls):
        row = {"call": i, **_describe(call)}
        try:
            if budget:  # as many steps as fill about ``budget`` CPU-seconds per timing (at least ``steps``)
                rate = _time_plain(call, 6, 2)
                n_steps = int(min(max(steps, warm + budget * rate), 10 * steps))
            else:
                n_steps = steps
            row["steps"] = n_steps
            rates: dict[str, list[float]] = {"fit": [], "plain": [], "plain (same kernel)": []}
            setup: list[float] = []
            if trainer:
                rates["fit (trainer)"] = []
            for _ in range(reps):
                r, s = _time_fit(real_fit, call, n_steps, warm, "auto")
                rates["fit"].append(r)
                setup.append(s)
                if trainer:
                    rates["fit (trainer)"].append(_time_fit(real_fit, call, n_steps, warm, "trainer")[0])
                rates["plain"].append(_time_plain(call, n_steps, warm))
                rates["plain (same kernel)"].append(_time_plain(call, n_steps, warm, kernel="fit"))
            med = {k: statistics.median(v) for k, v in rates.items()}
            row.update({f"{k} steps/cpu-s": v for k, v in med.items()})
            row["ratio fit/plain"] = med["fit"] / med["plain"]
            row["ratio fit/plain (same kernel)"] = med["fit"] / med["plain (same kernel)"]
            if trainer:
                row["ratio trainer/plain"] = med["fit (trainer)"] / med["plain"]
            row["fit setup cpu-s"] = max(0.0, statistics.median(setup))  # an estimate: total minus steps
            row["all"] = {k: [round(x, 2) for x in v] for k, v in rates.items()}
        except Exception as exc:  # noqa: BLE001 - one system's failure is reported, the others still run
            row["error"] = f"{type(exc).__name__}: {exc}"[:300]
            out["errors"].append(traceback.format_exc(limit=3))
        out["training"].append(row)
        print(key, json.dumps({k: v for k, v in row.items() if k != "all"}, default=str), flush=True)

    n = N_SAMPLES.get(key, (16, 64))[0 if quick else 1]
    base = model.config
    configs = [(f"{preset} preset", {})]
    paper = _sampler_settings(cls, base)
    if paper:
        configs.append(("paper sampler", paper))
    for label, update in configs:
        try:
            model.config = base.model_copy(update=update)
            sampler = {k: getattr(model.config, k) for k in SAMPLER_FIELDS if hasattr(model.config, k)}
            row = {"sampler": label, "settings": sampler, **_time_sampling(model, n, warm_up=not update)}
        except Exception as exc:  # noqa: BLE001
            row = {"sampler": label, "settings": update, "error": f"{type(exc).__name__}: {exc}"[:300]}
            out["errors"].append(traceback.format_exc(limit=3))
        finally:
            model.config = base
        out["sampling"].append(row)
        print(key, json.dumps(row, default=str), flush=True)
    return out


# ------------------------------------------------------------------ report
#: why a sampler spends most of its CPU time outside the network (cProfile of ``sample_for_cli`` on this version)
WHY_SAMPLING = {
    "placement/diffusion": "each model call also runs the guidance's inner Adam steps (``inner_steps``) on the "
                           "wirelength / density potentials, and the draw ends with the legaliser (1,500 steps in the "
                           "tiny preset, 3,000 in the paper's), which costs more than the 30 denoiser calls",
    "timeseries/nsdiff": "the chain evaluates the location-scale path's coefficients every step (``variance_"
                         "coefficients``, the posterior, the validity checks of ``_check_vars``) and the discrete "
                         "schedule by cubic interpolation (``DiscretePath._cubic``): per-step arithmetic on small "
                         "tensors that costs more than the tiny denoiser",
    "timeseries/d3u": "``DiscretePath._cubic`` / ``_segment`` (alpha and sigma of the discrete schedule interpolated "
                      "at every solver time) cost about as much as the tiny PatchDN denoiser",
    "singlecell/mmsfm": "torchdiffeq's adaptive dopri5 step control and the trajectory bookkeeping around 32 calls of a "
                        "small MLP",
    "graphs/agdiff": "the draw is a handful of network calls; building the networkx graphs of the output "
                     "(``_graph_from_json``, ``add_edges_from``) dominates",
    "singlecell/inverseflow": "one call of the one-step denoiser; the rest is building the AnnData / pandas output",
    "singlecell/gim": "sampling draws from the fitted linear SCM with its parameters directly, not through a forward "
                      "pass (no model calls)",
    "wireless/sbgm": "the tiny preset samples from the fitted CSGMM (no network forward)",
}
NOTES = [
    "wireless/sbgm has no training row: its tiny preset fits a CSGMM with its own EM loop, which trains no network "
    "through `fit` (the CSVAE variant does, through `fit`).",
    "Training ratios of a few steps on a 2-core machine shared with other jobs move by 10-20 % between runs (see the "
    "repetitions in the JSON); a ratio below 1 in one row is a finding only if it repeats. `fit` does the same "
    "arithmetic as the plain loop plus its guarantees (non-finite check, loss record, the stage's freeze check, "
    "RNG bookkeeping). It gains on the optimizer: torch's fused Adam/AdamW kernel (one pass over each parameter, "
    "3-7x faster a step than torch's default one-tensor-at-a-time loop on the CPU, `fit_throughput.md`) and "
    "multi-tensor EMA updates, where the plain loop uses torch's defaults. The `same kernel` columns take that gain "
    "away and leave the loop's own cost.",
]


def _fmt(v, digits=3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def report(results: list[dict], meta: dict) -> str:
    lines = [f"# Speed of every system ({'quick' if meta['quick'] else 'full'} run, {meta['preset']} preset)", "",
             f"One torch thread; per timing at least {meta['steps']} training steps, more for fast steps (about "
             f"{meta['budget']} CPU-s, at most {10 * meta['steps']}: the steps column), {meta['warm']} warm-up steps excluded; "
             f"{meta['reps']} interleaved repetitions, medians; load average {meta['load_start'][0]:.1f} -> "
             f"{meta['load_end'][0]:.1f} on {os.cpu_count()} cores; torch {meta['torch']}; {meta['minutes']:.1f} min.",
             "", "## Training: steps per CPU-second, `fit` vs a plain loop (same network, loss, batch, recipe)", "",
             "`plain`: torch's default optimizer implementation; `same kernel`: the plain loop on the optimizer kernel "
             "`fit` builds (fused Adam/AdamW), so `fit / same kernel` is the cost of `fit`'s loop itself.", "",
             "| system | call (stage) | params (trainable) | batch | data | recipe | steps | fit | plain | fit / plain |"
             " plain, same kernel | fit / same kernel |"
             + (" trainer / plain |" if meta["trainer"] else "") + " fit set-up (CPU-s) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if meta["trainer"] else "") + "---|"]
    for r in results:
        for t in r["training"]:
            recipe = f"{t['optimizer']}, clip {_fmt(t['clip'])}, EMA {_fmt(t['ema'])}"
            if "error" in t:
                lines.append(f"| {r['system']} | {t['call']} ({t['stage'] or '-'}) | | | | | | error: {t['error']} | | | | |"
                             + (" |" if meta["trainer"] else "") + " |")
                continue
            lines.append(
                f"| {r['system']} | {t['call']} ({t['stage'] or '-'}) | {t['params']:,} ({t['trainable']:,}) | "
                f"{t['batch_size']} | {t['data']} | {recipe} | {t['steps']} | {t['fit steps/cpu-s']:.1f} | "
                f"{t['plain steps/cpu-s']:.1f} "
                f"| {t['ratio fit/plain']:.2f} | {t['plain (same kernel) steps/cpu-s']:.1f} | "
                f"{t['ratio fit/plain (same kernel)']:.2f} |"
                + (f" {t['ratio trainer/plain']:.2f} |" if meta["trainer"] else "")
                + f" {t['fit setup cpu-s']:.3f} |")
    lines += ["", f"## Sampling: samples per CPU-second through `sample_for_cli`, {meta['preset']} preset's sampler vs "
              "the paper's", "",
              "| system | sampler | settings | n | samples / CPU-s | × the paper sampler | model calls "
              "| CPU share in the network |",
              "|---|---|---|---|---|---|---|---|"]
    for r in results:
        rows = r["sampling"]
        paper = next((s for s in rows if s["sampler"] == "paper sampler" and "error" not in s), None)
        for s in rows:
            settings = ", ".join(f"{k}={v}" for k, v in s.get("settings", {}).items()) or "-"
            if "error" in s:
                lines.append(f"| {r['system']} | {s['sampler']} | {settings} | | error: {s['error']} | | | |")
                continue
            if s["sampler"] == "paper sampler":
                rel = "1"
            elif paper is not None:
                rel = f"{s['samples_per_cpu_s'] / paper['samples_per_cpu_s']:.3g}"
            else:
                rel = "1 (the paper's settings)"
            lines.append(f"| {r['system']} | {s['sampler']} | {settings} | {s['n']} | {s['samples_per_cpu_s']:.3g} | "
                         f"{rel} | {s['model_calls']} | {s['share_in_network']:.0%} |")
    lines += ["", "## Where scigen is slower, and why", ""]
    slow_fit = [(r["system"], t) for r in results for t in r["training"] if t.get("ratio fit/plain", 1.0) < 1.0]
    if slow_fit:
        lines.append("Training rows where `fit` ran below the plain loop in this run: " + "; ".join(
            f"{k} call {t['call']} ({t['ratio fit/plain']:.2f}, {t['plain steps/cpu-s']:.0f} steps/CPU-s)"
            for k, t in slow_fit) + ".")
    else:
        lines.append("Training: `fit` ran at least as fast as the plain loop for every recorded call in this run.")
    loop_cost = [(r["system"], t) for r in results for t in r["training"]
                 if t.get("ratio fit/plain (same kernel)", 1.0) < 1.0]
    if loop_cost:
        lines += ["", "On the same optimizer kernel, `fit`'s loop cost something in: " + "; ".join(
            f"{k} call {t['call']} ({t['ratio fit/plain (same kernel)']:.2f}, "
            f"{1e6 * (1 / t['fit steps/cpu-s'] - 1 / t['plain (same kernel) steps/cpu-s']):.0f} us a step)"
            for k, t in loop_cost) + ": the non-finite check, the loss record, the stage's freeze check and the "
            "callbacks' hooks, a few tens of microseconds a step."]
    lines.append("")
    for r in results:
        worst = [s for s in r["sampling"] if "error" not in s and s["share_in_network"] < 0.5]
        if worst:
            share = ", ".join(f"{s['sampler']} {s['share_in_network']:.0%}" for s in worst)
            lines.append(f"- **{r['system']}** samples outside the network most of the time ({share} inside): "
                         f"{WHY_SAMPLING.get(r['system'], 'not profiled')}.")
    lines += ["", *[f"- {n}" for n in NOTES]]
    errors = [(r["system"], e.strip().splitlines()[-1]) for r in results for e in r["errors"]]
    if errors:
        lines += ["", "Errors: " + "; ".join(f"{k}: {e}" for k, e in errors)]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="few steps and samples: a few minutes for all systems")
    ap.add_argument("--systems", default=None, help="comma-separated keys (default: every registered system)")
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--budget", type=float, default=None,
                    help="CPU-seconds per timing: small models run more steps (default 0.5 quick, 2 full; 0: --steps)")
    ap.add_argument("--trainer", action="store_true", help="also time fit(loop='trainer')")
    ap.add_argument("--out", type=Path, default=None, help="default results/speed (tiny), results/speed_<preset>")
    ap.add_argument("--preset", default="tiny", help="the networks' preset (tiny, small): issue 36 asks for both")
    a = ap.parse_args(argv)
    steps = a.steps or (20 if a.quick else 80)
    warm = 4 if a.quick else 10
    reps = a.reps or 3
    budget = a.budget if a.budget is not None else (0.5 if a.quick else 2.0)
    torch.set_num_threads(1)
    found = systems()
    keys = a.systems.split(",") if a.systems else list(found)
    unknown = [k for k in keys if k not in found]
    if unknown:
        sys.exit(f"unknown systems {unknown}; registered: {sorted(found)}")
    t0, load0 = time.time(), os.getloadavg()
    results = []
    for key in keys:
        try:
            results.append(run_system(key, found[key], quick=a.quick, steps=steps, warm=warm, reps=reps,
                                      trainer=a.trainer, budget=budget, preset=a.preset))
        except Exception as exc:  # noqa: BLE001
            traceback.print_exc()
            results.append({"system": key, "training": [], "sampling": [],
                            "errors": [f"{type(exc).__name__}: {exc}"[:300]]})
    meta = {"preset": a.preset, "quick": a.quick, "steps": steps, "warm": warm, "reps": reps, "trainer": a.trainer, "budget": budget,
            "torch": torch.__version__, "load_start": load0, "load_end": os.getloadavg(),
            "minutes": (time.time() - t0) / 60}
    if a.out is None:
        a.out = RESULTS / ("speed" if a.preset == "tiny" else f"speed_{a.preset}")
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.with_suffix(".json").write_text(json.dumps({"meta": meta, "results": results}, indent=1, default=str))
    text = report(results, meta)
    a.out.with_suffix(".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
