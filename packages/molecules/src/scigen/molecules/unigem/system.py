"""UniGEM (Feng et al., "UniGEM: A Unified Approach to Generation and Property Prediction for
Molecules", ICLR 2025) and the EDM baseline (Hoogeboom et al., "Equivariant Diffusion for Molecule
Generation in 3D", ICML 2022) as scigen systems.

    model = UniGEM(hidden=64, n_layers=4)       # paper: 256 wide, 9 blocks
    model.fit(load_qm9("train"), max_steps=...)
    mols = model.sample(100)                      # list of Molecule (to_rdkit / write_sdf)
    props = model.predict(mols)                   # {"gap": [...], ...} in physical units
    scores = model.evaluate(load_qm9("test"))
    model.save("run/"); UniGEM.load("run/")

See :mod:`scigen.molecules.unigem.diffusion` for the loss and samplers, :mod:`.egnn` for the network.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from scigen.core.errors import InvalidInputError
from scigen.core.plotting import save_figure
from scigen.core.system import DemoResult, System, torch_threads, write_report
from scigen.core.system.base import Stopwatch
from scigen.molecules.data.dataset import MoleculeSet
from scigen.molecules.structures import Molecule
from scigen.molecules.unigem.config import EDMConfig, UniGEMConfig
from scigen.molecules.unigem.diffusion import (
    SAMPLER_METHODS,
    make_schedule,
    predict_properties,
    sample_molecules,
    training_loss,
)
from scigen.molecules.unigem.model import MoleculeDenoiser

__all__ = ["UniGEM", "EDM"]

_MAX_NOVELTY_REFERENCE = 20_000


class UniGEM(System):
    """UniGEM: one equivariant diffusion model that generates 3-D molecules and predicts properties."""

    domain = "molecules"
    name = "unigem"
    description = "UniGEM (ICLR 2025): 3-D molecule generation + property prediction with nucleation."
    Config = UniGEMConfig

    # ------------------------------------------------------------------ wiring
    def build_network(self) -> nn.Module:
        torch.manual_seed(self.config.seed)
        c = self.config
        return MoleculeDenoiser(c.mode, len(c.atom_vocab), len(c.properties), c.hidden, c.n_layers)

    @property
    def schedule(self):
        return make_schedule(self.config.T, self.config.noise_precision)

    def _stats(self) -> tuple[torch.Tensor, torch.Tensor] | tuple[None, None]:
        if not self.config.properties or "prop_mean" not in self.metadata:
            return None, None
        return (torch.tensor(self.metadata["prop_mean"], dtype=torch.float32),
                torch.tensor(self.metadata["prop_mad"], dtype=torch.float32))

    def as_molecule_set(self, data: Any, *, need_properties: bool = True, what: str = "data") -> MoleculeSet:
        """Validate ``data`` (a MoleculeSet, or Molecule / RDKit Mol objects) against the model:
        vocabulary, ``max_atoms``, and (when needed) the model's properties."""
        c = self.config
        props = list(c.properties) if need_properties else []
        if isinstance(data, MoleculeSet):
            missing = [p for p in props if p not in data.properties]
            if missing:
                raise InvalidInputError(f"{what}: property {missing} not in the dataset (it has {data.property_names})")
            ms = MoleculeSet(data.atomic_numbers, data.positions, {p: data.properties[p] for p in props},
                             atom_vocab=c.atom_vocab, smiles=data.smiles, names=data.names, max_atoms=None)
        elif isinstance(data, (list, tuple)):
            ms = MoleculeSet.from_molecules(data, atom_vocab=c.atom_vocab, properties=props)
        else:
            raise InvalidInputError(f"{what}: expected a MoleculeSet or a list of Molecule / RDKit Mol, "
                                    f"got {type(data).__name__}")
        big = int(ms.n_atoms.max())
        if big > c.max_atoms:
            k = int(np.argmax(ms.n_atoms))
            raise InvalidInputError(f"{what}: molecule {k} has {big} atoms, more than the model's max_atoms={c.max_atoms}")
        ms.max_atoms = c.max_atoms
        return ms

    # ------------------------------------------------------------------ verbs
    def fit(self, data: Any, *, max_steps: int | None = None, **options: Any) -> UniGEM:
        """Train on a :class:`MoleculeSet` (or molecules); options go to :func:`scigen.core.train.fit`."""
        from scigen.core.train import fit
        from scigen.molecules.metrics import edm_smiles

        c = self.config
        ms = self.as_molecule_set(data)
        if len(ms) < 2:
            raise InvalidInputError("data: need at least 2 molecules to train")
        self.metadata["size_histogram"] = {str(k): v for k, v in ms.size_histogram().items()}
        if c.properties:
            y = np.stack([ms.properties[p] for p in c.properties], 1)
            mean = y.mean(0)
            self.metadata["prop_mean"] = mean.tolist()
            self.metadata["prop_mad"] = np.maximum(np.abs(y - mean).mean(0), 1e-8).tolist()
        ref = ms if len(ms) <= _MAX_NOVELTY_REFERENCE else ms.subset(range(_MAX_NOVELTY_REFERENCE))
        self.metadata["train_smiles"] = sorted({s for s in (edm_smiles(m) for m in ref.to_molecules()) if s})
        mean, mad = self._stats()
        schedule = self.schedule

        def loss_fn(net: nn.Module, batch: dict) -> torch.Tensor:
            dev = batch["pos"].device
            return training_loss(net, batch, schedule, mode=c.mode, t_n=c.nucleation_t, vocab=c.atom_vocab,
                                 prop_mean=None if mean is None else mean.to(dev),
                                 prop_mad=None if mad is None else mad.to(dev))

        options.setdefault("batch_size", min(c.batch_size, len(ms) - len(ms) % 2))
        options.setdefault("lr", c.lr)
        options.setdefault("weight_decay", c.weight_decay)
        options.setdefault("ema_decay", c.ema_decay)
        options.setdefault("grad_clip", c.grad_clip)
        options.setdefault("seed", c.seed)
        options.setdefault("progress", False)
        options.setdefault("logger", None)
        result = fit(self.network, loss_fn, ms, max_steps=int(max_steps or c.max_steps), **options)
        self.network = result.module  # the EMA copy when ema_decay is set
        self.metadata["trained_steps"] = int(self.metadata.get("trained_steps", 0)) + int(result.steps)
        self.metadata["final_loss"] = float(np.mean(result.losses[-20:])) if len(result.losses) else None
        self.losses = list(result.losses)
        return self

    def _sizes(self, n: int, n_atoms, generator: torch.Generator) -> torch.Tensor:
        if n_atoms is not None:
            sizes = torch.as_tensor([n_atoms] * n if np.isscalar(n_atoms) else list(n_atoms), dtype=torch.long)
            if sizes.numel() != n:
                raise InvalidInputError(f"n_atoms: {sizes.numel()} sizes given for n={n} molecules")
            if bool((sizes < 1).any()) or int(sizes.max()) > self.config.max_atoms:
                raise InvalidInputError(f"n_atoms: sizes must lie in [1, max_atoms={self.config.max_atoms}], "
                                        f"got range [{int(sizes.min())}, {int(sizes.max())}]")
            return sizes
        hist = self.metadata.get("size_histogram")
        if not hist:
            raise InvalidInputError("the model has no size histogram (train it first) - pass n_atoms=")
        items = sorted((int(k), float(v)) for k, v in hist.items())  # JSON round trips reorder keys
        keys = torch.tensor([k for k, _ in items])
        probs = torch.tensor([v for _, v in items])
        return keys[torch.multinomial(probs, n, replacement=True, generator=generator)]

    @torch.no_grad()
    def sample(self, n: int, *, n_atoms: int | list[int] | None = None, method: str | None = None,
               steps: int | None = None, seed: int | None = None, batch_size: int = 256) -> list[Molecule]:
        """Generate ``n`` molecules (sizes from the training histogram or ``n_atoms``). UniGEM attaches its
        predicted properties (physical units) to each molecule. ``method``: ``"ancestral"`` (EDM's DDPM
        sampler, all T steps unless ``steps``), ``"ddim"``, or an engine solver (``"dpmpp_2m"``, ``"unipc"``,
        ``"ddpm"``, ``"heun"``, ``"euler"``, ``"euler_maruyama"``; 50 steps unless ``steps``) run on the
        zero-centre-of-mass subspace. Convert with :func:`~scigen.molecules.io.to_rdkit`
        or write with :func:`~scigen.molecules.io.write_sdf`."""
        if not isinstance(n, (int, np.integer)) or int(n) < 1:
            raise InvalidInputError(f"n must be a positive number of molecules, got {n!r}")
        c = self.config
        method = method or c.sampler
        if method not in SAMPLER_METHODS:
            raise InvalidInputError(f"method: expected one of {list(SAMPLER_METHODS)}, got {method!r}")
        if steps is not None and (not isinstance(steps, (int, np.integer)) or int(steps) < 1):
            raise InvalidInputError(f"steps must be a positive number of sampler steps, got {steps!r}")
        seed = c.seed if seed is None else int(seed)
        sizes = self._sizes(int(n), n_atoms, torch.Generator().manual_seed(seed))
        dev = next(self.network.parameters()).device
        g = torch.Generator(device=dev).manual_seed(seed)  # noise is drawn on the model's device
        self.network.eval()
        mean, mad = self._stats()
        out: list[Molecule] = []
        for s in range(0, int(n), batch_size):
            res = sample_molecules(self.network, sizes[s:s + batch_size], self.schedule, mode=c.mode,
                                   t_n=c.nucleation_t, vocab=c.atom_vocab, method=method,
                                   steps=steps or c.sample_steps, generator=g)
            res = {k: v.cpu() for k, v in res.items()}
            ptr = res["ptr"].tolist()
            vocab = np.asarray(c.atom_vocab)
            for b in range(len(ptr) - 1):
                props = {}
                if "props" in res and mean is not None:
                    vals = res["props"][b] * mad + mean
                    props = {p: float(v) for p, v in zip(c.properties, vals, strict=True)}
                out.append(Molecule(vocab[res["types"][ptr[b]:ptr[b + 1]].numpy()],
                                    res["pos"][ptr[b]:ptr[b + 1]].double().numpy(), properties=props,
                                    name=f"{self.name}_{s + b}"))
        return out

    @torch.no_grad()
    def predict(self, molecules: Any, *, batch_size: int = 256) -> dict[str, np.ndarray]:
        """Properties of given molecules in physical units (EDM's: α Bohr³, gap/homo/lumo eV, μ D,
        Cv cal/(mol K)) from the t = 0 path of the nucleation branch."""
        c = self.config
        if c.mode != "unigem" or not c.properties:
            raise InvalidInputError(f"{self.key()} has no property head (properties={list(c.properties)})")
        mean, mad = self._stats()
        if mean is None:
            raise InvalidInputError("the model has no property statistics: train it first")
        ms = self.as_molecule_set(molecules, need_properties=False, what="molecules")
        self.network.eval()
        dev = next(self.network.parameters()).device
        preds = []
        for s in range(0, len(ms), batch_size):
            items = [ms[i] for i in range(s, min(s + batch_size, len(ms)))]
            pos = torch.stack([it["pos"] for it in items])
            mask = torch.stack([it["mask"] for it in items])
            preds.append(predict_properties(self.network, pos.to(dev), mask.to(dev), mean.to(dev), mad.to(dev)).cpu())
        y = torch.cat(preds).double().numpy()
        return {p: y[:, j] for j, p in enumerate(c.properties)}

    def evaluate(self, data: Any, *, n_samples: int = 1000, method: str | None = None, steps: int | None = None,
                 seed: int = 0, samples: list[Molecule] | None = None) -> dict[str, float]:
        """EDM metrics of ``n_samples`` generated molecules (or of the given ``samples``; novelty against
        the training SMILES), and for UniGEM the property MAE on ``data`` with the predict-the-training-mean
        baseline (``mae_<p>``, ``mae_mean_baseline_<p>``; gap/homo/lumo in meV as the papers print them)."""
        from scigen.molecules.metrics import molecule_metrics, property_mae

        if samples is None:
            samples = self.sample(n_samples, method=method, steps=steps, seed=seed)
        scores = molecule_metrics(samples, self.metadata.get("train_smiles"))
        if self.config.mode == "unigem" and self.config.properties:
            ms = self.as_molecule_set(data, what="data")
            pred = self.predict(ms)
            true = {p: ms.properties[p] for p in self.config.properties}
            base = {p: np.full(len(ms), m) for p, m in zip(self.config.properties, self.metadata["prop_mean"], strict=True)}
            for tag, mae in (("mae_", property_mae(pred, true)), ("mae_mean_baseline_", property_mae(base, true))):
                for p, v in mae.items():
                    scores[tag + p] = v * (1000.0 if p in ("gap", "homo", "lumo") else 1.0)
        return scores

    # ------------------------------------------------------------------ CLI hooks
    @classmethod
    def default_data(cls, quick: bool = False) -> MoleculeSet:
        """QM9 (qm9pack): the first 2,000 molecules when ``quick``, else EDM's training split."""
        from scigen.molecules.data.qm9 import load_qm9

        return load_qm9("all", limit=2000) if quick else load_qm9("train")

    @classmethod
    def read_data(cls, path: str | os.PathLike) -> MoleculeSet:
        """Molecules from an ``.xyz`` or ``.sdf`` file (numeric SD fields become properties)."""
        from scigen.molecules.io import read_sdf, read_xyz

        p = Path(path)
        if p.suffix.lower() not in (".xyz", ".sdf"):
            raise InvalidInputError(f"{p}: expected a .xyz or .sdf file")
        mols = read_xyz(p) if p.suffix.lower() == ".xyz" else read_sdf(p)
        common = set.intersection(*(set(m.properties) for m in mols)) if mols else set()
        vocab = tuple(sorted({int(z) for m in mols for z in m.atomic_numbers} | set(cls.Config().atom_vocab)))
        return MoleculeSet.from_molecules(mols, atom_vocab=vocab, properties=sorted(common))

    def write_samples(self, samples: Any, path: str | os.PathLike) -> Path:
        """SDF (default) or XYZ by the file suffix."""
        from scigen.molecules.io import write_sdf, write_xyz

        p = Path(path)
        return write_xyz(samples, p) if p.suffix.lower() == ".xyz" else write_sdf(samples, p)

    def sample_for_cli(self, n: int, seed: int) -> list[Molecule]:
        return self.sample(n, seed=seed)

    @classmethod
    def extra_cli_commands(cls, app) -> None:
        import typer

        @app.command("predict")
        def predict(run: Path = typer.Option(..., "--run", help="Run directory written by train."),
                    data: Path = typer.Option(..., "--data", help=".xyz or .sdf molecules."),
                    out: Path = typer.Option(..., "--out", help="CSV of predicted properties.")) -> None:
            """Predict properties of the molecules in --data (physical units) into a CSV."""
            try:
                model = cls.load(run)
                ms = cls.read_data(data)
                pred = model.predict(ms)
            except (ValueError, FileNotFoundError) as exc:
                typer.echo(f"error: {exc}", err=True)
                raise typer.Exit(2) from None
            lines = ["name," + ",".join(pred)]
            for i, nm in enumerate(ms.names):
                lines.append(nm + "," + ",".join(f"{pred[p][i]:.6g}" for p in pred))
            out.write_text("\n".join(lines) + "\n")
            typer.echo(f"wrote {len(ms)} predictions to {out}")

    @classmethod
    def demo(cls, out_dir: str | os.PathLike, *, quick: bool = False) -> DemoResult:
        """A small model trained for about a minute (quick: ~15 s) on a QM9 subset: stability / validity of
        its samples against the untrained model, UniGEM's property MAE on held-out molecules against the
        predict-the-mean baseline, samples written as SDF, a plot (metrics.png) and a report.

        To fit the time budget, sampling uses 50 ancestral steps (quick) or the engine's DPM-Solver++(2M)
        on the zero-CoM subspace with 30 steps, not EDM's 1000 ancestral steps. The model runs on one
        torch thread (restored afterwards)."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        with torch_threads(1):  # small networks: several threads were many times slower on a shared machine
            return cls._demo(out, quick)

    @classmethod
    def _demo(cls, out: Path, quick: bool) -> DemoResult:
        from scigen.molecules.data.qm9 import load_qm9
        from scigen.molecules.io import write_sdf
        from scigen.molecules.metrics import element_fractions, molecule_metrics

        # quick: a 120-step model is too rough for a 20-step solver (its x0 estimates at high noise fling atoms
        # tens of Å away), so it samples with EDM's ancestral steps on a 50-step grid
        n_train, steps, n_samples, n_test = (1000, 120, 60, 100) if quick else (2000, 300, 150, 300)
        sampler, sample_steps = ("ancestral", 50) if quick else ("dpmpp_2m", 30)
        with Stopwatch() as sw:
            data = load_qm9("all", limit=n_train + n_test)
            train, test = data.subset(range(n_train)), data.subset(range(n_train, n_train + n_test))
            kw = dict(hidden=32, n_layers=3, lr=3e-3, ema_decay=0.99, batch_size=32, max_atoms=29,
                      sampler=sampler, sample_steps=sample_steps)
            if cls.Config is not UniGEMConfig:
                kw["properties"] = ()
            model = cls(**kw)
            model.metadata["size_histogram"] = {str(k): v for k, v in train.size_histogram().items()}
            before = molecule_metrics(model.sample(n_samples // 2, seed=1))
            model.fit(train, max_steps=steps)
            samples = model.sample(n_samples, seed=2)
            after = model.evaluate(test, samples=samples)
            sdf = write_sdf(samples, out / "samples.sdf")
            pred = model.predict(test) if model.config.properties else None
            png = _plot(before, after, out / "metrics.png", losses=model.losses, test=test, pred=pred,
                        title=f"{cls.key()}: {model.metadata['trained_steps']} steps on {n_train} QM9 molecules")
            model.save(out / "model")
        metrics = dict(after)
        metrics["atom_stability_untrained"] = before["atom_stability"]
        metrics["validity_untrained"] = before["validity"]
        metrics["hydrogen_fraction"] = element_fractions(samples).get("H", 0.0)  # QM9: 0.51
        report = write_report(out, {"system": cls.key(), "config": model.config.model_dump(mode="json"),
                                    "metrics": metrics, "seconds": sw.seconds,
                                    "note": "fractions in [0,1]; MAE of gap/homo/lumo in meV; samples with "
                                            f"{sampler}, {sample_steps} steps"})
        return DemoResult(metrics=metrics, files=[report, sdf, png, out / "model"], seconds=sw.seconds)


def _plot(before: dict, after: dict, path: Path, *, title: str, losses: list[float], test=None, pred=None) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = ["atom_stability", "molecule_stability", "validity", "valid_x_unique"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    ax = axes[0]
    xs = np.arange(len(keys))
    ax.bar(xs - 0.2, [before[k] for k in keys], 0.4, label="untrained", color="tab:gray")
    ax.bar(xs + 0.2, [after[k] for k in keys], 0.4, label="trained", color="tab:blue")
    ax.set_xticks(xs, [k.replace("_", "\n").replace("\nx\n", "×") for k in keys], fontsize=8)
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title("samples (EDM metrics)", fontsize=9)
    ax.text(0.01, -0.2, "EDM's validity scores the largest fragment: scattered atoms (untrained) count as valid",
            transform=ax.transAxes, fontsize=6.5, color="0.35")
    ax = axes[1]
    if pred is not None and "gap" in pred:
        y = test.properties["gap"]
        base, mae = after["mae_mean_baseline_gap"], after["mae_gap"]  # meV; baseline: the training mean
        ax.scatter(y, pred["gap"], s=6, alpha=0.6)
        lo, hi = float(min(y.min(), pred["gap"].min())), float(max(y.max(), pred["gap"].max()))
        ax.plot([lo, hi], [lo, hi], "k--", lw=0.8)
        ax.set_xlabel("DFT gap (eV)")
        ax.set_ylabel("predicted gap (eV)")
        ax.set_title(f"held-out gap: MAE {mae:.0f} meV (predict-the-mean {base:.0f} meV)", fontsize=9)
    else:
        ax.plot(losses, lw=0.6, color="tab:blue")
        ax.set_xlabel("step")
        ax.set_ylabel("training loss")
        ax.set_yscale("log")
        ax.set_title("training loss", fontsize=9)
    fig.suptitle(title, fontsize=10)
    return save_figure(fig, path, dpi=110)


class EDM(UniGEM):
    """The EDM baseline: types diffused jointly with coordinates, no nucleation, no heads."""

    name = "edm"
    description = "EDM (ICML 2022): E(3)-equivariant diffusion of atom types and coordinates."
    Config = EDMConfig
