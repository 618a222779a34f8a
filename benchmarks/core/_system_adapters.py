"""The systems of ``bench_system_samplers.py``: how to train each one and score a sample drawn with a row's sampler.

Every adapter uses the system's public API (``fit``, ``sample``/``place``/``trajectories``/``evaluate``).
A row is a *label*: usually the engine method name passed as ``method=``; NsDiff's labels also name the
``sigma_source`` they sample in, MMSFM's are its own integrators (``scigen.singlecell.mmsfm.integrate``).
``calls`` maps a label to model calls per step (``None``: adaptive, one run, NFE as measured).
``counted`` returns the modules whose forward calls are counted (the measured ``model_calls`` of a cell).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from torch import nn

from scigen.core.samplers import METHODS

#: model calls per solver step (``steps = NFE // calls``): the engine's cost table
CALLS: dict[str, int | None] = {m: s.nfe_per_step for m, s in METHODS.items()}
ENGINE = ("ddpm", "ddim", "dpmpp_2m", "unipc", "heun", "euler_maruyama")


@dataclass
class Adapter:
    """How to train one system and score a sample drawn with a row's ``label``/``steps``/``seed``."""

    key: str
    metric: str  # name and direction, e.g. "W2 (lower)"
    paper_method: str  # the label of the paper's sampler
    paper_nfe: int | None  # None: adaptive
    methods: tuple[str, ...]
    train: Callable[[bool], Any]  # quick -> trained model
    draw: Callable[[Any, str, int | None, int], Any]  # (model, label, steps, seed) -> samples (timed)
    score: Callable[[Any, Any], float | tuple[float, dict]]  # (model, samples) -> metric [, extras] (not timed)
    notes: list[str] = field(default_factory=list)
    calls: dict[str, int | None] = field(default_factory=dict)  # per-label overrides of CALLS
    counted: Callable[[Any], list[nn.Module]] = lambda m: [m.network]  # noqa: E731
    nfes: tuple[int, ...] | None = None  # None: 10, 20, 50 and the paper's
    at_paper_nfe: tuple[str, ...] | None = None  # labels also run at the paper's NFE (None: all)

    def calls_per_step(self, label: str) -> int | None:
        return self.calls[label] if label in self.calls else CALLS[label]


def _toy(objective: str) -> Adapter:
    from scigen.core.metrics import w2
    from scigen.core.toy import toy_data
    from scigen.core.toy.system import ToySystem

    test = toy_data("eight_gaussians", 1000, seed=1)

    def train(quick: bool):
        return ToySystem(objective=objective, train={"max_steps": 400 if quick else 1500, "progress": False,
                                                     "logger": None}).fit(ToySystem.default_data(quick=quick))

    def draw(model, method, steps, seed):
        return model.sample(1000, method=method, steps=steps, seed=seed)

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

    def draw(model, method, steps, seed):  # guided sampling + legalisation of the demo's held-out circuit
        return model.place(held_out["netlist"], method=method, steps=steps, seed=seed, progress=False)[1]

    def score(model, metrics):
        return float(metrics["hpwl"]) if metrics["legality"] >= 0.99 else float("nan")

    notes = ["HPWL (chip units) after legalisation of one held-out circuit (the demo's), NaN when legality < 0.99; "
             "every model call also runs the guidance's inner Adam steps, so wall time grows with NFE; the wall "
             "time includes the legalisation; at NFE 1000 only the paper's ddpm (3 seeds) is run (CPU budget)"]
    return Adapter("placement/diffusion", "HPWL after legalisation (lower)", "ddpm", 1000, ENGINE, train, draw,
                   score, notes, at_paper_nfe=("ddpm",))


def _molecules(cls_name: str) -> Adapter:
    """UniGEM / EDM: atom stability of 32 molecules, sizes from the training histogram."""
    from scigen.molecules.data.qm9 import load_qm9
    from scigen.molecules.unigem import system

    cls = getattr(system, cls_name)
    data = {}

    def train(quick: bool):
        qm9 = load_qm9("all", limit=2100)
        data["train"], data["test"] = qm9.subset(range(2000)), qm9.subset(range(2000, 2100))
        model = cls(cls.Config.preset("tiny", method="ddpm", steps=None,
                                      train={"max_steps": 300 if quick else 1500, "progress": False, "logger": None}))
        return model.fit(data["train"])

    def draw(model, method, steps, seed):
        return model.sample(32, method=method, steps=steps, seed=seed, progress=False)

    def score(model, samples):
        s = model.evaluate(data["test"], samples=samples)
        return s["atom_stability"], {k: s[k] for k in ("molecule_stability", "validity", "valid_x_unique")}

    notes = [f"{cls_name}: `tiny` network (32 wide, 3 EGNN blocks) trained on 2000 QM9 molecules; atom stability of "
             "32 samples (EDM's metric, a fraction); paper sampler = EDM's ancestral ddpm over all T = 1000 steps; "
             "ddpm/ddim with fewer steps take a subset of the integer grid, the other solvers a uniform grid; every "
             "run ends with one extra k = 0 call (types / clean coordinates), counted in model_calls; at NFE 1000 only the paper's ddpm (3 seeds) is run (CPU budget: a "
             "1000-call run takes 2-4 min on this loaded machine)"]
    return Adapter(f"molecules/{cls.name}", "atom stability (higher)", "ddpm", 1000, ENGINE, train, draw, score, notes,
                   at_paper_nfe=("ddpm",))


