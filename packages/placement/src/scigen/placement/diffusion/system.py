"""``placement/diffusion``: zero-shot macro placement with a guided diffusion model.

ChipDiffusion (Lee et al., "Chip Placement with Diffusion Models", ICML 2025):

* **model**: the AttGNN denoiser (:mod:`.model`) predicts the noise of the object centres on the [-1, 1]²
  canvas (cosine path; :mod:`.process` binds it to the engine's ``Diffusion``);
* **training** (§4.1): synthetic circuits (:mod:`scigen.placement.synthetic`); each step draws one circuit and
  ``copies`` independent (t, eps); eps-MSE over movable objects (ports and fixed objects held clean);
* **guided sampling** (§4.3): DDPM steps with cost-gradient guidance on ``w·HPWL/p + alpha·L_legal`` and
  inpainting of fixed objects (:func:`.process.guidance_transforms`);
* **legalisation** (§4.4): :func:`scigen.placement.legalize.legalize` on the same objective.

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

from scigen.core.deprecation import warn_renamed
from scigen.core.errors import InvalidInputError
from scigen.core.generative import Diffusion
from scigen.core.log import get_logger
from scigen.core.samplers import check_method
from scigen.core.system import DemoResult, System
from scigen.core.validation import check_count
from scigen.placement.diffusion import inputs
from scigen.placement.diffusion.config import DiffusionPlacerConfig
from scigen.placement.diffusion.process import Circuit, guidance_transforms, placement_process
from scigen.placement.legalize import LegalizerConfig, legalize
from scigen.placement.metrics import evaluate_placement
from scigen.placement.netlist import Netlist
from scigen.placement.refine import quadratic_descent
from scigen.placement.synthetic import SyntheticNetlists

__all__ = ["DiffusionPlacer", "check_feasible", "place"]

check_feasible = inputs.check_feasible


class DiffusionPlacer(System):
    """Guided diffusion macro placer (module docstring)."""

    domain = "placement"
    name = "diffusion"
    description = "ChipDiffusion: zero-shot macro placement by guided diffusion (ICML 2025)."
    Config = DiffusionPlacerConfig

    def build_network(self) -> nn.Module:
        from scigen.placement.diffusion.model import AttGNN

        c = self.config
        return AttGNN(hidden=c.hidden, n_blocks=c.n_blocks, gnn_layers=c.gnn_layers, heads=c.heads,
                      att_heads=c.att_heads)

    @property
    def process(self) -> Diffusion:
        """The network bound to the cosine path, eps prediction and the configured sampler."""
        return placement_process(self.network, method=self.config.method, steps=self.config.steps)

    # ------------------------------------------------------------------ training
    def fit(self, data=None, *, max_steps: int | None = None, **options: Any) -> DiffusionPlacer:
        """Train on netlists (default: ``train_circuits`` synthetic circuits of ``train_objects`` objects);
        ``options`` override ``config.train`` for this call (``scigen.core.system.TrainingOptions``)."""
        if data is None:
            data = SyntheticNetlists(self.config.train_circuits, self.config.train_objects)
        return super().fit(data, max_steps=max_steps, **options)

    def prepare_data(self, data, *, role: str) -> inputs.CircuitDataset:
        """Netlists (macro-only when they have standard cells) as circuits on the network's device, built
        lazily (a list is checked at once; synthetic circuits are generated when first drawn)."""
        nls = inputs.as_netlists(data, role)
        ds = inputs.CircuitDataset(nls, self.device, role)
        if isinstance(nls, SyntheticNetlists):
            sizes = [nls.objects]
        else:
            sizes = [ds.view(i).sub.num_objects for i in range(len(nls))]
        if role == "data":
            self.metadata["train_objects"] = int(np.mean(sizes))
        return ds

    def fit_options(self) -> dict[str, Any]:
        return {"collate_fn": list}

    def training_budget(self) -> str:
        """The CLI's budget note: a step is ``batch_size`` circuits, each as ``copies`` noisy copies."""
        b = self.training_options().batch_size
        return f"batch of {b} circuit{'s' if b != 1 else ''} x {self.config.copies} noisy copies"

    def training_loss(self, network: nn.Module, batch: list[Circuit]) -> Tensor:
        """The eps-MSE of ``copies`` noisy copies of each circuit of the batch (paper: one circuit a step),
        averaged over circuits."""
        from scigen.core import streams

        process = self.process
        device = next(network.parameters()).device  # circuits are built on the CPU; Lightning moves them
        cur, copies = streams.current_streams(), self.config.copies
        losses = []
        for i, c in enumerate(batch):
            # per-sample streams (fit(rng="per_sample")): copy j of the circuit with key k draws from key k·2^20 + j
            keyed = None if cur is None else cur.children(torch.full((copies,), i), torch.arange(copies))
            with streams.sample_streams(keyed):
                losses.append(c.to(device).loss(process, network, copies))
        return torch.stack(losses).mean()

    # ------------------------------------------------------------------ sampling
    @torch.no_grad()
    def sample_positions(self, nl: Netlist, n: int = 1, *, method: str | None = None, steps: int | None = None,
                         legalize_steps: int | None = None, seed: int | None = None,
                         progress: bool | None = None, keys: Tensor | None = None) -> tuple[Tensor, dict]:
        """``n`` placements ``[n, V, 2]`` (normalised centres) of ``nl`` (all objects), guided and legalised.

        Placement ``i`` draws from its own stream keyed by ``(seed, keys[i])`` (default ``keys = 0..n-1``;
        :class:`~scigen.core.streams.SampleStreams`): its prior draw and the sampler's noise. The guided sampler
        runs one placement at a time (a batch of one: CPU matrix kernels round the rows of batches of fewer than
        four differently, and the legaliser's stopping test turns a 1e-7 difference into another placement); the
        legaliser runs batched with keyed jitter and a per-placement stop (``legalize(keys=)``: elementwise Adam,
        per-placement costs). So placement ``i`` is the same, to the bit, whatever else is drawn with it."""
        from scigen.core.streams import SampleStreams

        n = check_count(n, "n_samples")
        steps = None if steps is None else check_count(steps, "steps")
        lsteps = self.config.legalize_steps if legalize_steps is None else int(legalize_steps)
        if lsteps < 0:
            raise InvalidInputError(f"legalize_steps must be >= 0, got {lsteps}")
        keys = torch.arange(n) if keys is None else torch.as_tensor(keys).cpu()
        if keys.shape != (n,):
            raise InvalidInputError(f"keys must be [{n}] (one sample index per placement), got {tuple(keys.shape)}")
        seed = self.generator(seed).initial_seed()  # the one seed rule (None: config.train.seed), checked
        circuit = Circuit(nl, self.device)
        t0 = time.perf_counter()
        method = check_method(method, allow_none=True)
        x = torch.cat([circuit.sample(self.process, guidance_transforms(self.config, circuit, 1), 1,
                                      generator=SampleStreams(seed, keys[i:i + 1].to(self.device)), steps=steps,
                                      method=method, progress=progress) for i in range(n)])
        t1 = time.perf_counter()
        info = {"sample_seconds": t1 - t0, "x_guided": x}
        c = self.config
        if c.refine_steps > 0:  # ours, not ChipDiffusion's: see refine.py and the config
            refined = quadratic_descent(x, circuit.potentials, steps=c.refine_steps, lr=c.refine_lr,
                                        spread=c.refine_spread)
            x = torch.cat([x, refined])
        if lsteps > 0:
            with torch.enable_grad():
                x, linfo = legalize(x, circuit.potentials, self.legalizer_config(lsteps),
                                    keys=torch.cat([keys, keys]) if c.refine_steps > 0 else keys)
            info.update(legalize_steps=linfo["steps"], legalize_seconds=time.perf_counter() - t1)
        if c.refine_steps > 0:
            x, info["refined_kept"] = _better_of_pairs(nl, x[:n], x[n:])
        return x, info

    def legalizer_config(self, steps: int | None = None) -> LegalizerConfig:
        """The legaliser settings of this placer (also what the benchmark's analytical baseline uses)."""
        c = self.config
        return LegalizerConfig(steps=c.legalize_steps if steps is None else steps, lr=c.legalize_lr,
                               hpwl_weight=c.legalize_hpwl_weight)

    def _draw(self, nl: Netlist, n: int, *, devices: int = 1, **kw) -> tuple[inputs.MacroView, Tensor, dict]:
        self.require_trained("sample")
        view = inputs.MacroView(nl)
        check_feasible(nl)
        if devices == 1 and not isinstance(devices, bool):
            xs, info = self.sample_positions(view.sub, n, **kw)
            return view, xs, info
        from scigen.core.system.sharded import sample_in_shards

        xs = sample_in_shards(lambda keys: self.sample_positions(view.sub, len(keys), keys=keys, **kw)[0], n,
                              devices=devices)
        return view, xs, {}

    def sample_draw(self, *, netlist: Netlist | None = None, method: str | None = None, steps: int | None = None,
                    seed: int | None = None, legalize_steps: int | None = None):
        """``draw(keys)`` for :meth:`~scigen.core.system.base.System.sample_to`: placement ``i`` of
        :meth:`sample` as ``lower_left`` ``[m, V, 2]`` (chip units, the ``.pl`` corners of every object of
        ``netlist``, in ``netlist.names`` order; fixed objects and standard cells keep theirs):
        ``model.sample_to("placements", 1000, netlist=nl, devices=4, chunk_size=8)`` writes one folder of
        ``.npy`` files. ``netlist=None``: the CLI's held-out synthetic circuit (:meth:`sample_for_cli`)."""
        self.require_trained("sample")
        if netlist is None:
            netlist = self._cli_netlist(self.sample_seed(seed))
        check_feasible(netlist)
        view = inputs.MacroView(netlist)
        kw = dict(method=method, steps=steps, seed=seed, legalize_steps=legalize_steps, progress=False)

        def draw(keys: Tensor) -> dict[str, Tensor]:
            xs = self.sample_positions(view.sub, len(keys), keys=keys, **kw)[0]
            return {"lower_left": torch.from_numpy(np.stack([view.merged(view.placed(x)).lower_left for x in xs]))}

        return draw

    def place(self, nl: Netlist, *, best_of: int | None = None, method: str | None = None, steps: int | None = None,
              seed: int | None = None, legalize_steps: int | None = None,
              progress: bool | None = None) -> tuple[Netlist, dict[str, float]]:
        """Place ``nl`` (macro-only when it has standard cells): ``(placed netlist, metrics)``.

        Of ``best_of`` samples (default ``config.best_of``) the legal one (legality >= 0.99) with the lowest
        HPWL is kept; ``method``, ``steps``, ``legalize_steps``, ``seed``, ``progress`` as in :meth:`sample`. Metrics:
        ``hpwl``, ``macro_hpwl``, ``legality``, ``overlap`` in chip units, ``seconds``, and ``sample_seconds`` /
        ``legalize_seconds`` / ``legalize_steps`` of the sampling and legalisation, and ``hpwl_guided`` /
        ``legality_guided``: the kept sample before legalisation.
        """
        t0 = time.perf_counter()
        kw = dict(method=method, steps=steps, seed=seed, legalize_steps=legalize_steps, progress=progress)
        view, xs, info = self._draw(nl, self.config.best_of if best_of is None else check_count(best_of, "best_of"), **kw)
        guided = info.pop("x_guided")
        i, best = view.best(xs)
        metrics = evaluate_placement(view.merged(best))
        pre = evaluate_placement(view.placed(guided[i]))
        metrics["hpwl_guided"], metrics["legality_guided"] = pre["hpwl"], pre["legality"]
        metrics["seconds"] = time.perf_counter() - t0
        metrics.update({k: float(v) for k, v in info.items()})
        return view.merged(best), metrics

    def sample(self, netlist: Netlist, n_samples: int | None = None, *, best_of: int | None = None,
               method: str | None = None, steps: int | None = None, seed: int | None = None,
               legalize_steps: int | None = None, progress: bool | None = None, devices: int = 1) -> list[Netlist]:
        """A list of ``n_samples`` (default 1) placed netlists of ``netlist``, guided and legalised, drawn as
        one batch (always a list: one return type per verb). The best legal placement of ``k`` samples and
        its metrics come from :meth:`place` (``best_of=k``).

        ``method``: an engine sampler (default the paper's ``ddpm``); ``steps``: its step count (default
        ``config.steps``); ``seed``: the generator's seed (default ``config.train.seed``). ``best_of=k`` is
        deprecated here (it used to return one ``Netlist``): it now gives ``[best]``; use ``place``.

        Placement ``i`` draws from its own stream keyed by ``(seed, i)`` (:class:`~scigen.core.streams.SampleStreams`:
        prior and sampler noise; the legaliser's jitter keyed by ``i`` too, and each placement stops legalising on its
        own, :meth:`sample_positions`), so the first ``k`` of ``n`` placements are ``sample(k)`` and ``devices=N``
        splits the placements over ``N`` processes (Lightning Fabric,
        :func:`~scigen.core.system.sharded.sample_in_shards`; call it under ``if __name__ == "__main__"``) with the
        same result. :meth:`place` keys its candidate ``j`` by ``j`` the same way.
        """
        kw = dict(method=method, steps=steps, seed=seed, legalize_steps=legalize_steps, progress=progress)
        if best_of is not None:
            if n_samples is not None:
                raise InvalidInputError("give n_samples= (a list of placements) or best_of= (the best one), not both")
            if devices != 1:
                raise InvalidInputError("devices= splits n_samples over processes; best_of= (deprecated) draws on one")
            warn_renamed("DiffusionPlacer.sample(netlist, best_of=k) (now a list [best])",
                         "DiffusionPlacer.place(netlist, best_of=k), which returns (best, metrics)")
            return [self.place(netlist, best_of=best_of, **kw)[0]]
        view, xs, _ = self._draw(netlist, 1 if n_samples is None else check_count(n_samples, "n_samples"),
                                 devices=devices, **kw)
        return [view.merged(view.placed(x)) for x in xs]

    def example_condition(self, data) -> tuple:
        """``(netlist,)``: the first circuit of ``data`` (what ``sample`` takes first)."""
        return (inputs.as_netlists(data, "data")[0],)

    def evaluate(self, data, *, best_of: int | None = None, method: str | None = None, steps: int | None = None,
                 seed: int | None = None, legalize_steps: int | None = None,
                 progress: bool | None = None) -> dict[str, float]:
        """Mean ``hpwl``, ``macro_hpwl``, ``legality``, ``overlap``, ``seconds`` and ``hpwl_ratio`` (placed
        HPWL over the HPWL of the netlist's own placement) over circuits, each placed by :meth:`place`."""
        kw = dict(best_of=best_of, method=method, steps=steps, seed=seed, legalize_steps=legalize_steps,
                  progress=progress)
        self.require_trained("evaluate")
        rows = []
        for nl in inputs.as_netlists(data, "data"):
            ref = evaluate_placement(nl)["hpwl"]
            _, m = self.place(nl, **kw)
            m["hpwl_ratio"] = m["hpwl"] / ref if ref > 0 else math.nan
            rows.append(m)
        return {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}

    # ------------------------------------------------------------------ CLI hooks
    @classmethod
    def default_data(cls, quick: bool = False, n: int | None = None, objects: int | None = None,
                     seed: int = 0) -> SyntheticNetlists:
        """Synthetic circuits (seeds ``seed..``, generated when first used): ``n`` of about ``objects`` objects
        (quick: 8 of 12; default: the paper preset's 2000 of 200)."""
        cfg = cls.Config()
        return SyntheticNetlists(n or (8 if quick else cfg.train_circuits),
                                 objects or (12 if quick else cfg.train_objects), seed)

    @classmethod
    def read_data(cls, path: str | os.PathLike) -> list[Netlist]:
        """A Bookshelf ``.aux`` file, or a directory searched recursively for ``.aux`` files."""
        return inputs.read_netlists(path)

    def write_samples(self, samples, path: str | os.PathLike, *, overwrite: bool = False) -> Path:
        """Write a placed netlist (or a list, one ``000/``, ``001/``, ... folder each) as Bookshelf into the new
        directory ``path``, atomically (``scigen.core.files.atomic_dir``)."""
        from scigen.placement.diffusion.cli import write_placements

        return write_placements(samples, path, overwrite=overwrite)

    def sample_for_cli(self, n_samples: int, seed: int, devices: int = 1):
        """``n_samples`` placements (at most 16, said on stderr) of a held-out synthetic circuit of the
        training size, on ``devices`` processes (:meth:`sample`)."""

        n = check_count(n_samples, "--n-samples")
        if n > 16:
            get_logger(__name__).warning("placing 16 of the %d samples asked for (one batch of one circuit)", n)
        return self.sample(self._cli_netlist(seed), n_samples=min(n, 16), seed=seed, devices=devices)

    def _cli_netlist(self, seed: int) -> Netlist:
        """The held-out synthetic circuit of the training size that the CLI places for ``seed``."""
        from scigen.placement.synthetic import SynthConfig, generate_netlist

        return generate_netlist(10_000 + seed, SynthConfig.for_size(self.metadata.get("train_objects", 20)))

    @classmethod
    def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
        """Train on synthetic circuits, place a held-out one, compare with the baselines (:mod:`.demo`)."""
        from scigen.placement.diffusion.demo import run_demo

        return run_demo(cls, out, quick=quick)


def _better_of_pairs(nl: Netlist, a: Tensor, b: Tensor) -> tuple[Tensor, float]:
    """Per sample, the better of ``a[i]`` and ``b[i]`` (legal first, then lower HPWL), and the share taken
    from ``b``."""
    def key(z):
        return inputs.placement_rank(nl.with_positions(nl.denormalize_pos(z)))

    take_b = torch.tensor([key(y) < key(x) for x, y in zip(a, b, strict=True)])
    return torch.where(take_b[:, None, None], b, a), float(take_b.float().mean())


def place(netlist: Netlist, model: DiffusionPlacer | str | os.PathLike | None = None, **kw) -> tuple[Netlist, dict]:
    """Place ``netlist`` with a trained :class:`DiffusionPlacer` (an instance or a saved run directory).

    Returns ``(placed netlist, metrics)``; see :meth:`DiffusionPlacer.place`.
    """
    if model is None:
        raise InvalidInputError("place() needs a trained model: a DiffusionPlacer or the directory of a saved run")
    if not isinstance(model, DiffusionPlacer):
        model = DiffusionPlacer.load(model)
    return model.place(netlist, **kw)
