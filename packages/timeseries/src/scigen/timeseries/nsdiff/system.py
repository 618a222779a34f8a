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

import os
from pathlib import Path
from typing import Any

import pandas as pd
import torch
from torch import nn

from scigen.core.errors import InvalidInputError
from scigen.core.files import atomic_path
from scigen.core.paths import LocationScalePath
from scigen.core.system import DemoResult, System
from scigen.core.validation import check_count
from scigen.timeseries.data import Standardizer, as_frame, check_columns, make_windows, source_label
from scigen.timeseries.metrics import forecast_metrics
from scigen.timeseries.nsdiff.config import NsDiffConfig, check_method
from scigen.timeseries.nsdiff.process import NsDiffNet, nsdiff_path

__all__ = ["NsDiff", "NsDiffConfig"]


class NsDiff(System):
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
        torch.manual_seed(self.training_options().seed)
        if "n_vars" not in self.metadata:
            return nn.ModuleDict()  # built by fit once the number of variables is known
        return NsDiffNet(self.config, int(self.metadata["n_vars"]))

    @property
    def scaler(self) -> Standardizer:
        """The training frame's per-column standardisation (set by the first ``fit``)."""
        if "scaler" not in self.metadata:
            self.require_trained("using its scaler")
        return Standardizer.from_dict(self.metadata["scaler"])

    def _frame(self, data: Any, name: str) -> pd.DataFrame:
        df = as_frame(data, name=name)
        check_columns(df, self.scaler.columns, name=source_label(df, name))
        return df

    def _windows(self, df: pd.DataFrame, stride: int, name: str) -> tuple[torch.Tensor, torch.Tensor]:
        c = self.config
        if len(df) < c.context_length + c.horizon:
            raise InvalidInputError(f"{source_label(df, name)} has {len(df)} rows; context_length + horizon = "
                                    f"{c.context_length} + {c.horizon} are needed for one window")
        X, Y, _ = make_windows(self.scaler.transform(df.to_numpy()), c.context_length, c.horizon, stride)
        as_t = lambda a: torch.as_tensor(a, dtype=torch.float32, device=self.device)  # noqa: E731
        return as_t(X), as_t(Y)

    # ---------------------------------------------------------------- verbs
    def prepare_data(self, data: Any, *, role: str) -> torch.Tensor:
        """Windows ``concat(X, Y)`` ``[W, C + H, N]`` on the network's device; the first training data also
        sets the scaler, the number of variables and the context kept for the CLI, and builds the network."""
        c = self.config
        df = as_frame(data, name=role, min_length=c.context_length + c.horizon)
        if role == "data" and "scaler" not in self.metadata:
            step = pd.Series(df.index).diff().median()
            self.metadata.update(n_vars=df.shape[1], scaler=Standardizer.fit(df, name=role).to_dict(), step=str(step))
            self.network = self.build_network()
        if role == "data":
            tail = df.iloc[-c.context_length :]
            self.metadata["last_context"] = {"values": tail.to_numpy().tolist(),
                                             "time": [t.isoformat() for t in tail.index]}
        from scigen.timeseries.nsdiff.training import window_rows

        return window_rows(*self._windows(self._frame(df, role), c.stride, role))

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
        there is no early stopping. ``parts`` selects the sub-networks trained (the others are frozen)
        and the loss terms summed: ``("f",)`` pre-trains the mean (MSE), ``("g",)`` the variance,
        ``("g", "denoiser")`` the diffusion around a fixed f. ``parts="staged"`` pre-trains f alone on at
        most 20 % of the one budget ``max_steps`` (less when it early-stops), then trains all three
        jointly on the rest (``training.STAGE_SHARES``). Afterwards
        ``Γ_k`` (the reverse variance) and the sampler's Ŷ0 range are measured on the training windows.
        """
        from scigen.timeseries.nsdiff.training import check_parts, clip_range, make_loss_fn, stage_budget

        parts_all = ("f", "g", "denoiser")
        if parts == "staged":
            budget, start = max_steps or self.training_options().max_steps, self.history.steps
            for part in ("f", "all"):
                steps = stage_budget(part, budget, self.history.steps - start)
                self.fit(data, max_steps=steps, val_data=val_data, parts=(part,) if part == "f" else parts_all,
                         **options)
            return self
        parts = check_parts(parts)
        rows = self.prepare_data(data, role="data")
        val_rows = None if val_data is None else self.prepare_data(val_data, role="val_data")
        if val_rows is None:
            options.setdefault("early_stopping", None)
        if rows.shape[0] < options.get("batch_size", self.training_options().batch_size):
            options["batch_size"] = int(rows.shape[0])
        loss_fn = make_loss_fn(self.path, self.config.context_length, self.config.rolling_length, parts)
        self.network.train()
        for name in ("f", "g", "denoiser"):
            getattr(self.network, name).requires_grad_(name in parts)
        try:
            self.train_network(rows, val_data=val_rows, max_steps=max_steps, loss_fn=loss_fn, **options)
        finally:
            self.network.requires_grad_(True)
        self._fit_eps_error(rows)
        self.metadata["y0_range"] = clip_range(rows, self.config.context_length, self.config.clip_margin)
        self.network.eval()
        return self

    def _fit_eps_error(self, rows: torch.Tensor, max_windows: int = 1024) -> None:
        """Measure ``Γ_k = E[(ε − ε̂_k)²]`` on up to ``max_windows`` training windows (the reverse variance)."""
        from scigen.timeseries.nsdiff.process import estimate_eps_error

        c = self.config
        gen = self.generator(self.training_options().seed + 1)
        idx = torch.randperm(rows.shape[0], generator=gen, device=self.device)[:max_windows]
        err = estimate_eps_error(self.network, self.path, rows[idx, : c.context_length],
                                 rows[idx, c.context_length :], c.rolling_length, generator=gen)
        self.network.eps_error.copy_(err.to(self.network.eps_error))

    def _sample_std(self, X: torch.Tensor, n: int, seed: int | None, method: str | None,
                    steps: int | None, progress: bool | None = False) -> torch.Tensor:
        from scigen.timeseries.nsdiff.sampling import sample_windows

        c = self.config
        n = check_count(n, "n_samples")
        if method is not None:
            check_method(method)
        if steps is not None:
            check_count(steps, "steps")
        self.network.eval()
        return sample_windows(self.network, self.path, X, n, sigma_source=c.sigma_source, method=method or c.method,
                              steps=steps if steps is not None else c.steps, generator=self.generator(seed),
                              use_eps_error=c.reverse_variance == "analytic", progress=progress,
                              y0_range=self.metadata.get("y0_range"))

    def sample(self, context: Any, n_samples: int = 100, *, method: str | None = None, steps: int | None = None,
               seed: int | None = None, progress: bool | None = None):
        """``n_samples`` forecasts of the ``horizon`` steps after the last row of ``context``.

        ``context``: a DataFrame/xarray with the training columns and at least ``context_length`` rows
        (the last ones are used). ``method``/``steps``: the engine's sampler names (default the paper's
        ancestral chain, ``config.method``). Returns an ``xarray.DataArray`` in the data's units with dims
        ``(sample, time, variable)`` and the future timestamps (the training step after the last row).
        """
        import xarray as xr

        self.require_trained("sample")
        c = self.config
        df = self._frame(context, "context")
        if len(df) < c.context_length:
            raise InvalidInputError(f"{source_label(df, 'context')} has {len(df)} rows; "
                                    f"context_length = {c.context_length} are needed")
        z = self.scaler.transform(df.to_numpy()[-c.context_length :])
        x = torch.as_tensor(z, dtype=torch.float32, device=self.device)[None]
        out = self._sample_std(x, n_samples, seed, method, steps, progress)[:, 0].double().cpu().numpy()  # [n, H, N]
        step = pd.Timedelta(self.metadata["step"])
        times = pd.DatetimeIndex([df.index[-1] + (i + 1) * step for i in range(c.horizon)])
        return xr.DataArray(self.scaler.inverse(out), dims=("sample", "time", "variable"),
                            coords={"time": times, "variable": list(df.columns)}, name="forecast")

    def evaluate(self, data: Any, *, n_samples: int | None = None, stride: int | None = None,
                 max_windows: int | None = None, seed: int | None = None, method: str | None = None,
                 steps: int | None = None) -> dict[str, float]:
        """NsDiff's metrics on every window of ``data`` (standardised with the training statistics).

        Returns ``CRPS, CRPS_sum, QICE`` (a fraction; ``QICE_x100`` is the paper's scale), ``PICP``
        (fraction inside the 5-95 % interval), ``MSE, MAE`` (of the sample mean), and ``windows``.
        """
        self.require_trained("evaluate")
        c = self.config
        stride = c.stride if stride is None else check_count(stride, "stride")
        X, Y = self._windows(self._frame(data, "data"), stride, "data")
        if max_windows is not None:
            X, Y = X[: check_count(max_windows, "max_windows")], Y[:max_windows]
        samples = self._sample_std(X, c.n_samples if n_samples is None else n_samples, seed, method, steps)
        scores = forecast_metrics(samples.cpu(), Y.cpu())
        scores["QICE_x100"] = 100 * scores["QICE"]
        scores["windows"] = float(X.shape[0])
        return scores

    # ---------------------------------------------------------------- CLI / demo
    @classmethod
    def default_data(cls, quick: bool = False) -> pd.DataFrame:
        from scigen.timeseries.data import synthetic_nonstationary

        return synthetic_nonstationary(1200 if quick else 3000, 3, seed=0)

    @classmethod
    def read_data(cls, path: str | os.PathLike[str]) -> pd.DataFrame:
        """A CSV with a ``date`` column (Autoformer/ETT layout) or a NetCDF file."""
        from scigen.timeseries.data import load_benchmark_csv, load_netcdf

        p = Path(path)
        return load_netcdf(p) if p.suffix in (".nc", ".netcdf") else load_benchmark_csv(p)

    def write_samples(self, samples: Any, path: str | os.PathLike[str]) -> Path:
        """Write a forecast DataArray atomically as NetCDF (``.nc``) or as a long CSV through pandas (otherwise)."""
        p = Path(path)
        with atomic_path(p) as tmp:
            if p.suffix == ".nc":
                samples.to_netcdf(tmp)
            else:
                samples.to_dataframe().to_csv(tmp)
        return p

    def example_condition(self, data: Any) -> tuple:
        """``(context,)``: forecast after the last rows of ``data`` (``sample`` uses the last ``context_length``)."""
        return (data,)

    def sample_for_cli(self, n_samples: int, seed: int):
        """``scigen timeseries nsdiff sample``: forecast after the last training window."""
        self.require_trained("sample")
        lc = self.metadata["last_context"]
        ctx = pd.DataFrame(lc["values"], index=pd.DatetimeIndex(pd.to_datetime(lc["time"])),
                           columns=self.scaler.columns)
        return self.sample(ctx, n_samples=n_samples, seed=seed)

    @classmethod
    def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
        """Synthetic non-stationary series: train, compare with a N(train mean, train var) baseline, plot."""
        from scigen.timeseries.nsdiff.demo import run_demo

        return run_demo(cls, out, quick=quick)
