"""What every forecasting system of the package shares (NsDiff, D3U): one base class over :class:`~scigen.core.system.System`.

Data are pandas frames with a ``DatetimeIndex`` (or xarray); the first training frame fixes the
per-column standardisation (:class:`~scigen.timeseries.data.Standardizer`), the variables, the time
step and the context the CLI forecasts after. Windows are ``(X [W, C, N], Y [W, H, N])`` in
standardised units. A subclass implements ``_sample_std(X, n, seed, method, steps, progress) ->
[n, W, H, N]`` (standardised forecasts); :meth:`ForecastSystem.sample` turns them into an
``xarray.DataArray`` ``(sample, time, variable)`` in the data's units with the future timestamps, and
:meth:`ForecastSystem.evaluate` scores them with :func:`~scigen.timeseries.metrics.forecast_metrics`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from scigen.core.errors import InvalidInputError
from scigen.core.files import atomic_path
from scigen.core.system import System
from scigen.core.validation import check_count, optional_package
from scigen.timeseries.data import Standardizer, as_frame, check_columns, make_windows, source_label
from scigen.timeseries.metrics import forecast_metrics, reference_scores

__all__ = ["ForecastSystem", "take_windows", "window_rows"]


def window_rows(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``concat(X [W, C, N], Y [W, H, N])`` along time -> ``[W, C + H, N]`` (one row per window), so that the
    engine's ``fit`` treats windows as rows (step-indexed batches, EMA, checkpoints, exact resume)."""
    return torch.cat([x, y], dim=1)


def take_windows(rows: Any, idx: torch.Tensor) -> torch.Tensor:
    """Windows ``idx`` of the training rows: a tensor indexed directly, or the batch a streamed
    :class:`~scigen.timeseries.data.stream.WindowRows` reads (moved to ``idx``'s device)."""
    if isinstance(rows, torch.Tensor):
        return rows[idx]
    return rows.__getitems__(idx.cpu().numpy()).to(idx.device)


def target_range(rows: Any, context: int) -> tuple[float, float]:
    """``(min, max)`` of the training targets ``rows[:, context:]`` (a streamed Dataset: one pass over its windows)."""
    if isinstance(rows, torch.Tensor):
        y = rows[:, context:]
        return float(y.min()), float(y.max())
    return rows.target_range()


