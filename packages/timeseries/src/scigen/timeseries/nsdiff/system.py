"""``timeseries/nsdiff``: NsDiff, non-stationary diffusion for probabilistic forecasting (Ye et al., ICML 2025).

    model = NsDiff(context_length=96, horizon=24).fit(train_df)     # DataFrame with a DatetimeIndex
    fc = model.sample(context_df, n=100)       # xarray (sample, time, variable), future timestamps
    scores = model.evaluate(test_df)           # CRPS, CRPS_sum, QICE, PICP, MSE, MAE (standardised)
    model.save("run/"); NsDiff.load("run/")

Data are standardised with the training frame's per-column mean/std; all metrics are computed in
that standardised space, as in the paper. The process, loss and sampler are documented in
:mod:`scigen.timeseries.nsdiff.schedule` and :mod:`scigen.timeseries.nsdiff.process`.
``NsDiff(mode="tmdm")`` is TMDM (g = σ = 1) on the same code.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import nn

from scigen.core.errors import InvalidInputError
from scigen.core.system import DemoResult, System, write_report
from scigen.core.system.base import Stopwatch
from scigen.timeseries.data import Standardizer, as_frame, check_columns, make_windows
from scigen.timeseries.metrics import forecast_metrics
from scigen.timeseries.nsdiff.config import NsDiffConfig
from scigen.timeseries.nsdiff.process import NsDiffNet, sample_windows
from scigen.timeseries.nsdiff.schedule import NsDiffSchedule

__all__ = ["NsDiff", "NsDiffConfig"]


class NsDiff(System):
    """NsDiff / TMDM forecaster on pandas and xarray (see module docstring)."""

    domain = "timeseries"
    name = "nsdiff"
    description = "NsDiff (ICML 2025): location-scale diffusion with learned mean and variance; TMDM mode."
    Config = NsDiffConfig

    # ---------------------------------------------------------------- wiring
    @property
    def schedule(self) -> NsDiffSchedule:
        c = self.config
        return NsDiffSchedule.linear(c.diffusion_steps, c.beta_start, c.beta_end)

    def build_network(self) -> nn.Module:
        torch.manual_seed(self.config.seed)
        if "n_vars" not in self.metadata:
            return nn.ModuleDict()  # built by fit once the number of variables is known
        return NsDiffNet(self.config, int(self.metadata["n_vars"]))

    @property
    def scaler(self) -> Standardizer:
        if "scaler" not in self.metadata:
            raise InvalidInputError("this NsDiff model is not trained yet: call fit(data) first")
        return Standardizer.from_dict(self.metadata["scaler"])

    def _frame(self, data: Any, name: str) -> pd.DataFrame:
        df = as_frame(data, name=name)
        check_columns(df, self.scaler.columns, name=name)
        return df

    def _windows(self, df: pd.DataFrame, stride: int, name: str) -> tuple[torch.Tensor, torch.Tensor]:
        c = self.config
        if len(df) < c.context_length + c.horizon:
            raise InvalidInputError(f"{name} has {len(df)} rows; context_length + horizon = "
                                    f"{c.context_length} + {c.horizon} are needed for one window")
        X, Y, _ = make_windows(self.scaler.transform(df.to_numpy()), c.context_length, c.horizon, stride)
        return torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(Y, dtype=torch.float32)

    # ---------------------------------------------------------------- verbs
    def fit(self, data: Any, *, max_steps: int | None = None, val_data: Any = None, progress: bool = False,
            parts: tuple[str, ...] = ("f", "g", "denoiser"), **options: Any) -> NsDiff:
        """Train on ``data`` (DataFrame with a DatetimeIndex, or xarray) — all rows are training rows.

        Runs :func:`scigen.core.train.fit` on NsDiff's four-term loss (two terms in TMDM mode) with the
        config's ``lr, batch_size, grad_clip, ema_decay, seed``. ``val_data`` (a frame with the
        training columns) adds the validation loss every ``val_every`` steps and early stopping after
        ``patience`` validations without improvement; the best weights are kept. Other ``options``
        (``checkpoint_dir``, ``resume``, ``logger``, ...) go to ``fit``.

        ``parts`` selects the sub-networks trained (the others are frozen) and the loss terms summed:
        the default trains all jointly; ``("f",)`` pre-trains the mean (MSE), ``("g",)`` the variance,
        ``("g", "denoiser")`` the diffusion around a fixed f (the paper's optional pre-training).
        Early stopping then watches only those terms.
        """
        from scigen.core.train import fit
        from scigen.timeseries.nsdiff.training import check_parts, make_loss_fn, window_rows

        c = self.config
        parts = check_parts(parts)
        df = as_frame(data, name="data", min_length=c.context_length + c.horizon)
        if "scaler" not in self.metadata:
            scaler = Standardizer.fit(df, name="data")
            step = pd.Series(df.index).diff().median()
            self.metadata.update(n_vars=df.shape[1], scaler=scaler.to_dict(), step=str(step))
            self.network = self.build_network()
        rows = window_rows(*self._windows(self._frame(df, "data"), c.stride, "data"))
        val_rows = None
        if val_data is not None:
            val_rows = window_rows(*self._windows(self._frame(val_data, "val_data"), c.stride, "val_data"))
        tail = df.iloc[-c.context_length :]
        self.metadata["last_context"] = {"values": tail.to_numpy().tolist(),
                                         "time": [t.isoformat() for t in tail.index]}
        steps = int(max_steps or c.max_steps)
        options.setdefault("lr", c.lr)
        options.setdefault("ema_decay", c.ema_decay)
        options.setdefault("grad_clip", c.grad_clip)
        options.setdefault("seed", c.seed)
        options.setdefault("resume", False)
        options.setdefault("logger", None)
        if val_rows is not None:
            options.setdefault("val_every", c.val_every)
        if val_rows is not None and c.patience:
            options.setdefault("early_stopping", c.patience)
        self.network.train()
        for name in ("f", "g", "denoiser"):
            getattr(self.network, name).requires_grad_(name in parts)
        try:
            res = fit(self.network, make_loss_fn(self.schedule, c.context_length, c.rolling_length, parts), rows,
                      max_steps=steps, batch_size=min(c.batch_size, rows.shape[0]), val_data=val_rows,
                      progress=progress, **options)
        finally:
            self.network.requires_grad_(True)
        self.network = res.module
        self.network.requires_grad_(True)
        if res.best_step is not None:  # fit restored the weights of the best validation
            self.metadata["best_step"] = int(res.best_step)
            self.metadata["best_val_loss"] = float(dict(res.val_losses)[res.best_step])
        self._fit_eps_error(rows)
        self.network.eval()
        self.metadata["trained_steps"] = int(self.metadata.get("trained_steps", 0)) + int(res.steps)
        self.metadata["final_loss"] = float(np.mean(res.losses[-50:]))
        self.metadata["val_losses"] = [[int(k), float(v)] for k, v in res.val_losses]
        return self

    def _fit_eps_error(self, rows: torch.Tensor, max_windows: int = 1024) -> None:
        """Measure ``Γ_k = E[(ε − ε̂_k)²]`` on up to ``max_windows`` training windows (the reverse variance)."""
        from scigen.timeseries.nsdiff.process import estimate_eps_error

        c = self.config
        gen = torch.Generator().manual_seed(c.seed + 1)
        idx = torch.randperm(rows.shape[0], generator=gen)[:max_windows]
        err = estimate_eps_error(self.network, self.schedule, rows[idx, : c.context_length],
                                 rows[idx, c.context_length :], c.rolling_length, generator=gen)
        self.network.eps_error.copy_(err.to(self.network.eps_error))

    def _sample_std(self, X: torch.Tensor, n: int, seed: int | None) -> torch.Tensor:
        if "n_vars" not in self.metadata:
            raise InvalidInputError("this NsDiff model is not trained yet: call fit(data) first")
        if not isinstance(n, int) or n <= 0:
            raise InvalidInputError(f"n must be a positive number of samples, got {n!r}")
        gen = torch.Generator().manual_seed(self.config.seed if seed is None else seed)
        self.network.eval()
        return sample_windows(self.network, self.schedule, X, n, sigma_source=self.config.sigma_source, generator=gen,
                              use_eps_error=self.config.reverse_variance == "analytic")

    def sample(self, context: Any, n: int = 100, *, seed: int | None = None):
        """``n`` forecasts of the ``horizon`` steps after the last row of ``context``.

        ``context``: a DataFrame/xarray with the training columns and at least ``context_length`` rows
        (the last ones are used). Returns an ``xarray.DataArray`` in the data's units with dims
        ``(sample, time, variable)`` and the future timestamps (the training step after the last row).
        """
        import xarray as xr

        c = self.config
        df = self._frame(context, "context")
        if len(df) < c.context_length:
            raise InvalidInputError(f"context has {len(df)} rows; context_length = {c.context_length} are needed")
        x = torch.as_tensor(self.scaler.transform(df.to_numpy()[-c.context_length :]), dtype=torch.float32)[None]
        out = self._sample_std(x, n, seed)[:, 0].double().numpy()  # [n, H, N]
        values = self.scaler.inverse(out)
        step = pd.Timedelta(self.metadata["step"])
        times = pd.DatetimeIndex([df.index[-1] + (i + 1) * step for i in range(c.horizon)])
        return xr.DataArray(values, dims=("sample", "time", "variable"),
                            coords={"time": times, "variable": list(df.columns)}, name="forecast")

    def evaluate(self, data: Any, *, n_samples: int | None = None, stride: int | None = None,
                 max_windows: int | None = None, seed: int | None = None) -> dict[str, float]:
        """NsDiff's metrics on every window of ``data`` (standardised with the training statistics).

        Returns ``CRPS, CRPS_sum, QICE`` (a fraction; ``QICE_x100`` is the paper's scale), ``PICP``
        (fraction inside the 5-95 % interval), ``MSE, MAE`` (of the sample mean), and ``windows``.
        """
        c = self.config
        X, Y = self._windows(self._frame(data, "data"), stride or c.stride, "data")
        if max_windows is not None:
            X, Y = X[:max_windows], Y[:max_windows]
        samples = self._sample_std(X, n_samples or c.n_samples, seed)
        scores = forecast_metrics(samples, Y)
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
        p = Path(path)
        if p.suffix in (".nc", ".netcdf"):
            import xarray as xr

            return as_frame(xr.open_dataset(p), name=str(p))
        from scigen.timeseries.data import load_benchmark_csv

        return load_benchmark_csv(p)

    def write_samples(self, samples: Any, path: str | os.PathLike[str]) -> Path:
        """Write a forecast DataArray as NetCDF (``.nc``) or long CSV (otherwise)."""
        p = Path(path)
        if p.suffix == ".nc":
            samples.to_netcdf(p)
        else:
            samples.to_dataframe().to_csv(p)
        return p

    def sample_for_cli(self, n: int, seed: int):
        """``scigen timeseries nsdiff sample``: forecast after the last training window."""
        if "last_context" not in self.metadata:
            raise InvalidInputError("this NsDiff model is not trained yet: call fit(data) first")
        lc = self.metadata["last_context"]
        ctx = pd.DataFrame(lc["values"], index=pd.DatetimeIndex(pd.to_datetime(lc["time"])),
                           columns=self.scaler.columns)
        return self.sample(ctx, n=n, seed=seed)

    @classmethod
    def demo_config(cls, quick: bool = False) -> dict[str, Any]:
        """Small settings that train in about a minute on 2 CPU cores."""
        return dict(context_length=48, horizon=12, rolling_length=12, diffusion_steps=50, beta_end=0.3,
                    d_model=32, n_heads=4, e_layers=1, d_layers=1, d_ff=64, g_hidden=64, denoiser_hidden=64,
                    batch_size=64, max_steps=150 if quick else 600, lr=2e-3, n_samples=50, val_every=50, patience=3)

    @classmethod
    def demo(cls, out_dir: str | os.PathLike[str], *, quick: bool = False) -> DemoResult:
        """Synthetic non-stationary series: train, compare with a N(train mean, train var) baseline, plot."""
        from scigen.timeseries.data import split_ratio
        from scigen.timeseries.nsdiff.plot import plot_forecast

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        with Stopwatch() as sw:
            model = cls(**cls.demo_config(quick))
            c = model.config
            df = cls.default_data(quick=quick)
            sp = split_ratio(df, c.context_length)
            model.fit(sp.train, val_data=sp.val)
            kw = dict(stride=c.horizon, max_windows=8 if quick else 40)
            scores = model.evaluate(sp.test, **kw)
            _, Y = model._windows(sp.test, c.horizon, "test")
            Y = Y[: kw["max_windows"]]
            base = forecast_metrics(torch.randn((c.n_samples, *Y.shape), generator=torch.Generator().manual_seed(1)), Y)
            fc = model.sample(sp.test.iloc[: c.context_length], n=c.n_samples)
            png = plot_forecast(sp.test.iloc[: c.context_length], fc, out / "forecast.png",
                                truth=sp.test.iloc[c.context_length : c.context_length + c.horizon])
            model.save(out / "model")
        metrics = {**scores, "CRPS_gaussian_baseline": base["CRPS"]}
        report = write_report(out, {
            "system": cls.key(), "config": model.config.model_dump(), "metrics": metrics, "seconds": sw.seconds,
            "note": "standardised space; QICE is a fraction (QICE_x100 = paper scale); PICP = fraction of targets "
                    "in the 5-95% interval; baseline = N(train mean, train variance) per variable"})
        return DemoResult(metrics=metrics, files=[report, png, out / "model"], seconds=sw.seconds,
                          summary=f"CRPS {scores['CRPS']:.3f} vs Gaussian baseline {base['CRPS']:.3f}")
