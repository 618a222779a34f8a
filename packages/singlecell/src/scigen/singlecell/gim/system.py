"""GIM: generative intervention models (Schneider, Lorch, Kilbertus, Schölkopf & Krause, ICML 2025) on AnnData.

Perturbation features ``γ`` (compound descriptors) and a dose map to a distribution over atomic
interventions — targets ``I`` and parameters ``ψ`` — in a causal model learned jointly over many
perturbation contexts; an unseen ``γ`` (a new dose, a new compound) is predicted by pushing its
intervention through the causal model, and ``σ(logits)`` says which variables it targets.

Example::

    from scigen.singlecell import GIM
    from scigen.singlecell.gim.synthetic import synthetic_screen

    adata = synthetic_screen(8, n_functions=12, n_ood_functions=6, n_control=400, seed=0)
    g = GIM(GIM.Config.preset("tiny"), training="mc", perturbation_key="compound", dose_key="dose",
            control="control", features_key="perturbation_features").fit(adata)   # the obs/obsm keys are config
    new = adata[adata.obs["split"] == "ood_partial"]   # known compounds at doses never seen in training
    pred = g.sample(new, n_samples=200)                # AnnData; obs compound, dose; uns["gim"] provenance
    targets = g.intervention_targets(new)              # DataFrame: condition x variable -> P(target)
    W = g.graph()                                      # DataFrame W (edge i -> j when W[i, j] != 0)
    scores = g.evaluate(adata)                         # MMD / energy / W2 / R2_means per split, target AUROC, SHD

What is the paper's and what is ours: the paper fixes the structure (features → p_φ(I, ψ | γ) →
causal model p_θ(x | I, ψ), joint training over contexts, MAP prediction, target probabilities); the
backends (:mod:`~scigen.singlecell.gim.scm`), the head (:mod:`~scigen.singlecell.gim.model`), the two
objectives (:mod:`~scigen.singlecell.gim.objective`) and the data handling are our reconstruction,
since the paper's method section and code could not be read. The representation is standardised by
the control cells' mean and standard deviation (undone on output). Training runs through the engine's
:func:`scigen.core.train.fit` on a tensor of context indices.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from scigen.core import streams
from scigen.core.deprecation import renamed_kwarg, warn_renamed
from scigen.core.errors import InvalidInputError
from scigen.core.system import DemoResult, System, TrainingHistory
from scigen.core.validation import check_count, max_count_for_memory
from scigen.singlecell.backed import RowReader, is_backed, open_input
from scigen.singlecell.gim.config import GIMConfig
from scigen.singlecell.gim.contexts import Contexts, condition_table, read_contexts
from scigen.singlecell.gim.genes import pca_inverse, pca_inverse_params
from scigen.singlecell.gim.model import GIMNetwork
from scigen.singlecell.gim.objective import GIMTensors, gim_loss
from scigen.singlecell.gim.scm import sde_moments, shd
from scigen.singlecell.h5ad import H5adFiles
from scigen.singlecell.io import to_anndata

__all__ = ["GIM"]

UNS_KEY = "gim"
_MODES = ("map", "mixture")


def _standardise(ctx: Contexts, moments=None) -> tuple[np.ndarray, np.ndarray]:
    """The control cells' (or, without a control, all cells') per-feature mean and std (ddof 0): from the cells,
    or from streamed per-context ``moments`` (:mod:`scigen.singlecell.gim.stream`)."""
    if moments is not None:
        from scigen.singlecell.gim.stream import pooled

        ref = moments[0] if ctx.has_control else pooled(moments)
        mean, std = ref.mean, np.sqrt(ref.var)
    else:
        ref = ctx.cells[0] if ctx.has_control else np.concatenate(ctx.cells)
        mean, std = ref.mean(0), ref.std(0)
    flat = np.flatnonzero(~(std > 1e-8 * (1 + np.abs(mean))))
    if flat.size:
        names = [ctx.var_names[j] for j in flat[:5]]
        raise InvalidInputError(f"singular covariance: feature(s) {names} have zero variance in the "
                                f"{'control' if ctx.has_control else 'training'} cells; drop constant features")
    return mean, std


class GIM(H5adFiles, System):
    """Generative intervention model (see the module docstring)."""

    domain = "singlecell"
    name = "gim"
    description = "Effects of unseen perturbations through a learned causal model (generative intervention models)."
    Config = GIMConfig

    # ------------------------------------------------------------------ network
    def network_seed(self) -> int:
        """The seed of the ``fit`` that built the network (``metadata["seed"]``), else ``config.train.seed``."""
        return int(self.metadata.get("seed", self.training_options().seed))

    def build_network(self) -> nn.Module:
        md = self.metadata
        if md.get("dim") is None:
            return nn.Module()
        cfg = self.config
        net = GIMNetwork(int(md["dim"]), int(md["n_features"]), width=cfg.width, depth=cfg.depth, hill=cfg.hill,
                         noise=cfg.noise_intervention,
                         n_contexts=int(md["n_contexts"]) if cfg.training == "map" else 0, use_head=cfg.use_head)
        # the decay rates enter the stationary SDE only: frozen otherwise (DDP needs every trained parameter used)
        net.causal.log_decay.requires_grad_(cfg.backend == "stationary_sde")
        return net

    # ------------------------------------------------------------------ fit
    def fit(self, adata: Any, *, max_steps: int | None = None, features: Any = None, val_data: Any = None,
            backed: bool = False, **options: Any) -> GIM:
        """Train on the contexts of ``adata`` (cells with ``obs[split_key] == train_split`` when that column
        exists); ``features`` (a DataFrame indexed by perturbation) replaces ``obsm[features_key]``.
        ``options`` override ``config.train`` for this call. A second call continues training the same network
        (:meth:`~scigen.core.system.System.continues_training`); a new model trains fresh weights.

        Data larger than memory: GIM trains on per-context statistics, so an AnnData opened with
        ``anndata.read_h5ad(path, backed="r")`` (or a path to an ``.h5ad`` file with ``backed=True``; without it
        a path is read into memory) is read once, block by block, into those statistics
        (:mod:`scigen.singlecell.gim.stream`; the ``stationary_sde`` backend also reads its
        ``max_cells_per_context`` cells per context by row); equal to the in-memory statistics to float64
        rounding."""
        if val_data is not None:
            raise InvalidInputError("GIM takes no val_data: score held-out contexts with evaluate()")
        self.training_options().fit_kwargs(max_steps=max_steps, **options)  # every option checked before any change
        cfg = self.config
        seed = int(options.get("seed", self.training_options().seed))
        adata = open_input(adata, backed)
        on_disk = is_backed(adata)
        ctx = read_contexts(adata, perturbation_key=cfg.perturbation_key, dose_key=cfg.dose_key, control=cfg.control,
                            features=features, features_key=cfg.features_key if features is None else None,
                            use_rep=cfg.use_rep, layer=cfg.layer, split_key=cfg.split_key,
                            splits=(cfg.train_split,), min_cells=cfg.min_cells, read=not on_disk)
        if len(ctx.names) - int(ctx.has_control) < 1:
            raise InvalidInputError("GIM needs at least one perturbed context besides the control cells")
        moments = reader = None
        if on_disk:
            from scigen.singlecell.gim.stream import context_moments

            reader = RowReader(adata, cfg.use_rep, cfg.layer)
            moments = context_moments(reader, ctx.rows)
        mean, std = _standardise(ctx, moments) if cfg.standardize else (np.zeros(ctx.dim), np.ones(ctx.dim))
        treated = ~np.asarray([n == cfg.control for n in ctx.names])
        f_mean = ctx.features[treated].mean(0)
        f_std = ctx.features[treated].std(0)
        f_std = np.where(f_std > 1e-8, f_std, 1.0)
        pos = ctx.doses[treated & (ctx.doses > 0)]
        dose_scale = float(np.median(pos)) if pos.size else 1.0
        onehot = [f[len("onehot_"):] for f in ctx.feature_names] if features is None and cfg.features_key is None \
            else None
        previous = self.metadata
        self.metadata = {
            "dim": ctx.dim, "n_features": ctx.features.shape[1], "n_contexts": len(ctx.names), "seed": seed,
            "var_names": ctx.var_names, "feature_names": ctx.feature_names, "onehot": onehot,
            "center": mean.tolist(), "scale": std.tolist(), "feature_mean": f_mean.tolist(),
            "feature_scale": f_std.tolist(), "dose_scale": dose_scale, "contexts": ctx.labels(),
            "context_names": ctx.names, "context_doses": ctx.doses.tolist(), "context_features": ctx.features.tolist(),
            "control_index": 0 if ctx.has_control else -1, "version": 1,
            "pca_inverse": pca_inverse_params(adata, cfg.use_rep),
            "keys": {k: getattr(cfg, k) for k in ("perturbation_key", "dose_key", "control", "use_rep", "layer")},
        }
        if not self.continues_training(previous, ("dim", "n_features", "n_contexts", "contexts")):
            self.network = self.make_network().to(self.device)
            self.history = TrainingHistory()
        tensors = self._training_tensors(ctx, mean, std, seed, moments=moments, reader=reader)
        # this call's training state (the context statistics, the EM warm-up counter) lives in the loss it
        # hands to the engine; the counter is checkpointed with it (resume does not replay the warm-up)
        loss = _GIMFitLoss(self, tensors, int(max_steps or options.get("max_steps") or cfg.train.max_steps))
        self.train_network(torch.arange(len(ctx.names)), max_steps=max_steps, loss_fn=loss, **options)
        if self._em:
            self._store_posterior(tensors)
        return self

    @property
    def _em(self) -> bool:
        return self.config.training == "map" and self.config.backend == "linear_gaussian"

    @torch.no_grad()
    def _store_posterior(self, tensors: GIMTensors) -> None:
        """EM: keep the final E-step of every training context (``q`` as logits, ``m``) in the MAP latents,
        which the per-context baseline predicts from."""
        from scigen.singlecell.gim.em import em_terms
        from scigen.singlecell.gim.objective import em_prior

        net, cfg = self.network, self.config
        t = tensors.to(self.device)
        idx = torch.arange(len(t.n), device=self.device)
        prior = em_prior(net, t, idx, tuple(cfg.per_context_prior))
        off = (~t.control)[:, None].to(t.s1.dtype)
        cm = net.causal
        post = em_terms(cm.w, cm.b, cm.log_sigma, t.n, t.s1, t.s2, *prior, off, cfg.target_prior)[1]
        q = post["q"].clamp(1e-6, 1 - 1e-6)
        net.ctx_logits.copy_(torch.log(q) if cfg.target_prior == "categorical" else torch.log(q) - torch.log1p(-q))
        net.ctx_shift.copy_(post["m"])
        if cfg.noise_intervention:
            net.ctx_logscale.copy_(prior[3])

    def _training_tensors(self, ctx: Contexts, mean, std, seed: int, *, moments=None, reader=None) -> GIMTensors:
        """The contexts' statistics of the standardised cells (from the cells, or from streamed ``moments`` and
        the file ``reader`` of a backed AnnData) and, for ``stationary_sde``, a capped set of cells each."""
        if moments is not None:
            from scigen.singlecell.gim.stream import standardised_sums

            n64, s1_64, s2_64 = standardised_sums(moments, mean, std)
            n = torch.as_tensor(n64, dtype=torch.float32)
            s1, s2 = torch.as_tensor(s1_64, dtype=torch.float32), torch.as_tensor(s2_64, dtype=torch.float32)
            cells = None
        else:
            cells = [(c - mean) / std for c in ctx.cells]
            n = torch.tensor([len(c) for c in cells], dtype=torch.float32)
            s1 = torch.stack([torch.as_tensor(c.sum(0), dtype=torch.float32) for c in cells])
            s2 = torch.stack([torch.as_tensor(c.T @ c, dtype=torch.float32) for c in cells])
        gamma, dose = self._inputs(ctx.features, ctx.doses)
        control = torch.tensor([n == self.config.control and ctx.has_control for n in ctx.names])
        t = GIMTensors(n, s1, s2, gamma, dose, control)
        if self.config.backend == "stationary_sde":
            cap = self.config.max_cells_per_context
            rng = np.random.default_rng(seed)
            if cells is None:  # a backed AnnData: read the kept cells of each context by row
                picks = [r if len(r) <= cap else r[np.sort(rng.choice(len(r), cap, replace=False))] for r in ctx.rows]
                keep = [(reader.read(r) - mean) / std for r in picks]
            else:
                keep = [c if len(c) <= cap else c[np.sort(rng.choice(len(c), cap, replace=False))] for c in cells]
            n_max = max(len(c) for c in keep)
            pad = torch.zeros(len(keep), n_max, ctx.dim)
            mask = torch.zeros(len(keep), n_max, dtype=torch.bool)
            for k, c in enumerate(keep):
                pad[k, : len(c)] = torch.as_tensor(c, dtype=torch.float32)
                mask[k, : len(c)] = True
            t.cells, t.mask = pad, mask
            t.n = mask.sum(1).float()  # KDS sees the kept cells
        return t

    def _inputs(self, features, doses) -> tuple[Tensor, Tensor]:
        md = self.metadata
        f = (np.asarray(features, float) - np.asarray(md["feature_mean"])) / np.asarray(md["feature_scale"])
        return (torch.as_tensor(f, dtype=torch.float32, device=self.device),
                torch.as_tensor(np.asarray(doses, float) / md["dose_scale"], dtype=torch.float32, device=self.device))

    def training_loss(self, network: nn.Module, batch: tuple[GIMTensors, Tensor], *, em_warmup: bool = False,
                      ) -> Tensor:
        """The GIM loss (:func:`~scigen.singlecell.gim.objective.gim_loss`) of ``batch = (tensors, idx)``: the
        training contexts' statistics and the indices of a minibatch of them. ``em_warmup``: the E-step
        uses the head's prior only (``fit`` sets it for the first ``config.em_warmup`` share of the steps)."""
        cfg = self.config
        tensors, idx = batch
        if tensors.n.device != idx.device:
            tensors = tensors.to(idx.device)
        bw = cfg.kds_bandwidth or float(np.sqrt(self.metadata["dim"]))
        return gim_loss(network, tensors, idx, mode=cfg.training, backend=cfg.backend, prior=cfg.target_prior,
                        samples=cfg.mc_samples, tau=cfg.temperature, l1=cfg.l1, acyclic=cfg.acyclic,
                        target_l1=cfg.target_l1, map_prior_scale=cfg.map_prior_scale, kds_weight=cfg.kds_weight,
                        bandwidth=bw, per_context_prior=tuple(cfg.per_context_prior), em_warmup=em_warmup,
                        normaliser=cfg.normaliser)

    # ------------------------------------------------------------------ interventions for conditions
    def _conditions(self, conditions: Any) -> tuple[list[str], np.ndarray, np.ndarray]:
        md = self.metadata
        if hasattr(conditions, "obs") and hasattr(conditions, "n_obs"):  # an AnnData: its perturbed contexts
            keys = md["keys"]
            ctx = read_contexts(conditions, perturbation_key=keys["perturbation_key"], dose_key=keys["dose_key"],
                                control=keys["control"], features_key=None if md["onehot"] else self.config.features_key,
                                use_rep=keys["use_rep"], layer=keys["layer"], min_cells=1, require_control=False)
            keep = [i for i, n in enumerate(ctx.names) if n != keys["control"]]
            if md["onehot"]:
                import pandas as pd

                tab = pd.DataFrame({keys["dose_key"]: ctx.doses[keep]}, index=[ctx.names[i] for i in keep])
                return condition_table(tab, dose_key=keys["dose_key"], feature_names=md["feature_names"],
                                       onehot=md["onehot"])
            if ctx.features.shape[1] != md["n_features"]:
                raise InvalidInputError(f"the AnnData's features have {ctx.features.shape[1]} dimensions; the model "
                                        f"was trained on {md['n_features']}")
            return [ctx.names[i] for i in keep], ctx.doses[keep], ctx.features[keep]
        return condition_table(conditions, dose_key=md["keys"]["dose_key"], feature_names=md["feature_names"],
                               onehot=md["onehot"])

    def _nearest_context(self, gamma: Tensor, dose: Tensor) -> Tensor:
        """Per-context baseline: the training context nearest in (standardised features, log1p dose)."""
        md = self.metadata
        g0, d0 = self._inputs(md["context_features"], md["context_doses"])
        ctrl = torch.tensor([n == self.config.control for n in md["context_names"]], device=self.device)
        a = torch.cat([gamma, torch.log1p(dose)[:, None]], 1)
        b = torch.cat([g0, torch.log1p(d0)[:, None]], 1)
        dist = torch.cdist(a, b).masked_fill(ctrl[None], float("inf"))
        return dist.argmin(1)

    @torch.no_grad()
    def _intervention(self, gamma: Tensor, dose: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """``(P(target), μ_ψ, s_ψ, ψ_logscale)`` ``[K, d]`` in the standardised space."""
        net, cfg = self.network, self.config
        if not cfg.use_head:
            k = self._nearest_context(gamma, dose)
            logits = net.ctx_logits[k]
            mu, ls = net.ctx_shift[k], net.ctx_logscale[k] if cfg.noise_intervention else torch.zeros_like(net.ctx_shift[k])
            log_s = torch.full_like(mu, float(np.log(cfg.map_prior_scale)))
        else:
            logits, mu, log_s, ls = net.head(gamma, dose)
            if cfg.training == "map" and not self._em:
                log_s = torch.full_like(mu, float(np.log(cfg.map_prior_scale)))
        probs = torch.softmax(logits, -1) if cfg.target_prior == "categorical" else torch.sigmoid(logits)
        return probs, mu, torch.exp(log_s), ls

    def intervention_targets(self, conditions: Any):
        """``P(target)`` per condition (rows ``"<perturbation>@<dose>"``) and variable (columns)."""
        import pandas as pd

        self.require_trained("intervention_targets")
        names, doses, feats = self._conditions(conditions)
        probs = self._intervention(*self._inputs(feats, doses))[0].cpu().numpy()
        return pd.DataFrame(probs, index=[f"{n}@{d:g}" for n, d in zip(names, doses, strict=False)],
                            columns=self.metadata["var_names"])

    def graph(self):
        """The learned ``W`` as a DataFrame (row = cause, column = effect), in standardised units."""
        import pandas as pd

        self.require_trained("graph")
        w = self.network.causal.w.detach().cpu().numpy()
        names = self.metadata["var_names"]
        return pd.DataFrame(w, index=names, columns=names)

    # ------------------------------------------------------------------ prediction
    @torch.no_grad()
    def _draw(self, i_pat: Tensor, psi: Tensor, ls: Tensor, g) -> Tensor:
        """Cells ``[n, d]`` (standardised) for per-cell interventions ``I, ψ, ψ_logscale`` ``[n, d]``; ``g``: a
        ``torch.Generator`` or per-cell streams (row ``i`` from its key)."""
        cm = self.network.causal
        shift, lsc = i_pat * psi, i_pat * ls
        eps = streams.randn(shift.shape, generator=g, device=self.device)
        if self.config.backend == "linear_gaussian":
            d = cm.w.shape[0]
            a_inv = torch.linalg.inv(torch.eye(d, device=self.device) - cm.w)
            return (cm.b + shift + torch.exp(cm.log_sigma + lsc) * eps) @ a_inv
        mean, cov = sde_moments(cm.w, cm.log_decay, cm.b, cm.log_sigma, shift, lsc)
        chol = torch.linalg.cholesky(cov + 1e-6 * torch.eye(cov.shape[-1], device=self.device))
        return mean + (chol @ eps.unsqueeze(-1)).squeeze(-1)

    def _targets(self, p: Tensor, g) -> Tensor:
        """One target index per cell from the categorical ``p [n, d]``: ``torch.multinomial`` with a generator;
        with per-cell streams by inversion, ``#{j : F_j <= u}`` for ``F`` the cumulative ``p`` and ``u`` the
        cell's keyed uniform (the same distribution, drawn from the cell's key alone)."""
        if isinstance(g, torch.Generator):
            return torch.multinomial(p, 1, generator=g)[:, 0]
        u = streams.rand((p.shape[0],), generator=g, dtype=p.dtype, device=p.device)
        cdf = torch.cumsum(p, -1)
        return (cdf / cdf[:, -1:] <= u[:, None]).sum(-1).clamp_(max=p.shape[-1] - 1)

    def predict_standardised(self, names, doses, feats, n_cells: int, mode: str, seed: int | None, *,
                             keys: Tensor | None = None):
        """Standardised cells ``[K, n_cells, d]``; ``mode`` is the ``intervention`` of :meth:`sample`.

        ``keys`` (``[n]`` cell indices; ``n_cells`` is then ignored): cell ``i`` of condition ``k`` draws from its
        own stream keyed by ``(seed, keys[i], k)`` (:meth:`~scigen.core.streams.SampleStreams.children`), so it
        does not depend on the other cells drawn. ``None``: one ``torch.Generator`` for all cells."""
        d = self.metadata["dim"]
        if keys is None:
            g = self.generator(seed)

            def gen(k: int):
                return g
        else:
            seed = self.sample_seed(seed)
            cells = streams.SampleStreams(seed, keys.to(self.device))
            n_cells = len(cells)
            rows = torch.arange(n_cells, device=self.device)

            def gen(k: int):
                return cells.children(rows, torch.full_like(rows, k))
        if names is None:  # the observational (no-intervention) model
            z = torch.zeros(n_cells, d, device=self.device)
            return self._draw(z, z, z, gen(0))[None]
        probs, mu, s, ls = self._intervention(*self._inputs(feats, doses))
        out = []
        for k in range(len(names)):
            g = gen(k)
            p, m, sk, lk = (v[k].expand(n_cells, d) for v in (probs, mu, s, ls))
            if mode == "map":
                if self.config.target_prior == "categorical":
                    i_pat = torch.nn.functional.one_hot(p.argmax(-1), d).float()
                else:
                    i_pat = (p > 0.5).float()
                psi = m
            else:
                if self.config.target_prior == "categorical":
                    i_pat = torch.nn.functional.one_hot(self._targets(p, g), d).float()
                else:
                    i_pat = (streams.rand(p.shape, generator=g, device=self.device) < p).float()
                psi = m + sk * streams.randn(m.shape, generator=g, device=self.device)
            out.append(self._draw(i_pat, psi, lk, g))
        return torch.stack(out)

    def sample(self, conditions: Any = None, *, n_samples: int = 100, intervention: str | None = None,
               seed: int | None = None, method: str | None = None, devices: int = 1):
        """``n_samples`` generated cells per condition as an AnnData.

        ``conditions``: a DataFrame indexed by perturbation with the dose column and the training's feature
        columns, an AnnData (its perturbed contexts), or ``None`` (the unperturbed, observational model).
        ``intervention``: ``"map"`` (the most probable intervention; default ``config.predict_mode``) or
        ``"mixture"`` (a fresh ``(I, ψ)`` per cell). GIM draws from its causal model without an engine
        solver, so ``method`` takes no value (its old ``"map"``/``"mixture"`` meaning is deprecated: use
        ``intervention``). Output: the representation as trained (for ``use_rep="X_pca"`` with
        ``varm["PCs"]`` at fit, ``X`` holds the gene-space inverse, :mod:`scigen.singlecell.gim.genes`),
        ``obs[perturbation_key]``, ``obs[dose_key]``, ``obs["gim_condition"]``; ``uns["gim"]`` holds the
        provenance and the target probabilities.

        Cell ``i`` of condition ``k`` (its noise and, with ``intervention="mixture"``, its ``(I, ψ)``) draws from
        its own stream keyed by ``(seed, i, k)`` (:class:`~scigen.core.streams.SampleStreams`): the first ``m``
        of ``n_samples`` cells per condition are ``sample(..., n_samples=m)``, and ``devices=N`` splits the cells
        over ``N`` processes (Lightning Fabric, :func:`~scigen.core.system.sharded.sample_in_shards`) with the
        same result (with ``devices > 1`` on the CPU the script is re-launched per process: call it under
        ``if __name__ == "__main__"``). :meth:`evaluate` draws from one seeded generator, as before.
        """
        from scigen.core.system.sharded import sample_in_shards

        if method is not None:
            if method not in _MODES:
                raise InvalidInputError(f"method: GIM samples its causal model without an engine solver, so method "
                                        f"takes no value, got {method!r}; the map/mixture choice is intervention=")
            intervention = renamed_kwarg(intervention, method, old="method", new="intervention", where="GIM.sample")
        self.require_trained("sample")
        width = max(int(self.metadata["dim"]), len(self.metadata.get("var_names") or []))
        n_cells = check_count(n_samples, "n_samples", maximum=max_count_for_memory(24 * width),
                              why=f"cells of {width} features per condition would not fit in memory")
        md = self.metadata
        keys = md["keys"]
        draw, mode, (names, doses, _) = self._cell_draw(conditions, intervention, seed)
        labels = [keys["control"]] if names is None else names

        z = sample_in_shards(draw, n_cells, devices=devices).transpose(0, 1)  # [K, n, d]
        x = z.reshape(-1, md["dim"]).cpu().double() * torch.tensor(md["scale"]) + torch.tensor(md["center"])
        obs = {keys["perturbation_key"]: np.repeat(labels, n_cells), keys["dose_key"]: np.repeat(doses, n_cells),
               "gim_condition": np.repeat([f"{n}@{d:g}" for n, d in zip(labels, doses, strict=False)], n_cells)}
        prov = {"system": self.key(), "version": md["version"], "mode": mode,
                "seed": self.sample_seed(seed),
                "config": self.config.model_dump(mode="json"), "trained_steps": md.get("trained_steps", 0),
                "trained_contexts": len(md["contexts"]), "use_rep": keys["use_rep"], "layer": keys["layer"]}
        if names is not None:
            prov["target_probabilities"] = self.intervention_targets(conditions).to_numpy().tolist()
        inv = md.get("pca_inverse")
        genes = pca_inverse(x.numpy(), inv) if inv else None
        return to_anndata(x, obs=obs, use_rep=keys["use_rep"], layer=keys["layer"], features=md["var_names"],
                          provenance=prov, uns_key=UNS_KEY, gene_values=genes,
                          gene_names=inv["genes"] if inv else None)

    def _cell_draw(self, conditions: Any, intervention: str | None, seed: int | None):
        """``(draw, mode, (names, doses, features))``: ``draw(keys)`` gives the standardised cells ``[m, K, d]`` with
        these indices under each of the ``K`` conditions."""
        mode = self.config.predict_mode if intervention is None else intervention
        if mode not in _MODES:
            raise InvalidInputError(f"intervention must be one of {_MODES}, got {mode!r}")
        if conditions is None:
            names, doses, feats = None, np.zeros(1), None
        else:
            names, doses, feats = self._conditions(conditions)

        def draw(keys: Tensor) -> Tensor:  # [m, K, d]: one row per cell index
            return self.predict_standardised(names, doses, feats, len(keys), mode, seed, keys=keys).transpose(0, 1)

        return draw, mode, (names, doses, feats)

    def sample_draw(self, *, conditions: Any = None, intervention: str | None = None, seed: int | None = None):
        """``draw(keys)`` for :meth:`~scigen.core.system.base.System.sample_to`: cell ``i`` of every condition of
        :meth:`sample`, ``cells`` ``[m, K, d]`` in the trained representation's units (``K`` conditions in the
        order :meth:`sample` lists them, one for ``conditions=None``) and, with a PCA inverse, ``genes``
        ``[m, K, n_genes]``: ``model.sample_to("cells", 10**6, conditions=df, devices=4, chunk_size=8192)`` writes
        one folder of ``.npy`` files, ``cells[i, k]`` equal to ``sample``'s cell ``i`` of condition ``k``."""
        self.require_trained("sample")
        md = self.metadata
        std, _, _ = self._cell_draw(conditions, intervention, seed)
        scale, center = torch.tensor(md["scale"]), torch.tensor(md["center"])
        inv = md.get("pca_inverse")

        def draw(keys: Tensor) -> dict[str, Tensor]:
            x = std(keys).cpu().double() * scale + center  # [m, K, d]
            out = {"cells": x}
            if inv:
                m, k, d = x.shape
                out["genes"] = torch.from_numpy(pca_inverse(x.reshape(m * k, d).numpy(), inv)).reshape(m, k, -1)
            return out

        return draw

    def predict(self, conditions: Any = None, *, n_cells: int | None = None, mode: str | None = None,
                seed: int | None = None):
        """Deprecated (one release): :meth:`sample` with ``n_samples = n_cells`` and ``intervention = mode``
        (in scigen ``predict`` returns predicted properties, as in UniGEM)."""
        warn_renamed("GIM.predict(conditions, n_cells=, mode=)", "GIM.sample(conditions, n_samples=, intervention=)")
        return self.sample(conditions, n_samples=100 if n_cells is None else n_cells, intervention=mode, seed=seed)

    def sample_for_cli(self, n_samples: int, seed: int, devices: int = 1) -> Any:
        """``scigen singlecell gim sample``: cells of the unperturbed model (``generate`` takes conditions)."""
        return self.sample(None, n_samples=n_samples, seed=seed, devices=devices)

    # ------------------------------------------------------------------ evaluate
    def eval_contexts(self, adata: Any) -> dict[str, Any]:
        """The perturbed contexts of ``adata`` outside the training split, as the model reads them:
        ``names``, ``doses``, ``features``, ``cells`` (data units), ``split`` and ``truth`` (true 0/1 targets
        from ``uns["gim_truth"]``, or ``None``)."""
        from scigen.singlecell.gim.synthetic import true_targets

        self.require_trained("evaluate")
        md, cfg = self.metadata, self.config
        keys = md["keys"]
        split_key = cfg.split_key
        splits = None
        if split_key is not None and split_key in adata.obs:
            splits = tuple(s for s in sorted(set(adata.obs[split_key].astype(str))) if s != cfg.train_split) or None
        ctx = read_contexts(adata, perturbation_key=keys["perturbation_key"], dose_key=keys["dose_key"],
                            control=keys["control"], features_key=None if md["onehot"] else cfg.features_key,
                            use_rep=keys["use_rep"], layer=keys["layer"], split_key=split_key, splits=splits,
                            min_cells=2, require_control=False)
        if ctx.dim != md["dim"]:
            raise InvalidInputError(f"adata has {ctx.dim} features; the model expects {md['dim']}")
        keep = [i for i, n in enumerate(ctx.names) if n != keys["control"]]
        if not keep:
            raise InvalidInputError("adata has no perturbed context to evaluate")
        if md["onehot"]:
            feats = np.stack([np.eye(len(md["onehot"]))[md["onehot"].index(ctx.names[i])] for i in keep])
        else:
            if ctx.features.shape[1] != md["n_features"]:
                raise InvalidInputError(f"features have {ctx.features.shape[1]} dimensions; the model was trained "
                                        f"on {md['n_features']}")
            feats = ctx.features[keep]
        names = [ctx.names[i] for i in keep]
        truth = true_targets(adata, names)
        if truth is not None and (truth.shape[1] != md["dim"] or ctx.var_names != md["var_names"]):
            truth = None  # the truth names genes; this representation does not
        return {"names": names, "doses": ctx.doses[keep], "features": feats, "cells": [ctx.cells[i] for i in keep],
                "split": [ctx.split[i] or "all" for i in keep], "truth": truth}

    def predict_contexts(self, ev: dict[str, Any], *, n_samples: int | None = None, intervention: str | None = None,
                         seed: int | None = None, n_cells: int | None = None,
                         mode: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(cells [K, n_samples, d] in data units, P(target) [K, d])`` for :meth:`eval_contexts`' output
        (default 200; ``n_cells`` / ``mode``: the deprecated names of ``n_samples`` / ``intervention``)."""
        n_samples = renamed_kwarg(n_samples, n_cells, old="n_cells", new="n_samples", where="GIM.predict_contexts")
        n_samples = 200 if n_samples is None else n_samples
        intervention = renamed_kwarg(intervention, mode, old="mode", new="intervention",
                                     where="GIM.predict_contexts")
        md = self.metadata
        mode = self.config.predict_mode if intervention is None else intervention
        if mode not in _MODES:
            raise InvalidInputError(f"intervention must be one of {_MODES}, got {mode!r}")
        z = self.predict_standardised(ev["names"], ev["doses"], ev["features"], check_count(n_samples, "n_samples"),
                                      mode, seed)
        x = z.cpu().double().numpy() * np.asarray(md["scale"]) + np.asarray(md["center"])
        return x, self._intervention(*self._inputs(ev["features"], ev["doses"]))[0].cpu().numpy()

    def evaluate(self, adata: Any, *, n_samples: int | None = None, intervention: str | None = None,
                 seed: int | None = None, n_cells: int | None = None, mode: str | None = None,
                 cell_eval: bool | None = None) -> dict[str, float]:
        """Mean ``MMD``, ``energy``, ``W2``, ``R2_means`` per split (keys ``"W2@ood_partial"``) and over all
        evaluated contexts (``"W2"``) between ``n_samples`` (default 200) generated and the observed cells of
        every perturbed context outside the training split; ``target_AUROC`` pooled over (context,
        variable) pairs when the true targets are known; ``SHD`` of ``|W| > edge_threshold`` when the
        true graph is known (:func:`scigen.singlecell.gim.metrics.score_contexts`).

        ``cell_eval``: cell-eval's per-perturbation metrics (``"cell_eval/<metric>"``, means over the
        contexts; :mod:`scigen.singlecell.gim.celleval`, the ``celleval`` extra) on the same predictions in
        gene space. ``None``: when cell-eval is installed and ``adata`` holds expression (values >= 0);
        ``True``: required; ``False``: none."""
        from scigen.singlecell.gim.metrics import score_contexts

        n_samples = renamed_kwarg(n_samples, n_cells, old="n_cells", new="n_samples", where="GIM.evaluate")
        intervention = renamed_kwarg(intervention, mode, old="mode", new="intervention", where="GIM.evaluate")
        ev = self.eval_contexts(adata)
        pred, probs = self.predict_contexts(ev, n_samples=200 if n_samples is None else n_samples,
                                            intervention=intervention, seed=seed)
        out = score_contexts(pred, ev, probs)
        w_true = adata.uns.get("gim_truth", {}).get("W") if hasattr(adata, "uns") else None
        if w_true is not None and np.shape(w_true) == (self.metadata["dim"],) * 2:
            out["SHD"] = float(shd(self.network.causal.w.detach().cpu(), torch.as_tensor(np.asarray(w_true)),
                                   self.config.edge_threshold))
        from scigen.core.validation import optional_package

        if optional_package(cell_eval, "cell_eval", install="scigen-singlecell[celleval]", what="evaluate(cell_eval=True)"):
            from scigen.singlecell.gim.celleval import cell_eval_scores

            try:
                out.update(cell_eval_scores(self, adata, n_samples=200 if n_samples is None else n_samples, seed=seed))
            except InvalidInputError:
                if cell_eval:  # asked for: say why it cannot run; by default skip data cell-eval cannot read
                    raise
        return out

    # ------------------------------------------------------------------ CLI hooks and demo
    @classmethod
    def default_data(cls, quick: bool = False):
        from scigen.singlecell.gim.synthetic import synthetic_screen

        if quick:
            return synthetic_screen(8, n_functions=12, n_ood_functions=6, n_control=400, seed=0)
        return synthetic_screen(10, seed=0)

    def example_condition(self, data: Any) -> tuple:
        """One perturbed context of ``data`` as a one-row conditions table (features + dose)."""
        import pandas as pd

        md = self.metadata if self.metadata.get("dim") is not None else None
        cfg = self.config
        obs = data.obs
        row = int(np.flatnonzero(obs[cfg.perturbation_key].astype(str).to_numpy() != cfg.control)[0])
        name, dose = str(obs[cfg.perturbation_key].iloc[row]), float(obs[cfg.dose_key].iloc[row])
        tab = {cfg.dose_key: [dose]}
        if cfg.features_key is not None and cfg.features_key in data.obsm:
            f = np.asarray(data.obsm[cfg.features_key])[row]
            names = md["feature_names"] if md else [f"{cfg.features_key}_{i}" for i in range(len(f))]
            tab.update({n: [float(v)] for n, v in zip(names, f, strict=False)})
        return (pd.DataFrame(tab, index=[name]),)

    @classmethod
    def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
        """GIM on the synthetic screen against the unstructured baseline (:mod:`scigen.singlecell.gim.demo`)."""
        from scigen.singlecell.gim.demo import run_demo

        return run_demo(cls, out, quick=quick)


class _GIMFitLoss:
    """The loss one ``GIM.fit`` trains: its contexts' statistics and the EM warm-up counter (training-mode
    calls so far, one per optimizer step; the first ``config.em_warmup · max_steps`` are warm-up steps).
    ``state_dict`` / ``load_state_dict`` put the counter in the engine's checkpoints, so a resumed run warms
    up exactly as long as an uninterrupted one."""

    def __init__(self, system: GIM, tensors: GIMTensors, max_steps: int) -> None:
        self.system, self.tensors, self.max_steps, self.calls = system, tensors, max_steps, 0

    def __call__(self, network: nn.Module, idx: Tensor) -> Tensor:
        if self.tensors.n.device != idx.device:  # the trainer moved the network and the batches
            self.tensors = self.tensors.to(idx.device)
        if network.training:
            self.calls += 1
        share = self.system.config.em_warmup
        warm = share > 0 and self.calls <= share * self.max_steps
        return self.system.training_loss(network, (self.tensors, idx), em_warmup=warm)

    def state_dict(self) -> dict[str, int]:
        return {"calls": self.calls}

    def load_state_dict(self, state: dict) -> None:
        self.calls = int(state["calls"])