class ForecastSystem(System):
    """Base of the package's forecasters; its config has ``context_length``, ``horizon``, ``stride``, ``n_samples``."""

    # ---------------------------------------------------------------- data
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
        """Standardised windows ``(X [W, C, N], Y [W, H, N])`` of ``df`` every ``stride`` rows, on the device."""
        c = self.config
        if len(df) < c.context_length + c.horizon:
            raise InvalidInputError(f"{source_label(df, name)} has {len(df)} rows; context_length + horizon = "
                                    f"{c.context_length} + {c.horizon} are needed for one window")
        X, Y, _ = make_windows(self.scaler.transform(df.to_numpy()), c.context_length, c.horizon, stride)
        as_t = lambda a: torch.as_tensor(a, dtype=torch.float32, device=self.device)  # noqa: E731
        return as_t(X), as_t(Y)

    # ---------------------------------------------------------------- calendar marks
    def _uses_marks(self) -> bool:
        """Whether the forecaster embeds calendar features (:func:`~scigen.timeseries.data.time_features`);
        then every window carries its marks ``[W, C + H, F]`` beside ``X`` and ``Y``."""
        return False

    def _marks_of(self, index) -> torch.Tensor:
        from scigen.timeseries.data import time_features

        return torch.as_tensor(time_features(index, pd.Timedelta(self.metadata["step"])), dtype=torch.float32,
                               device=self.device)

    def _window_marks(self, df: pd.DataFrame, stride: int) -> torch.Tensor:
        """The marks of every window of ``df`` (the windows of :meth:`_windows`) ``[W, C + H, F]``."""
        c = self.config
        m = self._marks_of(df.index).cpu().numpy()
        Xm, Ym, _ = make_windows(m, c.context_length, c.horizon, stride)
        return torch.cat([torch.as_tensor(Xm), torch.as_tensor(Ym)], dim=1).to(self.device)

    def _training_frame(self, data: Any, role: str) -> tuple[pd.DataFrame, bool]:
        """Validate ``data``; the first training frame sets the scaler, ``n_vars`` and the time step, and every
        training frame the context kept for the CLI. Returns ``(frame, first)``; ``first`` = statistics just set.
        A :class:`~scigen.timeseries.data.stream.SeriesFile` (a series larger than memory) is returned as it is,
        its statistics from the streaming pass of :func:`~scigen.timeseries.data.stream.open_series`."""
        from scigen.timeseries.data.stream import SeriesFile

        c = self.config
        if isinstance(data, SeriesFile):
            return self._training_series(data, role)
        df = as_frame(data, name=role, min_length=c.context_length + c.horizon)
        first = role == "data" and "scaler" not in self.metadata
        if first:
            step = pd.Series(df.index).diff().median()
            self.metadata.update(n_vars=df.shape[1], scaler=Standardizer.fit(df, name=role).to_dict(), step=str(step))
        if role == "data":
            tail = df.iloc[-c.context_length :]
            self.metadata["last_context"] = {"values": tail.to_numpy().tolist(),
                                             "time": [t.isoformat() for t in tail.index]}
        return self._frame(df, role), first

    def _training_series(self, series: Any, role: str) -> tuple[Any, bool]:
        c = self.config
        if series.n_rows < c.context_length + c.horizon:
            raise InvalidInputError(f"{series.source} has {series.n_rows} rows; at least "
                                    f"{c.context_length + c.horizon} are needed")
        first = role == "data" and "scaler" not in self.metadata
        if first:
            self.metadata.update(n_vars=series.n_vars, scaler=series.standardizer(role).to_dict(),
                                 step=str(series.step()))
        check_columns(pd.DataFrame(columns=series.columns), self.scaler.columns, name=series.source or role)
        if role == "data":
            tail = series.frame(series.n_rows - c.context_length, series.n_rows)
            self.metadata["last_context"] = {"values": tail.to_numpy().tolist(),
                                             "time": [t.isoformat() for t in tail.index]}
        return series, first

    def _window_rows(self, series: Any):
        """The streamed training windows of a :class:`~scigen.timeseries.data.stream.SeriesFile` (with the
        calendar marks when the forecaster embeds them)."""
        from scigen.timeseries.data.stream import WindowRows

        c = self.config
        step = pd.Timedelta(self.metadata["step"]) if self._uses_marks() else None
        return WindowRows(series, self.scaler, c.context_length, c.horizon, c.stride, marks_step=step)

    # ---------------------------------------------------------------- verbs
    def _sample_std(self, X: torch.Tensor, n: int, seed: int | None, method: str | None, steps: int | None,
                    progress: bool | None = False, marks: torch.Tensor | None = None,
                    keys: torch.Tensor | None = None) -> torch.Tensor:
        """``n`` standardised forecasts per window of ``X [W, C, N]`` -> ``[n, W, H, N]`` (``marks [W, C + H, F]``
        when :meth:`_uses_marks`). A subclass may take ``keys [n]`` (the draws' sample indices; see
        :meth:`sample`): draw ``i`` of window ``w`` then takes its randomness from the stream keyed by
        ``(seed, keys[i]·W + w)`` alone (:class:`~scigen.core.streams.SampleStreams`); without ``keys`` every
        draw comes from one ``torch.Generator`` seeded with ``seed`` (``evaluate``)."""
        raise NotImplementedError

    #: whether ``_sample_std`` takes ``keys=`` (sample indices) and draws each sample from its own stream
    keyed_sampling: bool = False

    def _sampling_generator(self, seed: int | None, keys: torch.Tensor | None, n_windows: int):
        """The draws of one sampling call: ``self.generator(seed)`` without ``keys``; with sample indices
        ``keys [n]``, per-sample streams where chain ``i`` of window ``w`` has the key ``keys[i]·W + w``
        (:class:`~scigen.core.streams.SampleStreams`), so a forecast does not depend on the others drawn with it."""
        if keys is None:
            return self.generator(seed)
        from scigen.core.streams import SampleStreams

        W = int(n_windows)
        rows = (keys.to(self.device)[:, None] * W + torch.arange(W, device=self.device)[None, :]).reshape(-1)
        return SampleStreams(self.sample_seed(seed), rows)

    def _after_gather(self, out: torch.Tensor) -> torch.Tensor:
        """Keyed forecasts ``[n, H, N]`` of every process (:meth:`sample`): a forecaster whose draws share a
        statistic over all ``n`` (e.g. centring) applies it here; none by default."""
        return out

    def sample(self, context: Any, n_samples: int | None = None, *, method: str | None = None,
               steps: int | None = None, seed: int | None = None, progress: bool | None = None,
               devices: int = 1):
        """``n_samples`` forecasts of the ``horizon`` steps after the last row of ``context`` (default
        ``config.n_samples``, the number :meth:`evaluate` draws too).

        ``context``: a DataFrame/xarray with the training columns and at least ``context_length`` rows
        (the last ones are used); ``None``: the last training window (what the CLI forecasts from). ``method``/``steps``: the engine's sampler names and step count (default
        the config's). Returns an ``xarray.DataArray`` in the data's units with dims
        ``(sample, time, variable)`` and the future timestamps (the training step after the last row).

        A forecaster with ``keyed_sampling`` (its ``_sample_std`` takes ``keys=``) draws forecast ``i`` from its
        own stream keyed by ``(seed, i)`` (:class:`~scigen.core.streams.SampleStreams`): the first ``k`` of ``n`` forecasts are
        ``sample(k)``, and ``devices=N`` splits the forecasts over ``N`` processes (Lightning Fabric) with the
        same result.
        """

        import xarray as xr

        from scigen.core.system.sharded import sample_in_shards

        self.require_trained("sample")
        c = self.config
        x, times, columns, extra = self._sampling_context(context)
        n_samples = c.n_samples if n_samples is None else n_samples
        if self.keyed_sampling:
            n = check_count(n_samples, "n_samples")

            def draw(keys: torch.Tensor) -> torch.Tensor:
                return self._sample_std(x, len(keys), seed, method, steps, progress, keys=keys, **extra)[:, 0]

            out = self._after_gather(sample_in_shards(draw, n, devices=devices)).double().cpu().numpy()
        else:
            if devices != 1:
                raise InvalidInputError(f"{type(self).__name__} does not draw its forecasts keyed by sample index "
                                        "yet, so it cannot split them over processes: use devices=1")
            out = self._sample_std(x, n_samples, seed, method, steps, progress, **extra)[:, 0].double().cpu().numpy()
        return xr.DataArray(self.scaler.inverse(out), dims=("sample", "time", "variable"),
                            coords={"time": times, "variable": columns}, name="forecast")

    def _sampling_context(self, context: Any):
        """``(x [1, C, N] standardised, future times, columns, extra model inputs)`` of a ``context`` (or of the
        last training window when ``None``, as the CLI samples)."""
        c = self.config
        if context is None:
            lc = self.metadata["last_context"]
            context = pd.DataFrame(lc["values"], index=pd.DatetimeIndex(pd.to_datetime(lc["time"])),
                                   columns=self.scaler.columns)
        df = self._frame(context, "context")
        if len(df) < c.context_length:
            raise InvalidInputError(f"{source_label(df, 'context')} has {len(df)} rows; "
                                    f"context_length = {c.context_length} are needed")
        z = self.scaler.transform(df.to_numpy()[-c.context_length :])
        x = torch.as_tensor(z, dtype=torch.float32, device=self.device)[None]
        step = pd.Timedelta(self.metadata["step"])
        times = pd.DatetimeIndex([df.index[-1] + (i + 1) * step for i in range(c.horizon)])
        marks = self._marks_of(df.index[-c.context_length :].append(times))[None] if self._uses_marks() else None
        return x, times, list(df.columns), ({"marks": marks} if marks is not None else {})

    def _couples_samples(self) -> bool:
        """Whether :meth:`_after_gather` makes each forecast depend on all ``n`` (then no chunked writing)."""
        return False

    def sample_draw(self, *, context: Any = None, method: str | None = None, steps: int | None = None,
                    seed: int | None = None):
        """``draw(keys)``: the forecasts ``[m, horizon, variables]`` (float64, the data's units) with these indices
        after ``context`` (default: the last training window, as the CLI), the ``i``-th of :meth:`sample`'s;
        :meth:`~scigen.core.system.base.System.sample_to` writes millions of scenarios a chunk at a time
        (``model.sample_to("paths.npy", 10**6, context=df, chunk_size=8192)``). ``None`` for a forecaster without
        ``keyed_sampling``."""
        if not self.keyed_sampling:
            return None
        self.require_trained("sample")
        if self._couples_samples():
            raise InvalidInputError(f"{type(self).__name__}: each forecast depends on all n drawn with it "
                                    "(center_residuals centres them over n), so they cannot be written a chunk at a "
                                    "time; set center_residuals=False, or use sample()")
        x, _, _, extra = self._sampling_context(context)

        def draw(keys: torch.Tensor) -> torch.Tensor:
            std = self._sample_std(x, len(keys), seed, method, steps, False, keys=keys, **extra)[:, 0]
            return torch.from_numpy(self.scaler.inverse(std.double().cpu().numpy()))

        return draw

    def evaluation_windows(self, data: Any, *, stride: int | None = None,
                           max_windows: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """The standardised windows ``(X, Y)`` :meth:`evaluate` scores (every ``stride`` rows, at most ``max_windows``)."""
        stride = self.config.stride if stride is None else check_count(stride, "stride")
        X, Y = self._windows(self._frame(data, "data"), stride, "data")
        if max_windows is not None:
            X, Y = X[: check_count(max_windows, "max_windows")], Y[:max_windows]
        return X, Y

    def evaluation_marks(self, data: Any, *, stride: int | None = None,
                         max_windows: int | None = None) -> torch.Tensor | None:
        """The calendar marks ``[W, C + H, F]`` of :meth:`evaluation_windows`'s windows, for a forecaster that
        embeds them (``None`` otherwise)."""
        if not self._uses_marks():
            return None
        stride = self.config.stride if stride is None else check_count(stride, "stride")
        marks = self._window_marks(self._frame(data, "data"), stride)
        return marks if max_windows is None else marks[: check_count(max_windows, "max_windows")]

    def evaluate(self, data: Any, *, n_samples: int | None = None, stride: int | None = None,
                 max_windows: int | None = None, seed: int | None = None, method: str | None = None,
                 steps: int | None = None, references: bool | None = None) -> dict[str, float]:
        """The forecast metrics on every window of ``data`` (standardised with the training statistics).

        Returns ``CRPS, CRPS_sum, QICE`` (a fraction; ``QICE_x100`` is the papers' scale), ``PICP``
        (fraction inside the 5-95 % interval), ``MSE, MAE`` (of the sample mean), ``ES`` / ``VS`` (energy and
        order-0.5 variogram score of each window's horizon × variables forecast), and ``windows``.
        ``references``: also ``CRPS[scoringrules]``, ``CRPS_sum[scoringrules]``, ``ES[scoringrules]``,
        ``VS[scoringrules]`` — the same scores by the ``scoringrules`` package, beside ours (``None``: when it
        is installed, the ``scoringrules`` extra; ``True``: required; ``False``: never).
        """
        self.require_trained("evaluate")
        X, Y = self.evaluation_windows(data, stride=stride, max_windows=max_windows)
        marks = self.evaluation_marks(data, stride=stride, max_windows=max_windows)
        extra = {} if marks is None else {"marks": marks}
        samples = self._sample_std(X, self.config.n_samples if n_samples is None else n_samples, seed, method, steps,
                                   **extra)
        scores = forecast_metrics(samples.cpu(), Y.cpu())
        if optional_package(references, "scoringrules", install="scigen-timeseries[scoringrules]",
                            what="evaluate(references=True)"):
            scores.update(reference_scores(samples.cpu(), Y.cpu()))
        scores["QICE_x100"] = 100 * scores["QICE"]
        scores["windows"] = float(X.shape[0])
        return scores

    # ---------------------------------------------------------------- CLI
    @classmethod
    def default_data(cls, quick: bool = False) -> pd.DataFrame:
        """The seeded synthetic series whose mean and variance drift (hourly, 3 variables)."""
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

    def sample_for_cli(self, n_samples: int, seed: int, devices: int = 1):
        """``scigen timeseries <system> sample``: forecast after the last training window (``--devices N``: over
        ``N`` processes, for a forecaster with ``keyed_sampling``)."""
        self.require_trained("sample")
        return self.sample(None, n_samples=n_samples, seed=seed, **({"devices": devices} if devices != 1 else {}))
