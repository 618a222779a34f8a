"""``timeseries/nsdiff``: NsDiff, non-stationary diffusion for probabilistic forecasting (Ye et al., ICML 2025).

    model = NsDiff(NsDiffConfig.preset("small")).fit(train_df)     # DataFrame with a DatetimeIndex
    fc = model.sample(context_df, n_samples=100)    # xarray (sample, time, variable), future timestamps
    scores = model.evaluate(test_df)                # CRPS, CRPS_sum, QICE, PICP, MSE, MAE (standardised)
    model.save("run/"); NsDiff.load("run/")

Data are standardised with the training frame's per-column mean/std; all metrics are computed in
that standardised space, as in the paper. The path and loss are in :mod:`scigen.timeseries.nsdiff.process`
(on the engine's :class:`~scigen.core.paths.LocationScalePath`), the sampler in
:mod:`scigen.timeseries.nsdiff.sampling`. ``NsDiff(mode="tmdm")`` is TMDM (g = σ = 1) on the same code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import torch
from torch import nn

from scigen.core.paths import LocationScalePath
from scigen.core.samplers import check_method
from scigen.core.system import DemoResult
from scigen.core.validation import check_count
from scigen.timeseries.forecast_system import ForecastSystem, take_windows
from scigen.timeseries.nsdiff.config import NsDiffConfig
from scigen.timeseries.nsdiff.process import NsDiffNet, nsdiff_path

__all__ = ["NsDiff", "NsDiffConfig"]


class NsDiff(ForecastSystem):
    """NsDiff / TMDM forecaster on pandas and xarray (see module docstring)."""

    domain = "timeseries"
    name = "nsdiff"
    description = "NsDiff (ICML 2025): location-scale diffusion with learned mean and variance; TMDM mode."
    Config = NsDiffConfig

    # ---------------------------------------------------------------- wiring
    @property
    def path(self) -> LocationScalePath:
        """NsDiff's two-source location-scale path (the engine's)."""
        return nsdiff_path(self.config)

    def build_network(self) -> nn.Module:
        if "n_vars" not in self.metadata:
            return nn.ModuleDict()  # built by fit once the number of variables is known
        return NsDiffNet(self.config, int(self.metadata["n_vars"]))

    # ---------------------------------------------------------------- verbs
    def prepare_data(self, data: Any, *, role: str) -> torch.Tensor:
        """Windows ``concat(X, Y)`` ``[W, C + H, N]`` on the network's device; the first training data also
        sets the scaler, the number of variables and the context kept for the CLI, and builds the network."""
        df, first = self._training_frame(data, role)
        if first:
            self.network = self.make_network()
        if not isinstance(df, pd.DataFrame):  # a SeriesFile: windows read per batch
            return self._window_rows(df)
        from scigen.timeseries.nsdiff.training import window_rows

        return window_rows(*self._windows(df, self.config.stride, role))

    def training_loss(self, network: nn.Module, batch: torch.Tensor) -> torch.Tensor:
        from scigen.timeseries.nsdiff.training import make_loss_fn

        return make_loss_fn(self.path, self.config.context_length, self.config.rolling_length)(network, batch)

    def fit(self, data: Any, *, max_steps: int | None = None, val_data: Any = None,
            parts: tuple[str, ...] | str = ("f", "g", "denoiser"), **options: Any) -> NsDiff:
        """Train on ``data`` (DataFrame with a DatetimeIndex, or xarray) — all rows are training rows.

        :meth:`train_network` with ``config.train`` (per-call ``options`` override it: ``lr``,
        ``checkpoint_dir``, ``resume``, ``progress``, ...). ``val_data`` (a frame with the training
        columns) adds the validation loss every ``train.val_every`` steps and early stopping after
        ``train.early_stopping`` validations without improvement (the best weights are kept); without it
        there is no early stopping. ``parts`` selects the sub-networks trained (the others are frozen and
        checked) and the loss terms summed: ``("f",)`` pre-trains the mean (MSE), ``("g",)`` the variance,
        ``("g", "denoiser")`` the diffusion around a fixed f; a selection other than all three is one engine
        stage (:meth:`train_stages`) named after it (``"g+denoiser"``, its checkpoint sub-folder).
        ``parts="staged"`` runs two stages on the one budget ``max_steps``: ``"f"`` pre-trains the mean alone
        on ``config.stage_shares["f"]`` of it (0.2), then ``"joint"`` trains all three on every step left
        (more when ``f`` early-stops); a ``checkpoint_dir`` gets ``f/`` and ``joint/`` and ``resume=True``
        continues either stage exactly. Afterwards ``Γ_k`` (the reverse variance) and the sampler's Ŷ0
        range are measured on the training windows.
        """
        from scigen.core.train.stages import Stage
        from scigen.timeseries.nsdiff.training import check_parts, clip_range, make_loss_fn

        rows = self.prepare_data(data, role="data")
        val_rows = None if val_data is None else self.prepare_data(val_data, role="val_data")
        c = self.config
        if not isinstance(rows, torch.Tensor) or not isinstance(val_rows, (torch.Tensor, type(None))):
            from scigen.timeseries.data.stream import batch_as_is

            options = {"collate_fn": batch_as_is, **options}  # streamed windows come batched

        def loss(selection: tuple[str, ...]):
            return make_loss_fn(self.path, c.context_length, c.rolling_length, selection)

        every = ("f", "g", "denoiser")
        if parts == "staged":
            stages = [Stage("f", ("f",), loss=loss(("f",)), share=c.stage_shares["f"]),
                      Stage("joint", every, loss=loss(every))]
        else:
            parts = check_parts(parts)
            stages = [Stage("+".join(parts), parts, loss=loss(parts))] if set(parts) != set(every) else None
        if stages is None:  # all three: one plain fit (its checkpoints directly in checkpoint_dir)
            from scigen.core.system.stages import data_rules

            self.train_network(rows, val_data=val_rows, max_steps=max_steps, loss_fn=loss(every),
                               **data_rules(self, rows, val_rows, options))
        else:
            self.train_stages(rows, stages, val_data=val_rows, max_steps=max_steps, **options)
        self._fit_eps_error(rows)
        self.metadata["y0_range"] = clip_range(rows, c.context_length, c.clip_margin)
        self.network.eval()
        return self

    def _fit_eps_error(self, rows: torch.Tensor, max_windows: int = 1024) -> None:
        """Measure ``Γ_k = E[(ε − ε̂_k)²]`` on up to ``max_windows`` training windows (the reverse variance)."""
        from scigen.timeseries.nsdiff.process import estimate_eps_error

        c = self.config
        gen = self.generator(self.training_options().seed + 1)
        idx = torch.randperm(len(rows), generator=gen, device=self.device)[:max_windows]
        picked = take_windows(rows, idx)
        err = estimate_eps_error(self.network, self.path, picked[:, : c.context_length],
                                 picked[:, c.context_length :], c.rolling_length, generator=gen)
        self.network.eps_error.copy_(err.to(self.network.eps_error))

    keyed_sampling = True  # _sample_std(keys=): one stream per sample (sample(devices=N))

    def _sample_std(self, X: torch.Tensor, n: int, seed: int | None, method: str | None,
                    steps: int | None, progress: bool | None = False, marks: torch.Tensor | None = None,
                    keys: torch.Tensor | None = None) -> torch.Tensor:
        """``keys [n]``: sample indices; forecast ``i`` of window ``w`` draws from the stream keyed by
        ``(seed, keys[i]·W + w)`` (:class:`~scigen.core.streams.SampleStreams`), so it does not depend on the
        other samples drawn with it."""
        from scigen.timeseries.nsdiff.sampling import sample_windows

        c = self.config
        n = check_count(n, "n_samples")
        if method is not None:
            check_method(method)
        if steps is not None:
            check_count(steps, "steps")
        self.network.eval()
        gen = self._sampling_generator(seed, keys, X.shape[0])
        return sample_windows(self.network, self.path, X, n, sigma_source=c.sigma_source, method=method or c.method,
                              steps=steps if steps is not None else c.steps, generator=gen,
                              use_eps_error=c.reverse_variance == "analytic", progress=progress,
                              y0_range=self.metadata.get("y0_range"))

    # ---------------------------------------------------------------- CLI / demo
    @classmethod
    def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
        """Synthetic non-stationary series: train, compare with a N(train mean, train var) baseline, plot."""
        from scigen.timeseries.nsdiff.demo import run_demo

        return run_demo(cls, out, quick=quick)
