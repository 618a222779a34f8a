"""``placement/diffusion``: zero-shot macro placement with a guided diffusion model.

ChipDiffusion (Lee et al., "Chip Placement with Diffusion Models", ICML 2025):

* **model**: the AttGNN denoiser (:mod:`.model`) predicts the noise ``eps`` of the object centres on the
  [-1, 1]² canvas under the cosine path ``x_t = cos(pi t/2) x0 + sin(pi t/2) eps`` (t = 0 data);
* **training** (§4.1): synthetic circuits (:mod:`scigen.placement.synthetic`); each step draws one
  circuit and ``copies`` independent (t, eps); eps-MSE over non-port objects (ports stay clean);
* **guided sampling** (§4.3): DDPM ancestral steps on the x0 estimate clipped to the canvas; at every
  step ``inner_steps`` Adam steps on ``w·HPWL/p + alpha·L_legal`` (``p`` pins per movable object)
  refine it (``scigen.core.guidance.cost_gradient``), with ``alpha = 0`` while ``t > dual_t_max`` and
  dual ascent toward a target overlap after; fixed objects are restored
  (``scigen.core.guidance.inpainting``). See :meth:`DiffusionPlacer._guidance`;
* **legalisation** (§4.4): :func:`scigen.placement.legalize.legalize` on ``alpha·L_legal + w_l·HPWL/p``
  with rising sharpness (the same objective).

Netlists with standard cells are placed macro-only (§5.2): macros are placed, every other object keeps
its position.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn
from torch.utils.data import DataLoader, Dataset

from scigen.core.errors import InvalidInputError
from scigen.core.system import DemoResult, System, torch_threads, write_report
from scigen.core.system.base import Stopwatch
from scigen.placement.bookshelf import read_bookshelf, write_bookshelf
from scigen.placement.diffusion.config import DiffusionPlacerConfig
from scigen.placement.diffusion.model import AttGNN, GraphInputs
from scigen.placement.legalize import LegalizerConfig, legalize
from scigen.placement.macro_only import macro_only, merge_macro_positions
from scigen.placement.metrics import evaluate_placement
from scigen.placement.netlist import Netlist
from scigen.placement.potentials import Potentials
from scigen.placement.synthetic import SynthConfig, generate_netlist

__all__ = ["DiffusionPlacer", "check_feasible", "place"]

T_EPS = 1e-4


def _path():
    from scigen.core.paths import VPCosine

    return VPCosine(s=0.0)


def check_feasible(nl: Netlist) -> None:
    """Raise :class:`InvalidInputError` when the movable objects cannot fit: their total area exceeds
    the canvas area left by the fixed objects inside it (reported, never looped on)."""
    canvas_area = nl.chip_size[0] * nl.chip_size[1]
    fixed_area = float(nl.size[nl.fixed & ~nl.is_port].prod(1).sum())
    movable_area = float(nl.size[~nl.fixed & ~nl.is_port].prod(1).sum())
    if movable_area > canvas_area - fixed_area:
        raise InvalidInputError(
            f"netlist {nl.name!r} is infeasible: movable area {movable_area:.6g} exceeds the free canvas area "
            f"{canvas_area - fixed_area:.6g} (canvas {canvas_area:.6g} minus fixed {fixed_area:.6g})")
    big = np.nonzero(~nl.fixed & ((nl.size[:, 0] > nl.chip_size[0]) | (nl.size[:, 1] > nl.chip_size[1])))[0]
    if big.size:
        i = int(big[0])
        raise InvalidInputError(f"netlist {nl.name!r}: object {nl.names[i]!r} {nl.size[i].tolist()} is larger "
                                f"than the canvas {list(nl.chip_size)}")


class _Circuit:
    """A training circuit: graph inputs, clean centres x0 [V, 2], port mask."""

    def __init__(self, nl: Netlist) -> None:
        g = nl.to_graph()
        self.graph = GraphInputs.from_graph(g)
        self.x0 = g.pos
        self.port = g.is_ports | g.is_fixed


class _Circuits(Dataset):
    def __init__(self, circuits: list[_Circuit]) -> None:
        self.circuits = circuits

    def __len__(self) -> int:
        return len(self.circuits)

    def __getitem__(self, i: int) -> _Circuit:
        return self.circuits[i]


def _first(batch):
    return batch[0]


def _as_netlists(data, what: str) -> list[Netlist]:
    if isinstance(data, Netlist):
        return [data]
    if isinstance(data, (list, tuple)) and data and all(isinstance(d, Netlist) for d in data):
        return list(data)
    raise InvalidInputError(f"{what} must be a Netlist or a non-empty list of Netlists, got {type(data).__name__}")


class DiffusionPlacer(System):
    """Guided diffusion macro placer (module docstring)."""

    domain = "placement"
    name = "diffusion"
    description = "ChipDiffusion: zero-shot macro placement by guided diffusion (ICML 2025)."
    Config = DiffusionPlacerConfig

    def build_network(self) -> nn.Module:
        c = self.config
        torch.manual_seed(c.seed)
        return AttGNN(hidden=c.hidden, n_blocks=c.n_blocks, gnn_layers=c.gnn_layers, heads=c.heads,
                      att_heads=c.att_heads)

    # ------------------------------------------------------------------ training
    def loss(self, net: nn.Module, circuit: _Circuit) -> Tensor:
        """eps-MSE over non-port coordinates of ``copies`` noisy copies of one circuit."""
        b = self.config.copies
        dev = next(net.parameters()).device
        x0 = circuit.x0.to(dev).expand(b, -1, -1)
        port = circuit.port.to(dev)
        t = torch.rand(b, device=dev) * (1 - 2 * T_EPS) + T_EPS
        eps = torch.randn_like(x0)
        path = _path()
        xt = path.alpha(t)[:, None, None] * x0 + path.sigma(t)[:, None, None] * eps
        xt = torch.where(port[None, :, None], x0, xt)
        pred = net(xt, t, circuit.graph.to(dev))
        keep = (~port).to(pred.dtype)[None, :, None]
        return ((pred - eps) ** 2 * keep).sum() / (keep.sum() * 2 * b).clamp_min(1.0)

    def fit(self, data=None, *, max_steps: int | None = None, **options: Any) -> DiffusionPlacer:
        """Train on netlists (default: ``train_circuits`` synthetic ones); options go to ``scigen.core.train.fit``."""
        from scigen.core.train import fit

        nls = self.default_data() if data is None else _as_netlists(data, "data")
        circuits = [_Circuit(macro_only(nl)[0] if (~nl.is_macro & ~nl.is_port).any() else nl) for nl in nls]
        loader = DataLoader(_Circuits(circuits), batch_size=1, shuffle=True, collate_fn=_first,
                            generator=torch.Generator().manual_seed(self.config.seed))
        options.setdefault("lr", self.config.lr)
        options.setdefault("ema_decay", self.config.ema_decay)
        options.setdefault("seed", self.config.seed)
        options.setdefault("optimizer", "adam")
        options.setdefault("progress", False)
        t0 = time.perf_counter()
        result = fit(self.network, self.loss, loader, max_steps=max_steps or self.config.max_steps, **options)
        self.metadata["train_seconds"] = float(self.metadata.get("train_seconds", 0.0)) + time.perf_counter() - t0
        self.network = result.module
        self.metadata["trained_steps"] = int(self.metadata.get("trained_steps", 0)) + int(result.steps)
        self.metadata["final_loss"] = float(np.mean(result.losses[-20:])) if result.losses else None
        self.metadata["train_objects"] = int(np.mean([c.x0.shape[0] for c in circuits]))
        return self

    # ------------------------------------------------------------------ sampling
    def _guidance(self, pot: Potentials, fixed: Tensor, known: Tensor, b: int):
        """The denoiser transforms of guided sampling, innermost first:

        1. clip the x0 estimate to ``[-clip_x0, clip_x0]`` (the canvas is [-1, 1]²). Near ``t = 1`` the eps
           -> x0 conversion divides by ``alpha(t) ~ 1e-4`` and amplifies the model's error ~1e4-fold;
           unclipped, the DDPM chain leaves the canvas and never returns (the paper instead clamps
           ``x_t`` to [-2, 2] after every step);
        2. cost-gradient guidance (``scigen.core.guidance.cost_gradient``): ``inner_steps`` Adam steps on
           ``w·HPWL(x̂0)/p + alpha·L_legal(x̂0)`` (``p`` pins per movable object). For ``t > dual_t_max``
           ``alpha`` stays 0 (wirelength only); for ``t <= dual_t_max`` it follows dual ascent toward
           ``dual_target`` (the paper's ``alpha_critical_factor``; ``DualAscent(t_range=(0, dual_t_max))``);
        3. inpainting of fixed objects and ports.
        """
        from scigen.core.guidance import DualAscent, cost_gradient, inpainting, static_threshold

        c = self.config
        transforms = []
        if c.clip_x0 is not None:
            transforms.append(static_threshold(float(c.clip_x0)))
        if c.guidance:
            ppo = pot.pins_per_object

            def wirelength(x: Tensor) -> Tensor:
                return pot.hpwl(x, c.guidance_gamma) / ppo

            def legality(x: Tensor) -> Tensor:
                return pot.legality(x, c.legality_sharpness)

            dual = DualAscent(c.dual_target, c.dual_step, c.alpha_max, t_range=(0.0, float(c.dual_t_max)))
            transforms.append(cost_gradient(wirelength, constraint=legality, weight=c.hpwl_weight, alpha=0.0,
                                            dual_ascent=dual, inner_steps=c.inner_steps, lr=c.guidance_lr))
        mask = fixed[None, :, None].expand(b, -1, 2)
        transforms.append(inpainting(mask, known[None].expand(b, -1, -1)))
        return transforms

    @torch.no_grad()
    def sample_positions(self, nl: Netlist, n: int = 1, *, steps: int | None = None, legalize_steps: int | None = None,
                         generator: torch.Generator | None = None) -> tuple[Tensor, dict]:
        """``n`` placements ``[n, V, 2]`` (normalised centres) of ``nl`` (all objects), guided and legalised."""
        from scigen.core.samplers import sample

        c = self.config
        g = nl.to_graph()
        graph = GraphInputs.from_graph(g)
        pot = Potentials.from_graph(g)
        fixed = g.is_fixed | g.is_ports
        known = g.pos
        if generator is None:
            generator = torch.Generator().manual_seed(c.seed)
        net = self.network.eval()

        def model_fn(x, t):
            return net(torch.where(fixed[None, :, None], known, x), t, graph)

        steps = steps or c.sample_steps
        times = torch.linspace(1 - T_EPS, 0.0, steps + 1)
        x1 = torch.randn(n, nl.num_objects, 2, generator=generator)
        t0 = time.perf_counter()
        x = sample(model_fn, x1, times, path=_path(), prediction="eps", method="ddpm",
                   guidance=self._guidance(pot, fixed, known, n), generator=generator, progress=False)
        x = pot.pin(x.clamp(-2, 2))
        t1 = time.perf_counter()
        lsteps = c.legalize_steps if legalize_steps is None else legalize_steps
        info = {"sample_seconds": t1 - t0, "x_guided": x}
        if lsteps > 0:
            with torch.enable_grad():
                x, linfo = legalize(x, pot, self.legalizer_config(lsteps))
            info.update(legalize_steps=linfo["steps"], legalize_seconds=time.perf_counter() - t1)
        return x, info

    def legalizer_config(self, steps: int | None = None) -> LegalizerConfig:
        """The legaliser settings of this placer (also what the benchmark's analytical baseline uses)."""
        c = self.config
        return LegalizerConfig(steps=c.legalize_steps if steps is None else steps, lr=c.legalize_lr,
                               hpwl_weight=c.legalize_hpwl_weight)

    def place(self, nl: Netlist, *, n: int | None = None, steps: int | None = None,
              legalize_steps: int | None = None, seed: int | None = None) -> tuple[Netlist, dict[str, float]]:
        """Place ``nl`` (macro-only when it has standard cells): ``(placed netlist, metrics)``.

        Of ``n`` samples (default ``num_samples``) the legal one (legality >= 0.99) with the lowest HPWL
        is kept. Metrics: ``hpwl``, ``macro_hpwl``, ``legality``, ``overlap`` in chip units, ``seconds``, and
        ``sample_seconds`` / ``legalize_seconds`` / ``legalize_steps`` of the sampling and legalisation, and
        ``hpwl_guided`` / ``legality_guided``: the kept sample before legalisation.
        """
        if not isinstance(nl, Netlist):
            raise InvalidInputError(f"netlist must be a scigen.placement.Netlist, got {type(nl).__name__}")
        check_feasible(nl)
        t0 = time.perf_counter()
        has_cells = bool((~nl.is_macro & ~nl.is_port).any())
        sub, keep = macro_only(nl) if has_cells else (nl, np.arange(nl.num_objects))
        if sub.num_objects == 0:
            raise InvalidInputError(f"netlist {nl.name!r} has no macros to place")
        gen = torch.Generator().manual_seed(self.config.seed if seed is None else seed)
        xs, info = self.sample_positions(sub, n or self.config.num_samples, steps=steps,
                                         legalize_steps=legalize_steps, generator=gen)
        guided = info.pop("x_guided")
        best, best_key, best_i = None, None, 0
        for i, x in enumerate(xs):
            cand = sub.with_positions(sub.denormalize_pos(x))
            m = evaluate_placement(cand)
            key = (m["legality"] < 0.99, m["hpwl"])
            if best_key is None or key < best_key:
                best, best_key, best_i = cand, key, i
        out = merge_macro_positions(nl, best, keep) if has_cells else best
        metrics = evaluate_placement(out)
        pre = evaluate_placement(sub.with_positions(sub.denormalize_pos(guided[best_i])))
        metrics["hpwl_guided"], metrics["legality_guided"] = pre["hpwl"], pre["legality"]
        metrics["seconds"] = time.perf_counter() - t0
        metrics.update({k: float(v) for k, v in info.items()})
        return out, metrics

    def sample(self, netlist: Netlist, n: int | None = None, **kw) -> Netlist:
        """The placed netlist (see :meth:`place`)."""
        return self.place(netlist, n=n, **kw)[0]

    def evaluate(self, data, **kw) -> dict[str, float]:
        """Mean ``hpwl``, ``macro_hpwl``, ``legality``, ``overlap``, ``seconds`` and ``hpwl_ratio`` (placed
        HPWL over the HPWL of the netlist's own placement) over circuits."""
        rows = []
        for nl in _as_netlists(data, "data"):
            ref = evaluate_placement(nl)["hpwl"]
            _, m = self.place(nl, **kw)
            m["hpwl_ratio"] = m["hpwl"] / ref if ref > 0 else math.nan
            rows.append(m)
        return {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}

    # ------------------------------------------------------------------ CLI hooks
    @classmethod
    def default_data(cls, quick: bool = False, n: int | None = None, objects: int | None = None,
                     seed: int = 0) -> list[Netlist]:
        cfg = cls.Config()
        n = n or (8 if quick else cfg.train_circuits)
        objects = objects or (12 if quick else cfg.train_objects)
        return [generate_netlist(seed + i, SynthConfig.for_size(objects)) for i in range(n)]

    @classmethod
    def read_data(cls, path: str | os.PathLike) -> list[Netlist]:
        """A Bookshelf ``.aux`` file, or a directory searched recursively for ``.aux`` files."""
        p = Path(path)
        if p.is_file():
            return [read_bookshelf(p)]
        auxes = sorted(p.rglob("*.aux")) if p.is_dir() else []
        if not auxes:
            raise InvalidInputError(f"{p}: expected a .aux file or a directory containing .aux files")
        return [read_bookshelf(a) for a in auxes]

    def write_samples(self, samples, path: str | os.PathLike) -> Path:
        """Write a placed netlist (or a list) as Bookshelf into the directory ``path``."""
        out = Path(path)
        nls = [samples] if isinstance(samples, Netlist) else list(samples)
        for i, nl in enumerate(nls):
            write_bookshelf(nl, out if len(nls) == 1 else out / f"{i:03d}")
        return out

    def sample_for_cli(self, n: int, seed: int):
        nl = generate_netlist(10_000 + seed, SynthConfig.for_size(self.metadata.get("train_objects", 20)))
        return [self.place(nl, seed=seed + i)[0] for i in range(max(1, min(int(n), 16)))]

    @classmethod
    def extra_cli_commands(cls, app) -> None:
        import typer

        @app.command("place")
        def place_cmd(
            run: Path = typer.Option(..., "--run", help="Run directory written by train."),
            netlist: Path = typer.Option(..., "--netlist", help="Bookshelf .aux file."),
            out: Path = typer.Option(..., "--out", help="Output directory (Bookshelf + placement.png + metrics.json)."),
            samples: int = typer.Option(1, "--samples", help="Samples to draw; the best legal one is kept."),
            steps: int = typer.Option(0, "--steps", help="Sampling steps (0: the config's)."),
            seed: int = typer.Option(0, "--seed"),
        ) -> None:
            """Place a Bookshelf netlist with a trained run; write Bookshelf, a plot and metrics."""
            import json

            from scigen.placement.plot import plot_placement

            try:
                model = cls.load(run)
                nl = read_bookshelf(netlist)
                placed, metrics = model.place(nl, n=samples, steps=steps or None, seed=seed)
            except (ValueError, FileNotFoundError) as exc:
                typer.echo(f"error: {exc}", err=True)
                raise typer.Exit(2) from None
            write_bookshelf(placed, out)
            plot_placement(placed, out / "placement.png", title=f"{nl.name}: HPWL {metrics['hpwl']:.4g}, "
                           f"legality {metrics['legality']:.4f}")
            (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
            for k, v in metrics.items():
                typer.echo(f"{k}\t{v:.6g}")

    @classmethod
    def demo(cls, out_dir: str | os.PathLike, *, quick: bool = False) -> DemoResult:
        """Train a small model on synthetic circuits for about half a minute (quick: a few seconds), place a
        held-out circuit and compare its HPWL with the random-legal and analytical baselines (the latter
        through the same legaliser); ``placement.png`` shows the three placements side by side."""

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        with torch_threads(1):  # small networks: several threads were many times slower on a shared machine
            return cls._demo(out, quick)

    @classmethod
    def _demo(cls, out: Path, quick: bool) -> DemoResult:
        from scigen.placement.baselines import analytical, random_legal
        from scigen.placement.plot import plot_placements

        with Stopwatch() as sw:
            objects = 12 if quick else 20
            cfg = DiffusionPlacerConfig.preset("tiny" if quick else "small", copies=16, lr=2e-3, ema_decay=None,
                                               sample_steps=30 if quick else 100, legalize_steps=1500)
            model = cls(cfg)
            model.fit(cls.default_data(n=16 if quick else 48, objects=objects), max_steps=60 if quick else 200)
            test = generate_netlist(10_000, SynthConfig.for_size(objects), name="heldout")
            placed, m = model.place(test)
            rand, mr = random_legal(test, seed=0)
            anal, ma = analytical(test, seed=0, legalizer=model.legalizer_config())
            plot_placements([(placed, f"diffusion: HPWL {m['hpwl']:.4g}, legality {m['legality']:.3f}"),
                             (anal, f"analytical: HPWL {ma['hpwl']:.4g}, legality {ma['legality']:.3f}"),
                             (rand, f"random legal: HPWL {mr['hpwl']:.4g}")], out / "placement.png")
            write_bookshelf(placed, out / "placed")
            model.save(out / "model")
        metrics = {"hpwl": m["hpwl"], "legality": m["legality"], "overlap": m["overlap"],
                   "hpwl_before_legalisation": m["hpwl_guided"], "hpwl_random_legal": mr["hpwl"],
                   "hpwl_analytical": ma["hpwl"], "legality_analytical": ma["legality"],
                   "hpwl_reference": evaluate_placement(test)["hpwl"], "seconds_diffusion": m["seconds"],
                   "seconds_analytical": ma["seconds"], "train_seconds": model.metadata["train_seconds"],
                   "final_train_loss": model.metadata.get("final_loss")}
        report = write_report(out, {"system": cls.key(), "config": model.config.model_dump(), "metrics": metrics,
                                    "seconds": sw.seconds,
                                    "note": "HPWL in chip units (canvas 1000 x 1000) of a held-out synthetic circuit; "
                                            "legality = union area inside the canvas / total area; analytical = "
                                            "quadratic wirelength + the same legaliser; hpwl_reference = the "
                                            "generator's own placement"})
        return DemoResult(metrics=metrics, files=[report, out / "placement.png", out / "placed", out / "model"],
                          seconds=sw.seconds)


def place(netlist: Netlist, model: DiffusionPlacer | str | os.PathLike | None = None, **kw) -> tuple[Netlist, dict]:
    """Place ``netlist`` with a trained :class:`DiffusionPlacer` (an instance or a saved run directory).

    Returns ``(placed netlist, metrics)``; see :meth:`DiffusionPlacer.place`.
    """
    if model is None:
        raise InvalidInputError("place() needs a trained model: a DiffusionPlacer or the directory of a saved run")
    if not isinstance(model, DiffusionPlacer):
        model = DiffusionPlacer.load(model)
    return model.place(netlist, **kw)
