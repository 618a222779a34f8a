"""Inverse Flow (Zhang & Zhou, ICML 2025): denoising from noisy data alone, for a known noise model.

Given only observations ``x1 ~ p(x1 | x0)`` and the noise model, ICM learns a one-step consistency map
and IFM a velocity field from noisy to clean (:mod:`scigen.singlecell.inverseflow.objective`). Cells
(AnnData, cells × features) use the engine's residual MLP, images (numpy / xarray) its small U-Net
(``InverseFlow(...).fit(noisy_images)`` with ``[N, H, W]`` numpy or an ``xarray.DataArray``).

Example::

    from scigen.singlecell.inverseflow import Gaussian, InverseFlow
    from scigen.singlecell.inverseflow.data import circle_toy

    adata = circle_toy(125, sigma=0.2, seed=0)          # X = noisy points; layers["clean"] = the hidden truth
    adata.layers["noisy"] = adata.X.copy()
    m = InverseFlow(noise=Gaussian(0.2), algorithm="icm").fit(adata, layer="noisy", max_steps=300)
    m.denoise(adata)              # adata.layers["inverse_flow"]; provenance in adata.uns["inverse_flow"]
    scores = m.evaluate(adata, clean_layer="clean")     # MSE / PSNR / correlation to the truth, when it is known

Every denoising run passes through the collapse guard (:mod:`scigen.singlecell.inverseflow.guard`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from scigen.core.errors import InvalidInputError
from scigen.core.samplers import no_progress_bars
from scigen.core.system import DemoResult, System, TrainingHistory
from scigen.core.validation import check_count
from scigen.singlecell.inverseflow.config import InverseFlowConfig
from scigen.singlecell.inverseflow.data import Observations, read_observations, write_like
from scigen.singlecell.inverseflow.guard import check_collapse, collapse_report
from scigen.singlecell.inverseflow.model import build_network
from scigen.singlecell.inverseflow.noise import (
    CallableNoise,
    NoiseMismatchWarning,
    NoiseModel,
    noise_from_spec,
    noise_mismatch,
)
from scigen.singlecell.inverseflow.objective import icm_loss, ifm_loss, invert, karras_times

__all__ = ["InverseFlow", "keyed_subset"]


def keyed_subset(n_obs: int, n_samples: int, seed: int) -> np.ndarray:
    """``n_samples`` of the rows ``0..n_obs-1`` drawn without replacement, sorted: the rows with the smallest of
    one uniform per row, row ``j``'s keyed by ``(seed, j)`` (:class:`~scigen.core.streams.SampleStreams`). The
    ``n_obs`` uniforms are i.i.d., so every ``n_samples``-subset is equally likely (the order statistics of an
    exchangeable sequence), and the subset for ``k`` rows is contained in the subset for any ``n >= k``."""
    from scigen.core.streams import SampleStreams

    u = SampleStreams(seed, torch.arange(n_obs)).rand((n_obs,), dtype=torch.float64)
    return np.sort(torch.argsort(u, stable=True)[:n_samples].numpy())


class _BackedRows(torch.utils.data.Dataset):
    """The cells of a backed AnnData as a Dataset of float32 rows: a batch is read in one
    :class:`~scigen.singlecell.backed.RowReader` call, the float32 tensor the in-memory AnnData gives."""

    def __init__(self, reader) -> None:
        self.reader = reader

    def __len__(self) -> int:
        return self.reader.n_obs

    def __getitem__(self, i: int) -> Tensor:
        return self.__getitems__([i])[0]

    def __getitems__(self, indices) -> Tensor:
        return torch.as_tensor(self.reader.read(indices), dtype=torch.float32)

    def head(self, n: int) -> Tensor:
        return self.__getitems__(np.arange(min(n, len(self))))


def _stacked(batch: Tensor) -> Tensor:
    return batch

METHODS = {"icm": "consistency", "ifm": "euler"}


class InverseFlow(System):
    """Inverse Flow denoising (ICM / IFM); see the module docstring."""

    domain = "singlecell"
    name = "inverseflow"
    description = "Denoising without clean data for a known noise model (Inverse Flow: ICM and IFM)."
    Config = InverseFlowConfig

    def __init__(self, config: InverseFlowConfig | dict[str, Any] | None = None, *,
                 noise: NoiseModel | dict | str | None = None, **overrides: Any) -> None:
        self._noise_obj: NoiseModel | None = None
        if noise is not None:
            if isinstance(noise, CallableNoise):
                self._noise_obj = noise
            elif not isinstance(noise, (NoiseModel, dict, str)):
                raise InvalidInputError(f"noise must be a NoiseModel (scigen.singlecell.inverseflow.noise), a "
                                        f"dict spec or a kind name, got {type(noise).__name__}")
            from scigen.core.system.config import make_config

            base = make_config(self.Config, config).model_dump(mode="json")
            base["noise"] = noise.spec() if isinstance(noise, NoiseModel) else noise  # replaced, never merged
            config = base
        super().__init__(config, **overrides)

    # ------------------------------------------------------------------ noise, grid, network
    @property
    def noise(self) -> NoiseModel:
        """The noise model (rebuilt from ``config.noise``; a user callable is kept on the object only)."""
        obj = getattr(self, "_noise_obj", None)
        if obj is not None:
            return obj
        if self.config.noise.get("kind") == "callable":  # a loaded run: denoising needs no sample()
            return CallableNoise(_unavailable(self.config.noise.get("name", "user")), self.config.noise.get("name", "user"))
        return noise_from_spec(self.config.noise)

    def times(self, n: int | None = None) -> Tensor:
        c = self.config
        return karras_times(c.n_steps if n is None else n, c.t_min, c.t_max, c.rho)

    def network_seed(self) -> int:
        """The seed of the ``fit`` that built the network (``metadata["seed"]``), else ``config.train.seed``."""
        return int(self.metadata.get("seed", self.training_options().seed))

    def build_network(self) -> nn.Module:
        kind = self.metadata.get("kind")
        if kind is None:
            return nn.Module()  # placeholder until fit() has seen the data
        try:
            return build_network(self.config, kind, int(self.metadata["channels"]))
        except ValueError as exc:
            raise InvalidInputError(str(exc)) from None

    # ------------------------------------------------------------------ fit
    def fit(self, data: Any, *, max_steps: int | None = None, layer: str | None = None,
            noise: NoiseModel | None = None, val_data: Any = None, kind: str | None = None,
            on_noise_mismatch: str = "warn", backed: bool = False, **options: Any) -> InverseFlow:
        """Train on noisy ``data`` only (AnnData ``X`` / ``layers[layer]``, a cells × features array with
        ``kind="vectors"``, images ``[N, H, W]`` / ``[N, C, H, W]`` / xarray, or one image ``[H, W]`` with
        ``kind="image"``); ``options`` override ``config.train`` for this call. A plain 2-D array without
        ``kind`` is refused: it could be either (:mod:`scigen.singlecell.inverseflow.data`).

        ``layer`` defaults to ``config.layer``; ``noise`` (a :class:`NoiseModel`) replaces the configured one.
        A second ``fit`` continues training the same network and extends its history
        (:meth:`~scigen.core.system.System.continues_training`); a new model trains fresh weights. Images are cut into ``config.n_patches``
        random ``config.patch``² crops. After training, the collapse guard runs on the training data
        (``metadata["collapse"]``; a :class:`~scigen.singlecell.inverseflow.guard.CollapseWarning` if it fires).
        Before training, data that look like raw counts (non-negative integers above 1) under a Gaussian
        model or ``Poisson(k ≠ 1)`` get a :class:`~scigen.singlecell.inverseflow.noise.NoiseMismatchWarning`
        naming the fix (:func:`~scigen.singlecell.inverseflow.noise.noise_mismatch`); ``on_noise_mismatch``:
        ``"warn"``, ``"raise"`` (an :class:`~scigen.core.errors.InvalidInputError`; the CLI's choice when
        ``--noise`` is not given) or ``"ignore"``.

        Data larger than memory: an AnnData opened with ``anndata.read_h5ad(path, backed="r")`` (or a path to an
        ``.h5ad`` file with ``backed=True``; without it a path is read into memory) trains reading only the cells
        of each batch from the file (``X`` or a layer, dense or CSR), after one streaming pass that checks the
        data against the noise model; same batches and weights as the AnnData in memory
        (:mod:`scigen.singlecell.backed`). ``num_workers=N`` reads the batches in N worker processes.
        """
        if val_data is not None:
            raise InvalidInputError("InverseFlow takes no val_data: there is no clean target to validate "
                                    "against; score a truth-known set with evaluate()")
        self.training_options().fit_kwargs(max_steps=max_steps, **options)  # every option checked before any change
        if on_noise_mismatch not in ("warn", "raise", "ignore"):
            raise InvalidInputError(f"on_noise_mismatch must be 'warn', 'raise' or 'ignore', got {on_noise_mismatch!r}")
        if noise is not None:
            if not isinstance(noise, NoiseModel):
                raise InvalidInputError(f"noise must be a NoiseModel, got {type(noise).__name__}")
            self._noise_obj = noise if isinstance(noise, CallableNoise) else None
            self.config = self.config.model_copy(update={"noise": noise.spec()})
        if self.config.noise.get("kind") == "callable" and getattr(self, "_noise_obj", None) is None:
            raise InvalidInputError(f"this run's noise model {self.config.noise.get('name')!r} is a user callable "
                                    "that a saved run cannot hold: pass fit(..., noise=CallableNoise(fn))")
        layer = self.config.layer if layer is None else layer
        from scigen.singlecell.backed import is_backed, open_input

        data = open_input(data, backed)
        nm = self.noise
        if is_backed(data):
            obs, counts_top = self._backed_observations(data, layer, kind, nm)
            mismatch = "" if on_noise_mismatch == "ignore" or counts_top is None else \
                noise_mismatch(nm, torch.tensor([counts_top]), _field(obs, layer))
        else:
            obs = read_observations(data, layer=layer, kind=kind)
            nm.check_data(obs.values, _field(obs, layer))
            mismatch = "" if on_noise_mismatch == "ignore" else noise_mismatch(nm, obs.values, _field(obs, layer),
                                                                                 images=obs.kind == "images")
        if mismatch and on_noise_mismatch == "raise":
            raise InvalidInputError(mismatch)
        if mismatch:
            import warnings

            warnings.warn(mismatch + " (on_noise_mismatch='ignore' silences this)", NoiseMismatchWarning,
                          stacklevel=2)
        seed = int(options.get("seed", self.training_options().seed))
        # the noise model's contract, checked before any training (own generator: the caller's RNG untouched)
        on_disk = isinstance(obs.matrix, _BackedRows)
        nm.draw(obs.matrix.head(2) if on_disk else obs.values[:2], torch.Generator().manual_seed(seed))
        train = obs.matrix if on_disk else obs.values
        if obs.kind == "images":
            train = self._patches(obs.values, seed)
        previous = self.metadata
        self.metadata = {"kind": obs.kind, "channels": int(obs.values.shape[1]), "seed": seed, "layer": layer,
                         "source": obs.source, "noise": nm.spec(), "shape": list(obs.values.shape[1:]),
                         "version": _version()}
        if not self.continues_training(previous, ("kind", "channels", "shape")):
            self.network = self.make_network().to(self.device if _has_params(self.network) else "cpu")
            self.history = TrainingHistory()
        times = self.times()  # the training grid, computed once for this call and passed to every step
        if on_disk:
            options = {"collate_fn": _stacked, **options}
        self.train_network(train, max_steps=max_steps, loss_fn=lambda net, batch: self._loss(net, batch, times),
                           **options)
        probe = (obs.matrix.head(4096) if on_disk else obs.values[: 4096]) if obs.kind == "vectors" else \
            obs.values[: 4]
        with no_progress_bars():  # part of fit: its sampler bar would be a bar the fit's progress= did not ask for
            report = collapse_report(probe, self._denoise_tensor(probe), self.config.collapse_ratio)
        self.metadata["collapse"] = report
        check_collapse(report, "warn")
        return self

    def _backed_observations(self, data: Any, layer: str | None, kind: str | None,
                             nm: NoiseModel) -> tuple[Observations, float | None]:
        """The observations of a backed AnnData, unread (their rows in a :class:`_BackedRows`), after one streaming
        pass that checks every block (finite, real, the noise model's support) and finds whether the data are
        count-like (``count_like`` over all blocks: the largest value when they are, else ``None``)."""
        from scigen.singlecell.backed import RowReader
        from scigen.singlecell.io import check_anndata

        if kind not in (None, "vectors"):
            raise InvalidInputError(f"kind={kind!r}: an AnnData holds cells x features (kind='vectors')")
        check_anndata(data)
        reader = RowReader(data, None, layer)
        rows = _BackedRows(reader)
        field = f"adata.layers[{layer!r}]" if layer is not None else "adata.X"
        integral, top = True, -np.inf
        for _, block in reader.blocks(np.arange(reader.n_obs)):
            x = torch.as_tensor(block, dtype=torch.float32)
            nm.check_data(x, field)
            integral = integral and bool((x >= 0).all()) and bool((x == torch.round(x)).all())
            top = max(top, float(x.max()))
        obs = Observations(torch.empty(0, reader.dim), "vectors", "anndata", layer=layer, matrix=rows)
        return obs, (top if integral and top > 1 else None)

    def _patches(self, images: Tensor, seed: int) -> Tensor:
        from scigen.singlecell.inverseflow.data import random_crops

        factor = 2 ** (len(self.config.channel_mults) - 1)
        return random_crops(images, self.config.patch, self.config.n_patches, factor=factor, seed=seed)

    def training_loss(self, network: nn.Module, batch: Tensor) -> Tensor:
        """The IFM / ICM loss of one batch on the configured time grid (:meth:`times`); usable outside ``fit``."""
        return self._loss(network, batch, self.times())

    def _loss(self, network: nn.Module, batch: Tensor, times: Tensor) -> Tensor:
        if self.config.algorithm == "icm":
            return icm_loss(network, batch, times, noise=self.noise, sigma_data=self.config.sigma_data)
        return ifm_loss(network, batch, times, noise=self.noise)

    def training_budget(self) -> str:
        n = self.training_options().batch_size
        return f"batch {n} observations (images: {n} crops)"

    # ------------------------------------------------------------------ denoising
    def _grid(self, method: str | None, steps: int | None) -> Tensor:
        algo = self.config.algorithm
        want = METHODS[algo]
        if method is not None and method != want:
            raise InvalidInputError(f"method={method!r}: an {algo.upper()} model denoises with {want!r} "
                                    f"(valid: {want!r} or None)")
        if algo == "icm":
            if steps not in (None, 1):
                raise InvalidInputError(f"steps={steps!r}: ICM denoises in one step (steps=1 or None)")
            return self.times()
        steps = self.config.n_steps - 1 if steps is None else check_count(steps, "steps")
        return self.times(steps + 1)

    @torch.no_grad()
    def _denoise_tensor(self, x: Tensor, method: str | None = None, steps: int | None = None,
                        batch_size: int = 1024, devices: int = 1) -> Tensor:
        """``x`` denoised, ``batch_size`` vectors (or one image) per network pass; ``devices > 1`` splits the
        rows over processes in whole batches (:func:`~scigen.core.system.sharded.sample_in_shards` with
        ``block=batch_size``), so every row meets the same batch as in one process: the same numbers."""
        if devices != 1:
            from scigen.core.system.sharded import sample_in_shards

            block = batch_size if self.metadata["kind"] == "vectors" else 1
            n = x.shape[0]
            return sample_in_shards(lambda keys: _padded(keys, n, x.shape[1:], lambda k: self._denoise_tensor(
                x[k], method, steps, batch_size)), n, devices=devices, block=block)
        times = self._grid(method, steps)
        net = self.network
        net.eval()
        dev = self.device
        kw = {"algorithm": self.config.algorithm, "noise": self.noise, "sigma_data": self.config.sigma_data}
        if self.metadata["kind"] == "vectors":
            out = [invert(net, x[i:i + batch_size].to(dev), times.to(dev), **kw).cpu()
                   for i in range(0, x.shape[0], batch_size)]
            return torch.cat(out)
        factor = 2 ** (len(self.config.channel_mults) - 1)
        H, W = x.shape[-2:]
        ph, pw = (-H) % factor, (-W) % factor
        outs = []
        for img in x:
            xi = img[None].to(dev)
            if ph or pw:
                mode = "reflect" if ph < H and pw < W else "replicate"
                xi = F.pad(xi, (0, pw, 0, ph), mode=mode)
            outs.append(invert(net, xi, times.to(dev), **kw)[..., :H, :W].cpu())
        return torch.cat(outs)

    def _check_like_training(self, obs: Observations) -> None:
        md = self.metadata
        if obs.kind != md["kind"]:
            raise InvalidInputError(f"this model was trained on {md['kind']}, got {obs.kind} "
                                    f"(shape {tuple(obs.values.shape)})")
        if obs.values.shape[1] != md["channels"]:
            what = "features" if obs.kind == "vectors" else "channels"
            raise InvalidInputError(f"data has {obs.values.shape[1]} {what}; the model was trained on {md['channels']}")

    def _default_layer(self, data: Any, layer: str | None) -> str | None:
        """The trained layer is the default for AnnData input (arrays have none)."""
        if layer is None and hasattr(data, "n_obs") and hasattr(data, "layers"):
            return self.metadata.get("layer")
        return layer

    def _provenance(self, layer: str | None, method: str | None, steps: int | None, report: dict) -> dict:
        md = self.metadata
        return {"system": self.key(), "algorithm": self.config.algorithm, "noise": md["noise"],
                "source_layer": layer, "method": METHODS[self.config.algorithm],
                "steps": 1 if self.config.algorithm == "icm" else (steps or self.config.n_steps - 1),
                "t_min": self.config.t_min, "t_max": self.config.t_max, "n_steps": self.config.n_steps,
                "rho": self.config.rho, "sigma_data": self.config.sigma_data,
                "trained_steps": int(md.get("trained_steps", 0)), "version": md.get("version", ""),
                "collapse": report}

    def denoise(self, data: Any, *, layer: str | None = None, key_added: str | None = None,
                method: str | None = None, steps: int | None = None, copy: bool = False,
                on_collapse: str = "warn", kind: str | None = None, devices: int = 1) -> Any:
        """Denoise ``data``.

        AnnData: writes ``layers[key_added]`` (default ``config.key_added``) and the provenance (algorithm,
        noise, grid, source layer, collapse report) to ``uns[key_added]``; returns the AnnData (a copy
        with ``copy=True``, else the same object). The cells are read and denoised in blocks of
        :data:`~scigen.singlecell.inverseflow.data.ROW_BLOCK` rows (a sparse matrix is never densified
        whole), and the layer has the input's format: a sparse ``X`` / layer gives a sparse layer of the same
        format (exact zeros dropped: count models clamp at 0; a continuous model's output has few zeros),
        a dense one a float32 array. Arrays: returns a numpy array of the input's shape;
        xarray: a DataArray with its dims/coords and the provenance in ``attrs["inverse_flow"]`` (JSON).
        ``on_collapse``: ``"warn"``, ``"raise"`` or ``"ignore"`` when the guard fires. ``kind``: as in
        :meth:`fit` (one ``[H, W]`` image: ``kind="image"``, returned as ``[H, W]``); a 2-D array is a
        cells × features table for a model trained on vectors.

        ``devices=N`` splits the cells (images) over ``N`` processes (Lightning Fabric; call it under
        ``if __name__ == "__main__":``) in whole network batches, so the result equals one process's bit for bit;
        each process reads only its rows, and the denoised values are gathered on every process.
        """

        self.require_trained("denoise")
        from scigen.singlecell.io import check_storable_key

        key = check_storable_key(key_added or self.config.key_added)
        layer = self._default_layer(data, layer)
        obs = read_observations(data, layer=layer, kind=kind, trained=self.metadata.get("kind"), dense=False)
        if obs.source == "anndata":
            return self._denoise_anndata(data, obs, layer, key, method, steps, copy, on_collapse, devices)
        self._check_like_training(obs)
        self.noise.check_data(obs.values, _field(obs, layer))
        out = self._denoise_tensor(obs.values, method, steps, devices=devices)
        report = collapse_report(obs.values, out, self.config.collapse_ratio)
        check_collapse(report, on_collapse)
        prov = self._provenance(layer, method, steps, report)
        if obs.source == "xarray":
            import json

            return write_like(obs, out, {"inverse_flow": json.dumps(prov)})
        return write_like(obs, out)

    def _denoise_anndata(self, data: Any, obs: Observations, layer: str | None, key: str, method: str | None,
                         steps: int | None, copy: bool, on_collapse: str, devices: int = 1) -> Any:
        """Denoise an AnnData block by block (:data:`~scigen.singlecell.inverseflow.data.ROW_BLOCK` rows at a
        time): a sparse matrix is never densified whole, and the layer is written in the input's format
        (a scipy sparse matrix of the same format, exact zeros dropped, or a dense float32 array)."""
        import json

        import scipy.sparse as sp

        from scigen.singlecell.inverseflow.data import iter_rows
        from scigen.singlecell.inverseflow.guard import CollapseStats

        if data.n_vars != self.metadata["channels"]:
            raise InvalidInputError(f"data has {data.n_vars} features; the model was trained on "
                                    f"{self.metadata['channels']}")
        if self.metadata["kind"] != "vectors":
            raise InvalidInputError(f"this model was trained on {self.metadata['kind']}, got vectors "
                                    f"(an AnnData of shape {tuple(data.shape)})")
        self._grid(method, steps)  # a bad method/steps fails before any block is denoised
        field = _field(obs, layer)
        sparse = sp.issparse(obs.matrix) or type(obs.matrix).__name__.endswith(("CSRDataset", "CSCDataset"))
        fmt = getattr(obs.matrix, "format", "csr") if sparse else None
        stats, blocks = CollapseStats(), []
        sharded = None
        if devices != 1:  # every process checks all rows first (a bad row must stop all of them, not one)
            from scigen.core.system.sharded import sample_in_shards
            from scigen.singlecell.inverseflow.data import ROW_BLOCK

            for _, x in iter_rows(data, layer=layer, name=field):
                self.noise.check_data(x, field)

            def denoised(keys: Tensor) -> Tensor:  # this process's rows, read and denoised ROW_BLOCK at a time
                part = data[int(keys[0]):int(keys[-1]) + 1]
                return torch.cat([self._denoise_tensor(x, method, steps) for _, x in
                                  iter_rows(part, layer=layer, name=field)])

            sharded = sample_in_shards(lambda keys: _padded(keys, data.n_obs, (data.n_vars,), denoised), data.n_obs,
                                       devices=devices, block=ROW_BLOCK)
        for rows, x in iter_rows(data, layer=layer, name=field):
            if sharded is None:
                self.noise.check_data(x, field)
                y = self._denoise_tensor(x, method, steps)
            else:
                y = sharded[int(rows[0]):int(rows[-1]) + 1]
            stats.add(x, y)
            y = y.numpy().astype(np.float32)
            blocks.append(sp.csr_matrix(y) if sparse else y)  # csr_matrix drops the exact zeros
        report = stats.report(self.config.collapse_ratio)
        check_collapse(report, on_collapse)
        prov = self._provenance(layer, method, steps, report)
        if sparse:
            out = sp.vstack(blocks, format=fmt) if blocks else sp.csr_matrix(data.shape, dtype=np.float32)
        else:
            out = np.concatenate(blocks) if blocks else np.zeros(data.shape, dtype=np.float32)
        target = data.copy() if copy else data
        target.layers[key] = out
        target.uns[key] = json.loads(json.dumps(prov))
        return target

    def sample(self, data: Any = None, n_samples: int | None = None, *, seed: int | None = None,
               method: str | None = None, steps: int | None = None, layer: str | None = None,
               kind: str | None = None, devices: int = 1) -> Any:
        """Denoise ``n_samples`` observations of ``data`` drawn without replacement by ``seed`` (all, in
        order, when ``n_samples`` is None): an AnnData of those cells with the denoised layer, or an array.

        Inverse Flow maps noisy observations to clean ones, so "sampling" is the denoising of noisy draws;
        :meth:`denoise` is the verb for whole data sets. The subset is keyed by row (:func:`keyed_subset`: the
        rows of ``n_samples = k`` are among those of any larger ``n_samples``, same seed) and the denoising is
        deterministic per cell, so a cell's output depends only on its row. ``devices=N`` denoises the chosen
        cells on ``N`` processes with the one-process result (:meth:`denoise`)."""
        import anndata

        self.require_trained("sample")
        if data is None:
            raise InvalidInputError("InverseFlow.sample needs the noisy data to denoise: sample(data, n_samples=...)")
        if kind == "image" and n_samples not in (None, 1):
            raise InvalidInputError(f"n_samples={n_samples}: kind='image' is one image; pass a stack "
                                    "[N, H, W] to denoise a subset of images")
        n_obs = data.n_obs if isinstance(data, anndata.AnnData) else (1 if kind == "image" else len(data))
        if n_samples is not None:
            n_samples = check_count(n_samples, "n_samples")
            if n_samples > n_obs:
                raise InvalidInputError(f"n_samples={n_samples} exceeds the {n_obs} observations in data")
            rows = keyed_subset(n_obs, n_samples, self.sample_seed(seed))
            data = data[rows].copy() if isinstance(data, anndata.AnnData) else data[rows]
        return self.denoise(data, layer=layer, method=method, steps=steps, copy=False, kind=kind, devices=devices)

    def sample_draw(self, *, data: Any = None, layer: str | None = None, method: str | None = None,
                    steps: int | None = None, seed: int | None = None):
        """``draw(keys)`` for :meth:`~scigen.core.system.base.System.sample_to`: rows ``keys`` of ``data`` denoised,
        ``denoised`` ``[m, features]`` (vectors; AnnData read a block at a time, backed files included):
        ``model.sample_to("denoised.npy", adata.n_obs, data=adata, devices=4, chunk_size=4096)`` writes the
        denoised matrix of every cell without holding it (row ``i`` is ``sample(adata)``'s row ``i``; to write a
        subset pass ``data=adata[rows]``). ``data=None``: the 2-D toy the CLI samples. ``seed``: unused (denoising
        draws nothing; taken as every sample_draw takes it)."""
        import anndata

        from scigen.singlecell.io import read_rep

        self.require_trained("sample")
        if self.metadata.get("kind") != "vectors":
            raise InvalidInputError("sample_to writes denoised vectors (cells); denoise images with denoise()")
        if data is None:
            data = self.default_data(quick=True)
        self._grid(method, steps)  # a bad method/steps fails before any row is read
        if isinstance(data, anndata.AnnData):
            layer = self._default_layer(data, layer)
            n_obs, field = data.n_obs, _field(read_observations(data[:1], layer=layer, dense=False), layer)

            def rows_of(keys: Tensor) -> Tensor:
                arr = read_rep(data, rows=keys.numpy(), layer=layer)
                return torch.as_tensor(np.asarray(arr), dtype=torch.float32)
        else:
            obs = read_observations(data, layer=layer, trained=self.metadata.get("kind"))
            self._check_like_training(obs)
            n_obs, field = obs.values.shape[0], _field(obs, layer)

            def rows_of(keys: Tensor) -> Tensor:
                return obs.values[keys]

        def draw(keys: Tensor) -> dict[str, Tensor]:
            if int(keys.max()) >= n_obs:
                raise InvalidInputError(f"sample_to asked for row {int(keys.max())}; the data has {n_obs} rows "
                                        "(write n_samples = the number of rows)")
            x = rows_of(keys)
            if x.shape[1] != self.metadata["channels"]:
                raise InvalidInputError(f"data has {x.shape[1]} features; the model was trained on "
                                        f"{self.metadata['channels']}")
            self.noise.check_data(x, field)
            return {"denoised": self._denoise_tensor(x, method, steps)}

        draw.block = 1024  # _denoise_tensor's batches: the same rows meet in a batch as in denoise()
        return draw

    def example_condition(self, data: Any) -> tuple:
        return (data,)

    def sample_for_cli(self, n_samples: int, seed: int, devices: int = 1) -> Any:
        if self.metadata.get("kind") != "vectors" or self.metadata.get("channels") != 2:
            raise InvalidInputError("this model was not trained on the 2-D toy: denoise your data with "
                                    "`scigen singlecell inverseflow denoise --run RUN --data FILE --out FILE`")
        return self.sample(self.default_data(quick=True), n_samples, seed=seed, devices=devices)

    # ------------------------------------------------------------------ evaluate
    def evaluate(self, data: Any, *, clean: Any = None, clean_layer: str | None = "clean", layer: str | None = None,
                 method: str | None = None, steps: int | None = None, kind: str | None = None,
                 data_range: float = 1.0) -> dict[str, float]:
        """Error to the known clean data, denoised vs noisy.

        Cells/vectors: ``MSE``, ``PSNR`` (the official code's: mean over observations of
        ``−10·log10(mean squared error)``, peak 1), ``corr`` (Pearson over all entries), each also
        ``*_noisy`` for the input. Images (values in ``[0, data_range]``): the standard ``PSNR`` and
        ``SSIM`` (scikit-image's ``peak_signal_noise_ratio`` / ``structural_similarity`` with
        ``data_range``, on the estimate clipped to the image range) and ``PSNR_unclipped`` (the official
        code's), per image, averaged, each also ``*_noisy``
        (:mod:`scigen.singlecell.inverseflow.metrics`). ``clean``: the truth (array / xarray); for an
        AnnData, the default is ``layers[clean_layer]``. ``collapsed`` is 1.0 when the guard fires.
        """
        import anndata

        from scigen.singlecell.inverseflow.metrics import image_scores, vector_scores

        self.require_trained("evaluate")
        layer = self._default_layer(data, layer)
        trained = self.metadata.get("kind")
        obs = read_observations(data, layer=layer, kind=kind, trained=trained)
        self._check_like_training(obs)
        if clean is None:
            if not isinstance(data, anndata.AnnData) or clean_layer is None:
                raise InvalidInputError("evaluate needs the clean truth: pass clean=... (or an AnnData with "
                                        "layers[clean_layer])")
            truth = read_observations(data, layer=clean_layer, name="clean").values
        else:
            truth = read_observations(clean, name="clean", kind=kind, trained=trained).values
        if truth.shape != obs.values.shape:
            raise InvalidInputError(f"clean has shape {tuple(truth.shape)}, the data {tuple(obs.values.shape)}")
        self.noise.check_data(obs.values, _field(obs, layer))
        out = self._denoise_tensor(obs.values, method, steps)
        report = collapse_report(obs.values, out, self.config.collapse_ratio)
        res: dict[str, float] = {"collapsed": float(report["collapsed"])}
        for tag, est in (("", out), ("_noisy", obs.values)):
            scores = vector_scores(est, truth) if obs.kind == "vectors" else image_scores(est, truth, data_range)
            res.update({f"{k}{tag}": v for k, v in scores.items()})
        return res

    # ------------------------------------------------------------------ CLI hooks and demo
    @classmethod
    def default_data(cls, quick: bool = False):
        from scigen.singlecell.inverseflow.data import circle_toy

        return circle_toy(125 if quick else 1000, sigma=0.2, seed=0)

    @classmethod
    def read_data(cls, path: str | os.PathLike[str]):
        from scigen.singlecell.inverseflow.files import read_input

        return read_input(path)

    def write_samples(self, samples: Any, path: str | os.PathLike[str]) -> Path:
        from scigen.singlecell.inverseflow.files import write_output

        return write_output(samples, path)

    @classmethod
    def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
        """ICM and IFM on the 2-D circle toy, before/after figure (:mod:`scigen.singlecell.inverseflow.demo`)."""
        from scigen.singlecell.inverseflow.demo import run_demo

        return run_demo(cls, out, quick=quick)


def _unavailable(name: str):
    def fn(x0, generator=None):
        raise InvalidInputError(f"the user-defined noise model {name!r} is not part of a saved run: pass "
                                "fit(..., noise=CallableNoise(fn)) to train")

    return fn


def _field(obs: Observations, layer: str | None) -> str:
    if obs.source == "anndata":
        return f"adata.layers[{layer!r}]" if layer is not None else "adata.X"
    return "data"


def _has_params(net: nn.Module) -> bool:
    return any(True for _ in net.parameters())


def _version() -> str:
    from scigen.singlecell._version import __version__

    return __version__


def _padded(keys: Tensor, n: int, row_shape, fn) -> Tensor:
    """``fn(keys)`` for the keys below ``n`` (rows that exist), zero rows for the keys past it (what
    :func:`~scigen.core.system.sharded.sample_in_shards` hands the last processes, then drops)."""
    real = keys[keys < n]
    out = fn(real) if len(real) else torch.zeros(0, *row_shape)
    if len(real) == len(keys):
        return out
    return torch.cat([out, torch.zeros(len(keys) - len(real), *out.shape[1:], dtype=out.dtype)])
