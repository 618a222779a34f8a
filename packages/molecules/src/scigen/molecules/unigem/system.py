"""UniGEM (Feng et al., "UniGEM: A Unified Approach to Generation and Property Prediction for
Molecules", ICLR 2025) and the EDM baseline (Hoogeboom et al., "Equivariant Diffusion for Molecule
Generation in 3D", ICML 2022) as scigen systems.

    model = UniGEM(UniGEMConfig.preset("tiny"))     # paper: UniGEM() (256 wide, 9 blocks)
    model.fit(load_qm9("train", limit=2000))
    mols = model.sample(n_samples=100)              # RDKit Mol, one conformer, properties as Mol props
    props = model.predict(mols)                     # pandas DataFrame, one row per molecule
    scores = model.evaluate(load_qm9("test"))
    model.save("run/"); UniGEM.load("run/")

Loss and samplers on the engine: :mod:`.process`; network: :mod:`.egnn`; demo: :mod:`.demo`; CLI: :mod:`.cli`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from scigen.core.errors import InvalidInputError
from scigen.core.samplers import check_method
from scigen.core.system import System
from scigen.core.validation import check_count
from scigen.molecules.data.batching import to_padded
from scigen.molecules.data.dataset import MoleculeSet
from scigen.molecules.unigem.config import METHODS, EDMConfig, UniGEMConfig
from scigen.molecules.unigem.inputs import as_molecule_set, molecule_sizes, read_molecule_file
from scigen.molecules.unigem.model import MoleculeDenoiser
from scigen.molecules.unigem.process import (
    DEFAULT_STEPS,
    make_process,
    make_schedule,
    predict_properties,
    sample_molecules,
    size_streams,
    training_loss,
)

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
        c = self.config
        return MoleculeDenoiser(c.mode, len(c.atom_vocab), len(c.properties), c.hidden, c.n_layers)

    @property
    def process(self):
        """The network bound to EDM's discrete schedule (the engine's loss and samplers)."""
        c = self.config
        key = (c.T, c.noise_precision)
        if getattr(self, "_schedule_key", None) != key:
            self._schedule, self._schedule_key = make_schedule(c.T, c.noise_precision), key
        return make_process(self.network, self._schedule, t_n=c.nucleation_t, method=c.method,
                            steps=c.steps or DEFAULT_STEPS)

    def _stats(self) -> tuple[torch.Tensor, torch.Tensor] | tuple[None, None]:
        if not self.config.properties or "prop_mean" not in self.metadata:
            return None, None
        return (torch.tensor(self.metadata["prop_mean"], dtype=torch.float32, device=self.device),
                torch.tensor(self.metadata["prop_mad"], dtype=torch.float32, device=self.device))

    def as_molecule_set(self, data: Any, *, need_properties: bool = True, what: str = "data") -> MoleculeSet:
        """Validate ``data`` (a MoleculeSet, or Molecule / RDKit Mol objects) against the model:
        vocabulary, ``max_atoms``, and (when needed) the model's properties."""
        c = self.config
        return as_molecule_set(data, atom_vocab=c.atom_vocab, max_atoms=c.max_atoms,
                               properties=c.properties if need_properties else (), what=what)

    # ------------------------------------------------------------------ training
    def prepare_data(self, data: Any, *, role: str) -> MoleculeSet:
        """A checked :class:`MoleculeSet` (or :class:`~scigen.molecules.data.store.MoleculeStore`: molecules on
        disk from :func:`~scigen.molecules.data.store.write_molecules`, read per batch); the training data set the size histogram (EDM's prior over
        molecule sizes), the property normalisation (mean, MAD) and the novelty reference SMILES."""
        from scigen.molecules.metrics import edm_smiles

        ms = self.as_molecule_set(data, what=role)
        if role != "data":
            return ms
        if len(ms) < 2:
            raise InvalidInputError("data: need at least 2 molecules to train")
        self._n_train = len(ms)
        self.metadata["size_histogram"] = {str(k): v for k, v in ms.size_histogram().items()}
        if self.config.properties:
            y = np.stack([ms.properties[p] for p in self.config.properties], 1)
            mean = y.mean(0)
            self.metadata["prop_mean"] = mean.tolist()
            self.metadata["prop_mad"] = np.maximum(np.abs(y - mean).mean(0), 1e-8).tolist()
        ref = (ms.molecule(i) for i in range(min(len(ms), _MAX_NOVELTY_REFERENCE)))  # one at a time (a store)
        self.metadata["train_smiles"] = sorted({s for s in (edm_smiles(m) for m in ref) if s})
        return ms

    def fit_options(self) -> dict[str, Any]:
        n, bs = getattr(self, "_n_train", None), self.training_options().batch_size
        # the atom-type heads of the two phases (egnn.out, egnn.out2) see only the molecules whose time falls
        # in their phase: a rank's batch may use one of them only (DDP then needs to find the unused one)
        opts: dict[str, Any] = {"unused_parameters": True}
        if n is not None and n < bs:  # fewer molecules than a batch
            opts["batch_size"] = n - n % 2
        return opts

    def training_loss(self, network: nn.Module, batch: dict) -> torch.Tensor:
        c = self.config
        mean, mad = self._stats()
        return training_loss(self.process, network, batch, mode=c.mode, t_n=c.nucleation_t, vocab=c.atom_vocab,
                             prop_mean=mean, prop_mad=mad)

    # ------------------------------------------------------------------ sampling
    def _sizes(self, n: int, n_atoms, generator) -> torch.Tensor:
        return molecule_sizes(n, n_atoms, self.metadata.get("size_histogram"), self.config.max_atoms, generator)

    @torch.no_grad()
    def sample(self, n_samples: int, *, n_atoms: int | list[int] | None = None, method: str | None = None,
               steps: int | None = None, seed: int | None = None, batch_size: int = 256,
               progress: bool | None = None, devices: int = 1) -> list:
        """Generate ``n_samples`` molecules as RDKit ``Mol`` objects (one conformer in Å, EDM's distance
        bonds, unsanitised; name ``<system>_<i>``; UniGEM's predicted properties as double props in
        physical units). Sizes come from the training histogram or ``n_atoms``. ``method``: an engine
        solver (``config.method`` by default: ``"ddpm"``, EDM's ancestral sampler, all T steps unless
        ``steps``; ``"ddim"``; ``"dpmpp_2m"``, ``"unipc"``, ``"heun"``, ... with 50 steps unless ``steps``),
        always on the zero-centre-of-mass subspace. Write with :func:`~scigen.molecules.io.write_sdf`.

        Molecule ``i`` draws from its own streams keyed by ``(seed, i)`` (:class:`~scigen.core.streams.SampleStreams`:
        its size, and each of its atoms' initial and solver noise; :func:`~scigen.molecules.unigem.process.atom_streams`),
        so the first ``k`` of ``n`` molecules are ``sample(k)``, and ``devices=N`` splits the molecules over ``N``
        processes (Lightning Fabric, :func:`~scigen.core.system.sharded.sample_in_shards`; call it under
        ``if __name__ == "__main__"``) with the same result. Molecules are generated in batches of ``batch_size``
        consecutive indices (``j·batch_size ..``, cut at ``n``) and processes own whole batches, so ``devices=N``
        equals one process to the bit; another ``batch_size`` (or ``k`` not a multiple of it) batches a molecule
        with other molecules and agrees to float32 rounding of the network's batched arithmetic only. Fewer than
        ``N·batch_size`` molecules leave processes idle (lower ``batch_size`` to spread them)."""
        n = check_count(n_samples, "n_samples")
        check_count(batch_size, "batch_size")
        self.require_trained("sample")
        return self._generate(n, n_atoms=n_atoms, method=method, steps=steps, seed=seed, batch_size=batch_size,
                              progress=progress, devices=devices)

    def _molecule_draw(self, n: int | None, *, n_atoms=None, method=None, steps=None, seed=None, batch_size=256,
                       progress=None, width: int | None = None):
        """``draw(keys)``: ``{"pos" [m, w, 3], "types" [m, w] (vocabulary indices), "sizes" [m], "props" [m, P]}`` of
        the molecules with these indices, in batches of ``batch_size`` consecutive indices (``draw.block``); ``w``:
        ``width`` or the largest molecule of the call. ``n``: keys from ``n`` on are padding rows (``None``: none)."""
        from scigen.core.streams import SampleStreams

        c = self.config
        method = method or c.method
        check_method(method, METHODS)
        steps = c.steps if steps is None else check_count(steps, "steps")
        seed = self.generator(seed).initial_seed()  # the one seed rule (None: config.train.seed), checked
        if n_atoms is None and not self.metadata.get("size_histogram"):
            self._sizes(1, None, None)  # refused: no histogram
        if n_atoms is None:
            sizes_of = None
        elif np.isscalar(n_atoms):  # one size for every molecule (checked before any sampling)
            size = int(self._sizes(1, n_atoms, None)[0])
            sizes_of = lambda k: torch.full((len(k),), size, dtype=torch.int64)  # noqa: E731
        else:
            given = self._sizes(n, n_atoms, None)  # one per molecule, checked before any sampling
            sizes_of = lambda k: given[k]  # noqa: E731
        mean, mad = self._stats()
        process = self.process
        self.network.eval()

        bs = int(batch_size)

        def draw(keys: torch.Tensor) -> dict[str, torch.Tensor]:
            # batches of molecules j·bs .. (j+1)·bs - 1 (cut at n): the same members on any number of processes
            keys = keys.cpu()
            real = keys < n if n is not None else torch.ones_like(keys, dtype=torch.bool)
            m = len(keys)
            sizes = torch.zeros(m, dtype=torch.int64)
            if bool(real.any()):
                sizes[real] = sizes_of(keys[real]) if sizes_of is not None else self._sizes(
                    int(real.sum()), None, size_streams(SampleStreams(seed, keys[real])))
            w = max(int(sizes.max()), 1) if width is None else width
            pos, types = torch.zeros(m, w, 3), torch.zeros(m, w, dtype=torch.int64)
            props = torch.zeros(m, len(c.properties))
            for j in torch.unique(keys[real] // bs).tolist():
                rows = torch.nonzero(real & (keys // bs == j)).flatten()
                res = sample_molecules(process, sizes[rows], mode=c.mode, vocab=c.atom_vocab, method=method,
                                       steps=steps, generator=SampleStreams(seed, keys[rows].to(self.device)),
                                       progress=progress)
                res = {k: v.cpu() for k, v in res.items()}
                pos[rows] = to_padded(res["pos"], res["ptr"], w)[0]
                types[rows] = to_padded(res["types"], res["ptr"], w)[0]
                if "props" in res:
                    props[rows] = res["props"] if mean is None else res["props"] * mad.cpu() + mean.cpu()
            out = {"pos": pos, "types": types, "sizes": sizes}
            if c.mode != "edm" and c.properties:  # the same structure on every rank (one without molecules too)
                out["props"] = props
            return out

        draw.block = bs
        return draw

    @torch.no_grad()
    def sample_draw(self, *, n_atoms: int | None = None, method: str | None = None, steps: int | None = None,
                    seed: int | None = None, batch_size: int = 256):
        """``draw(keys)`` for :meth:`~scigen.core.system.base.System.sample_to`: molecule ``i`` of :meth:`sample` as
        padded arrays, ``pos`` ``[m, max_atoms, 3]`` (Å), ``atomic_numbers`` ``[m, max_atoms]`` (0 = padding),
        ``n_atoms`` ``[m]`` and, with a property head, ``properties`` ``[m, P]`` (physical units, ``config.properties``
        order): ``model.sample_to("molecules", 10**6, devices=4, chunk_size=4096)`` writes one folder of ``.npy``
        files without holding the molecules in memory (batches of ``batch_size`` keys, as :meth:`sample`)."""
        self.require_trained("sample")
        check_count(batch_size, "batch_size")
        if n_atoms is not None and not np.isscalar(n_atoms):
            raise InvalidInputError("sample_to takes one n_atoms for every molecule (an int) or None (the histogram)")
        inner = self._molecule_draw(None, n_atoms=n_atoms, method=method, steps=steps, seed=seed,
                                    batch_size=batch_size, progress=False, width=self.config.max_atoms)
        width = self.config.max_atoms
        vocab = torch.as_tensor(self.config.atom_vocab, dtype=torch.int64)

        def draw(keys: torch.Tensor) -> dict[str, torch.Tensor]:
            out = inner(keys)
            mask = torch.arange(width)[None, :] < out["sizes"][:, None]
            arrays = {"pos": out["pos"] * mask[..., None], "atomic_numbers": torch.where(mask, vocab[out["types"]], 0),
                      "n_atoms": out["sizes"]}
            if "props" in out:
                arrays["properties"] = out["props"]
            return arrays

        draw.block = inner.block
        return draw

    def _generate(self, n: int, *, n_atoms=None, method=None, steps=None, seed=None, batch_size=256,
                  progress=None, devices: int = 1) -> list:
        from scigen.core.system.sharded import sample_in_shards
        from scigen.molecules.convert import to_rdkit
        from scigen.molecules.structures import Molecule

        c = self.config
        draw = self._molecule_draw(n, n_atoms=n_atoms, method=method, steps=steps, seed=seed, batch_size=batch_size,
                                   progress=progress)
        out = sample_in_shards(draw, n, devices=devices, block=draw.block)
        vocab = np.asarray(c.atom_vocab)
        mols = []
        for i, k in enumerate(out["sizes"].tolist()):
            props = {p: float(v) for p, v in zip(c.properties, out["props"][i], strict=True)} if "props" in out else {}
            mols.append(to_rdkit(Molecule(vocab[out["types"][i, :k].numpy()], out["pos"][i, :k].double().numpy(),
                                          properties=props, name=f"{self.name}_{i}"), implicit_hs=False))
        return mols

    # ------------------------------------------------------------------ prediction and evaluation
    @torch.no_grad()
    def predict(self, molecules: Any, *, batch_size: int = 256):
        """Properties of given molecules in physical units (EDM's: α Bohr³, gap/homo/lumo eV, μ D,
        Cv cal/(mol K)) from the t = 0 path of the nucleation branch: a pandas DataFrame indexed by
        molecule name (index ``"molecule"``), one column per property."""
        import pandas as pd

        c = self.config
        if c.mode != "unigem" or not c.properties:
            raise InvalidInputError(f"{self.key()} has no property head (properties={list(c.properties)})")
        batch_size = check_count(batch_size, "batch_size")
        self.require_trained("predict")
        mean, mad = self._stats()
        if mean is None:
            raise InvalidInputError("the model has no property statistics: train it first")
        ms = self.as_molecule_set(molecules, need_properties=False, what="molecules")
        self.network.eval()
        preds = []
        for s in range(0, len(ms), batch_size):
            items = [ms[i] for i in range(s, min(s + batch_size, len(ms)))]
            pos = torch.stack([it["pos"] for it in items]).to(self.device)
            mask = torch.stack([it["mask"] for it in items]).to(self.device)
            preds.append(predict_properties(self.network, pos, mask, mean, mad).cpu())
        y = torch.cat(preds).double().numpy()
        return pd.DataFrame(y, columns=list(c.properties), index=pd.Index(ms.names, name="molecule"))

    def evaluate(self, data: Any, *, n_samples: int = 1000, method: str | None = None, steps: int | None = None,
                 seed: int | None = None, samples: list | None = None,
                 posebusters: bool | str | None = None) -> dict[str, float]:
        """EDM metrics of ``n_samples`` generated molecules (or of the given ``samples``; novelty against
        the training SMILES), and for UniGEM the property MAE on ``data`` with the predict-the-training-mean
        baseline (``mae_<p>``, ``mae_mean_baseline_<p>``; gap/homo/lumo in meV as the papers print them).

        ``posebusters``: PoseBusters' pass rate per check on the same molecules, ``posebusters/<check>``, and
        ``posebusters/all`` (:mod:`scigen.molecules.pose_checks`; the ``posebusters`` extra). ``None``: when
        it is installed, the ``"mol_fast"`` checks; ``True``: required; ``"mol"``: also the internal-energy
        check (an ETKDG ensemble per molecule, about 0.15 s each); ``False``: none."""
        from scigen.core.validation import optional_package
        from scigen.molecules.metrics import molecule_metrics, property_mae

        self.require_trained("evaluate")
        with_props = self.config.mode == "unigem" and bool(self.config.properties)
        ms = self.as_molecule_set(data, what="data") if with_props else None  # checked before sampling
        if samples is None:
            samples = self.sample(n_samples, method=method, steps=steps, seed=seed)
        scores = molecule_metrics(samples, self.metadata.get("train_smiles"))
        config = posebusters if isinstance(posebusters, str) else "mol_fast"
        if optional_package(None if isinstance(posebusters, str) else posebusters, "posebusters",
                            install="scigen-molecules[posebusters]", what="evaluate(posebusters=...)"):
            from scigen.molecules.pose_checks import posebusters_metrics

            scores.update(posebusters_metrics(samples, config=config))
        if with_props:
            pred = self.predict(ms)
            true = {p: ms.properties[p] for p in self.config.properties}
            base = {p: np.full(len(ms), m) for p, m in zip(self.config.properties, self.metadata["prop_mean"], strict=True)}
            for tag, mae in (("mae_", property_mae(pred, true)), ("mae_mean_baseline_", property_mae(base, true))):
                for p, v in mae.items():
                    scores[tag + p] = v * (1000.0 if p in ("gap", "homo", "lumo") else 1.0)
        return scores

    # ------------------------------------------------------------------ CLI / demo hooks
    @classmethod
    def default_data(cls, quick: bool = False) -> MoleculeSet:
        """QM9 (qm9pack): the first 2,000 molecules when ``quick``, else EDM's training split."""
        from scigen.molecules.data.qm9 import load_qm9

        return load_qm9("all", limit=2000) if quick else load_qm9("train")

    @classmethod
    def read_data(cls, path: str | os.PathLike) -> MoleculeSet:
        """Molecules from an ``.xyz`` or ``.sdf`` file (numeric SD fields on every record become properties)."""
        return read_molecule_file(path, cls.Config().atom_vocab)

    def write_samples(self, samples: Any, path: str | os.PathLike) -> Path:
        """SDF (default) or XYZ by the file suffix."""
        from scigen.molecules.io import write_sdf, write_xyz

        p = Path(path)
        return write_xyz(samples, p) if p.suffix.lower() == ".xyz" else write_sdf(samples, p)

    @classmethod
    def run_demo(cls, out: Path, *, quick: bool = False):
        from scigen.molecules.unigem.demo import run_demo

        return run_demo(cls, out, quick=quick)


class EDM(UniGEM):
    """The EDM baseline: types diffused jointly with coordinates, no nucleation, no heads."""

    name = "edm"
    description = "EDM (ICML 2022): E(3)-equivariant diffusion of atom types and coordinates."
    Config = EDMConfig