def _forecast_trainer(cls, data: dict):
    """``train(quick)`` for a timeseries system: the ``tiny`` preset on the quick default data (test split kept in ``data``)."""

    def train(quick: bool):
        from scigen.timeseries.data import split_ratio

        model = cls(cls.Config.preset("tiny", train={"max_steps": 300 if quick else 600, "progress": False,
                                                     "logger": None}))
        sp = split_ratio(cls.default_data(quick=True), model.config.context_length)
        data["test"] = sp.test
        return model.fit(sp.train, val_data=sp.val)

    return train


def _forecast_score(model, scores):
    return scores["CRPS"], {k: scores[k] for k in ("CRPS_sum", "QICE", "PICP", "MSE")}


NSDIFF_PAPER = "ddpm, σ̂ from denoiser (paper)"
NSDIFF_POSTERIOR = "ddpm, σ̂ from denoiser, posterior variance"


def _nsdiff() -> Adapter:
    """NsDiff: the paper's chain (sigma_source='denoiser', all T) vs the engine methods in NsDiff-PE mode."""
    from scigen.timeseries.nsdiff.system import NsDiff

    data = {}
    train = _forecast_trainer(NsDiff, data)

    def draw(model, label, steps, seed):
        base = model.config
        if label == NSDIFF_PAPER:
            update = {}
        elif label == NSDIFF_POSTERIOR:
            update = {"reverse_variance": "posterior"}
        else:  # NsDiff-PE: sigma_Y0 := g, the route on which every engine method runs
            update = {"sigma_source": "g"}
        method = "ddpm" if label in (NSDIFF_PAPER, NSDIFF_POSTERIOR) else label
        model.config = base.model_copy(update=update)
        try:
            return model.evaluate(data["test"], stride=base.horizon, max_windows=24, n_samples=100, method=method,
                                  steps=steps, seed=seed)
        finally:
            model.config = base

    notes = ["NsDiff `tiny` preset (T = 50 steps, linear beta to 0.3), synthetic non-stationary series, CRPS "
             "(standardised) over the test windows (at most 24, stride = horizon) x 100 samples; the wall time is that of `evaluate` and includes "
             "the CRPS/QICE computation (milliseconds)",
             "rows: the paper's chain (sigma_source='denoiser': sigma_Y0 recovered from the network's variance at "
             "every ancestral step, the system's default and only method='ddpm' on all T steps; with the system's "
             "default Analytic-DPM reverse variance, and with the paper's posterior variance); every other row "
             "runs the same trained network in NsDiff-PE mode (sigma_source='g', sigma_Y0 := g), where the chain is "
             "the engine's sample() on the discrete VP path in z = (Y - f)/sqrt(g); `ddpm` there is the PE chain "
             "itself, so `ddpm @ NFE 50` vs the paper row isolates the sigma_source change from the solver change"]
    methods = (NSDIFF_PAPER, NSDIFF_POSTERIOR, *ENGINE)
    return Adapter("timeseries/nsdiff", "CRPS (lower)", NSDIFF_PAPER, 50, methods, train, draw, _forecast_score, notes,
                   calls={NSDIFF_PAPER: 1, NSDIFF_POSTERIOR: 1}, counted=lambda m: [m.network.denoiser])


def _mmsfm(fresh_source: bool = False) -> Adapter:
    """MMSFM on the S-Gaussians with t = 2 held out: W1 at t = 2 of 300 trajectories (``fresh_source``: from 300
    new first-marginal cells drawn by the seed, the fast-preset run; else from the 300 training cells)."""
    import torch

    from scigen.singlecell.data import s_gaussians
    from scigen.singlecell.metrics import marginal_metrics
    from scigen.singlecell.mmsfm.system import MMSFM

    holdout = 2.0
    test = s_gaussians(300, seed=1)
    truth = torch.as_tensor(test.X[test.obs["time"].to_numpy() == holdout], dtype=torch.float64)

    def train(quick: bool):
        model = MMSFM(MMSFM.Config.preset("tiny" if quick else "small", holdout=[holdout],
                                          train={"progress": False, "logger": None}))
        return model.fit(s_gaussians(300, seed=0))

    def draw(model, method, steps, seed):  # to the last observed time t = 6, as the demo; read out at 2 and 6
        if fresh_source:  # 300 new cells of the first marginal per seed: the seed moves the start cells
            src = s_gaussians(300, seed=100 + seed)
            src = src[src.obs["time"].to_numpy() == src.obs["time"].min()].copy()
            return model.trajectories(300, times=[holdout, 6.0], method=method, steps=steps, seed=seed,
                                      source=src)[1]
        return model.trajectories(300, times=[holdout, 6.0], method=method, steps=steps, seed=seed)[1]

    def score(model, states):
        m = marginal_metrics(states[0], truth, generator=torch.Generator().manual_seed(0))
        return m["W1"], {"W2_squared": m["W2_squared"], "MMD_G": m["MMD_G"]}

    notes = ["MMSFM `tiny` preset (triplets, sigma 0.15) on the S-Gaussians (300 cells per time) with t = 2 held "
             "out; W1 at t = 2 between 300 generated and 300 test cells; trajectories integrated from t = 0 to the "
             "last observed t = 6 (a grid point on t = 2)",
             "MMSFM's samplers are its own (trajectory time runs forward between marginals, not a denoising path): "
             "torchdiffeq dopri5 (the paper's, adaptive, rtol = atol = 1e-5, one run, NFE as counted), euler, rk4 "
             "(classical since issue 32; the 3/8 rule, which rk4 meant before, is rk4_38; 4 calls a step) and its "
             "Euler-Maruyama SDE (drift + score network: 2 calls a step); ddpm, ddim, dpmpp_2m, unipc and heun need "
             "a Gaussian denoising path and do not apply (`sample` accepts only dopri5/euler/rk4/rk4_38/"
             "euler_maruyama); `steps` is the system's (fixed steps over t = 0..6, the gaps split "
             "by ceil, hence model_calls a little above the nominal NFE); 100 steps is the system's default"]
    if fresh_source:
        notes.append("fast-preset run: each seed integrates from 300 new cells of the first marginal "
                     "(s_gaussians(300, seed=100 + seed) at t = 0), so the seed moves the start cells and the ODE "
                     "samplers have seed noise; model calls count drift + score network calls")
    return Adapter("singlecell/mmsfm", "W1 at held-out t = 2 (lower)", "dopri5", None,
                   ("dopri5", "euler", "rk4", "euler_maruyama"), train, draw, score, notes,
                   calls={"dopri5": None, "euler_maruyama": 2},
                   counted=lambda m: [m.network.drift, m.network.score], nfes=(10, 20, 50, 100))


def _sbgd() -> Adapter:
    from scigen.graphs.data import spectre_split
    from scigen.graphs.metrics import mmd_spectral
    from scigen.graphs.sbgd import SBGD

    train_graphs, _, test = spectre_split(SBGD.default_data())

    def train(quick: bool):
        model = SBGD(SBGD.Config.preset("tiny", train={"progress": False, "logger": None}))
        return model.fit(train_graphs, max_steps=150 if quick else 400)

    def draw(model, method, steps, seed):
        return model.sample(len(test), method=method, steps=steps, seed=seed,
                            n_nodes=[g.number_of_nodes() for g in test])

    def score(model, graphs):
        return float(mmd_spectral(test, graphs))

    return Adapter("graphs/sbgd", "spectre MMD² (lower)", "euler_maruyama", 50, ENGINE, train, draw, score,
                   counted=lambda m: [m.network.score])


def _d3u() -> Adapter:
    """D3U (tiny preset, PatchTST): every engine method on the residual diffusion, CRPS of the test windows."""
    from scigen.timeseries.d3u.system import D3U

    data = {}
    train = _forecast_trainer(D3U, data)

    def draw(model, method, steps, seed):
        return model.evaluate(data["test"], stride=model.config.horizon, max_windows=24, n_samples=100,
                              method=method, steps=steps, seed=seed)

    notes = ["D3U `tiny` preset (PatchTST forecaster frozen, PatchDN on the residual, T = 100, linear beta to 0.1, "
             "x0 prediction), synthetic non-stationary series, CRPS (standardised) over at most 24 test windows "
             "(stride = horizon) x 100 samples; the wall time is that of `evaluate` (the forecaster's pass included)"]
    return Adapter("timeseries/d3u", "CRPS (lower)", "dpmpp_2m", 20, ENGINE, train, draw, _forecast_score, notes,
                   counted=lambda m: [m.network.denoiser])


def _nowcast() -> Adapter:
    """Nowcast: the demo's shipped checkpoint (no training), flow-ensemble CRPS on the demo's 8 test windows."""
    from scigen.weather.data.synthetic import synthetic_storms
    from scigen.weather.nowcast.demo import CHECKPOINT
    from scigen.weather.nowcast.system import Nowcast

    test = synthetic_storms(8, 25, 32, seed=1)

    def train(quick: bool):
        return Nowcast.load(CHECKPOINT, device="cpu")

    def draw(model, method, steps, seed):
        return model.evaluate(test, max_windows=8, method=method, steps=steps, seed=seed, references=False)

    def score(model, scores):
        return scores["flow/CRPS"], {k: scores[k] for k in ("stage1/CRPS", "persistence/CRPS") if k in scores}

    notes = ["nowcast: the demo's shipped checkpoint (`tiny` network, 1500 steps on 96 synthetic storms, "
             "`demo_checkpoint.py`; nothing is trained here), ensemble CRPS (mm/h) of the flow members "
             "(config.n_members) on the demo's 8 test windows (synthetic_storms(8, 25, 32, seed=1)); the wall time is "
             "that of `evaluate` (stage 1 included)"]
    return Adapter("weather/nowcast", "flow CRPS (lower)", "euler", 10, ("euler", "heun", "rk4"), train, draw,
                   score, notes, counted=lambda m: [m.network.flow] if hasattr(m.network, "flow") else [m.network])


ADAPTERS: dict[str, Callable[[], Adapter]] = {
    "core/toy-fm": lambda: _toy("flow_matching"),
    "core/toy-diffusion": lambda: _toy("diffusion"),
    "placement/diffusion": _placement,
    "molecules/unigem": lambda: _molecules("UniGEM"),
    "molecules/edm": lambda: _molecules("EDM"),
    "timeseries/nsdiff": _nsdiff,
    "singlecell/mmsfm": _mmsfm,
    "singlecell/mmsfm-fresh": lambda: _mmsfm(fresh_source=True),
    "graphs/sbgd": _sbgd,
    "timeseries/d3u": _d3u,
    "weather/nowcast": _nowcast,
}

#: the fast-preset run (``bench_system_samplers.py --fast``): per system, the paper's sampler as
#: ``(label, steps)`` (``steps`` None: the system's own count, e.g. all T) and the candidates, each drawn with
#: every seed of ``FAST_SEEDS``; the chosen ``fast`` preset is the cheapest candidate within seed noise (at equal
#: model calls the one listed first: candidates that keep the paper's method come first)
FAST: dict[str, dict] = {
    "core/toy-fm": {"paper": ("heun", 20), "candidates": [("euler", 4), ("heun", 3), ("euler", 10), ("heun", 5),
                                                          ("heun", 10), ("dpmpp_2m", 10)]},
    "core/toy-diffusion": {"paper": ("dpmpp_2m", 20), "candidates": [("dpmpp_2m", 5), ("unipc", 5), ("ddim", 10),
                                                                     ("dpmpp_2m", 10), ("unipc", 10)]},
    "timeseries/nsdiff": {"paper": (NSDIFF_PAPER, 50), "candidates": [
        (NSDIFF_PAPER, 10), (NSDIFF_PAPER, 20), ("ddpm", 10), ("ddpm", 20), ("euler_maruyama", 10)]},
    "singlecell/mmsfm-fresh": {"paper": ("dopri5", None), "candidates": [("rk4", 3), ("rk4", 5), ("rk4", 12), ("euler", 20),
                                                                   ("euler", 50)]},
    "graphs/sbgd": {"paper": ("euler_maruyama", 1000), "candidates": [
        ("euler_maruyama", 50), ("euler_maruyama", 200), ("ddpm", 50), ("ddpm", 200), ("heun", 25)]},
    "timeseries/d3u": {"paper": ("dpmpp_2m", 20), "candidates": [("dpmpp_2m", 5), ("unipc", 5), ("dpmpp_2m", 10),
                                                                 ("ddim", 10)]},
    "molecules/unigem": {"paper": ("ddpm", None), "candidates": [
        ("ddpm", 50), ("ddpm", 100), ("ddim", 50), ("dpmpp_2m", 20), ("dpmpp_2m", 50), ("unipc", 20), ("unipc", 50),
        ("heun", 10), ("heun", 25)]},
    "molecules/edm": {"paper": ("ddpm", None), "candidates": [
        ("ddpm", 50), ("ddpm", 100), ("ddpm", 200), ("dpmpp_2m", 50), ("unipc", 50), ("heun", 25),
        ("euler_maruyama", 100)]},
    "placement/diffusion": {"paper": ("ddpm", 1000), "candidates": [
        ("ddpm", 50), ("ddpm", 100), ("ddim", 20), ("ddim", 50), ("dpmpp_2m", 20), ("unipc", 20)]},
    "weather/nowcast": {"paper": ("euler", 10), "candidates": [("euler", 2), ("euler", 4), ("heun", 2), ("euler", 6),
                                                          ("heun", 3), ("euler", 8), ("heun", 4)]},
}
