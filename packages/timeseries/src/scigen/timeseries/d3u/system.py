"""``timeseries/d3u``: D3U, calibrated uncertainty around any point forecaster (Li et al., ICLR 2025).

    model = D3U(D3UConfig.preset("small")).fit(train_df)      # PatchTST + residual diffusion
    model = D3U(forecaster=my_module).fit(train_df, stage="residual")   # wrap a trained user module
    fc = model.sample(context_df, n_samples=100)   # xarray (sample, time, variable), future timestamps
    model.evaluate(test_df)                        # CRPS, CRPS_sum, QICE, PICP, MSE, MAE (standardised)
    model.save("run/"); D3U.load("run/")           # D3U.load("run/", forecaster=my_module) for a user module

Stage 1 trains the forecaster with MSE, stage 2 freezes it and trains PatchDN on the residual
(:mod:`scigen.timeseries.d3u.process`), both through the engine's ``fit``. A user forecaster is any
``nn.Module`` mapping ``(batch, context, variables) -> (batch, horizon, variables)`` (in the
standardised units of the training frame); with ``forward_with_tokens`` it also exposes per-variable
tokens. It is checked on training windows (shape, finiteness) before any training starts.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import torch
from torch import nn

from scigen.core.errors import InvalidInputError
from scigen.core.samplers import check_method
from scigen.core.system import DemoResult
from scigen.core.validation import check_count
from scigen.timeseries.d3u.config import D3UConfig
from scigen.timeseries.forecast_system import ForecastSystem, take_windows, window_rows

__all__ = ["D3U", "D3UConfig"]

#: the user forecaster handed to :meth:`D3U.load` while the base class rebuilds the network
_LOADING_FORECASTER: contextvars.ContextVar[nn.Module | None] = contextvars.ContextVar("d3u_forecaster", default=None)

_STAGES = ("both", "forecaster", "residual")
_PROBE = 256  # training windows a user forecaster is checked on before training


class D3U(ForecastSystem):
    """Point forecaster (frozen) + residual diffusion (see module docstring)."""

    domain = "timeseries"
    name = "d3u"
    description = "D3U (ICLR 2025): residual diffusion (PatchDN) around any frozen point forecaster."
    Config = D3UConfig

    def __init__(self, config: D3UConfig | dict[str, Any] | None = None, *, forecaster: nn.Module | str | None = None,
                 **overrides: Any) -> None:
        self._user_forecaster = None
        if isinstance(forecaster, nn.Module):
            self._user_forecaster = forecaster
            overrides["forecaster"] = "custom"
        elif forecaster is not None:
            if not isinstance(forecaster, str):
                raise InvalidInputError(f"forecaster must be an nn.Module or a built-in name, got "
                                        f"{type(forecaster).__name__}")
            overrides["forecaster"] = forecaster
        super().__init__(config, **overrides)

    # ---------------------------------------------------------------- wiring
    def _make_forecaster(self) -> nn.Module:
        c = self.config
        if c.forecaster == "custom":
            module = getattr(self, "_user_forecaster", None) or _LOADING_FORECASTER.get()
            if module is None:
                raise InvalidInputError("forecaster='custom' needs the module: D3U(config, forecaster=module) "
                                        "or D3U.load(path, forecaster=module)")
            self._user_forecaster = module
            return module
        from scigen.timeseries.forecasters import build_forecaster

        return build_forecaster(c.forecaster, int(self.metadata["n_vars"]), c.context_length, c.horizon,
                                d_model=c.f_d_model, n_heads=c.f_n_heads, e_layers=c.f_e_layers, d_ff=c.f_d_ff,
                                dropout=c.f_dropout, patch_len=c.f_patch_len, stride=c.f_patch_stride,
                                d_layers=c.f_d_layers, projector_hidden=c.f_projector_hidden, norm=c.f_norm,
                                time_features=int(self.metadata.get("time_features", 0)))

    def _uses_marks(self) -> bool:
        """NS-Transformer with ``config.f_time_features`` embeds calendar marks (the official timeF)."""
        return self.config.forecaster == "nstransformer" and self.config.f_time_features

    def _split(self, batch: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """A window row ``[B, C + H, N (+ F marks)]`` as ``(X [B, C, N], Y [B, H, N], marks [B, C + H, F] | None)``."""
        C, N = self.config.context_length, int(self.metadata["n_vars"])
        marks = batch[..., N:] if batch.shape[-1] > N else None
        return batch[:, :C, :N], batch[:, C:, :N], marks

    def build_network(self) -> nn.Module:
        if "cond_dim" not in self.metadata:
            return nn.ModuleDict()  # built by fit once the variables (and the condition width) are known
        from scigen.timeseries.d3u.process import D3UNet

        forecaster = self._make_forecaster()
        return D3UNet(forecaster, self.config, int(self.metadata["cond_dim"])).to(_device_of(forecaster))

    def _build_from(self, X: torch.Tensor, marks: torch.Tensor | None = None) -> None:
        """First fit: make (or take) the forecaster, check it on training windows, size PatchDN's condition."""
        from scigen.core.rng import seeded_rng
        from scigen.timeseries.d3u.process import D3UNet, condition_dim
        from scigen.timeseries.forecasters import check_forecaster

        c = self.config
        with seeded_rng(self.network_seed()):  # the weights build_network draws, the caller's RNG untouched
            forecaster = self._make_forecaster()
            probe = X[:_PROBE].to(_device_of(forecaster))
            pm = None if marks is None else marks[:_PROBE].to(probe.device)
            check_forecaster(forecaster, probe, c.horizon, pm)
            self.metadata["cond_dim"] = condition_dim(forecaster, probe[:2], c.horizon, c.condition,
                                                      None if pm is None else pm[:2])
            self.metadata["forecaster"] = type(forecaster).__name__
            self.network = D3UNet(forecaster, c, int(self.metadata["cond_dim"])).to(probe.device)

    @classmethod
    def load(cls, path, *, device=None, forecaster: nn.Module | None = None) -> D3U:
        """Load a run written by :meth:`save`; a run around a user module needs that module (its weights are
        restored from the run) as ``forecaster=``."""
        token = _LOADING_FORECASTER.set(forecaster)
        try:
            model = super().load(path, device=device)
        finally:
            _LOADING_FORECASTER.reset(token)
        if model.config.forecaster == "custom":  # the module's parameters fit; its outputs must fit too
            model._check_loaded_forecaster(path)
        return model

    def _check_loaded_forecaster(self, path) -> None:
        """A user forecaster handed to :meth:`load` must map ``[B, context, variables]`` to ``[B, horizon,
        variables]`` (and give the condition size the run was trained with), checked on a zero probe."""
        from scigen.timeseries.d3u.process import condition_dim
        from scigen.timeseries.forecasters import check_forecaster

        c, f = self.config, self.network.forecaster
        probe = torch.zeros(2, c.context_length, int(self.metadata["n_vars"]), device=_device_of(f))
        try:
            check_forecaster(f, probe, c.horizon)
            got = condition_dim(f, probe, c.horizon, c.condition)
        except InvalidInputError as exc:
            raise InvalidInputError(f"{path}: forecaster= does not fit this run: {exc}") from None
        if got != int(self.metadata["cond_dim"]):
            raise InvalidInputError(f"{path}: forecaster= gives a condition of size {got}; the run was trained with "
                                    f"{self.metadata['cond_dim']} (pass the module the run was trained with)")

    # ---------------------------------------------------------------- verbs
    def prepare_data(self, data: Any, *, role: str) -> torch.Tensor:
        """Windows ``concat(X, Y)`` ``[W, C + H, N]``; the first training data also fixes the scaler and builds
        (and checks) the networks."""
        df, first = self._training_frame(data, role)
        if not isinstance(df, pd.DataFrame):  # a SeriesFile: windows read per batch, the first ones probe the nets
            rows = self._window_rows(df)
            probe = rows.__getitems__(np.arange(min(_PROBE, len(rows))))
            X, _, marks = self._split(probe)
            if marks is not None:
                self.metadata.setdefault("time_features", int(marks.shape[-1]))
            if first or "cond_dim" not in self.metadata:
                self._build_from(X.to(self.device), None if marks is None else marks.to(self.device))
            return rows
        X, Y = self._windows(df, self.config.stride, role)
        marks = None
        if self._uses_marks():
            marks = self._window_marks(df, self.config.stride)
            self.metadata.setdefault("time_features", int(marks.shape[-1]))
        if first or "cond_dim" not in self.metadata:
            self._build_from(X, marks)
        rows = window_rows(X, Y)
        return (rows if marks is None else torch.cat([rows, marks.to(rows.dtype)], dim=-1)).to(self.device)

    def training_loss(self, network: nn.Module, batch: torch.Tensor) -> torch.Tensor:
        from scigen.timeseries.d3u.process import residual_loss

        x, y, marks = self._split(batch)
        return residual_loss(network, self.config, x, y, marks=marks)

    def _forecaster_loss(self, network: nn.Module, batch: torch.Tensor) -> torch.Tensor:
        from scigen.timeseries.forecasters import forecast_and_tokens

        x, y, marks = self._split(batch)
        return torch.nn.functional.mse_loss(forecast_and_tokens(network.forecaster, x, marks)[0], y)

    def fit(self, data: Any, *, max_steps: int | None = None, val_data: Any = None,
            stage: Literal["both", "forecaster", "residual"] = "both", forecaster_steps: int | None = None,
            **options: Any) -> D3U:
        """Train on ``data`` (a DataFrame with a DatetimeIndex, or xarray) for ``max_steps`` steps **in all**.

        ``max_steps`` is the budget of both stages together, not of each: with the default
        ``stage_shares={"forecaster": 0.5}``, ``fit(max_steps=10)`` trains the forecaster 5 steps and the
        residual diffusion 5 (the split is logged once at the start, on the ``scigen.timeseries.d3u``
        logger at INFO). Two engine stages (:meth:`train_stages`): ``"forecaster"`` trains the forecaster
        with MSE on ``round(config.stage_shares["forecaster"] · max_steps)`` steps (or exactly
        ``forecaster_steps``, 0 = none), then ``"residual"`` trains the residual diffusion around the frozen
        forecaster on every step left (more when the forecaster early-stops). ``stage="forecaster"`` /
        ``"residual"`` runs only that stage on the whole budget (``"residual"``: around the forecaster as it
        is, e.g. a trained user module; a built-in forecaster that has not been trained gets a
        ``UserWarning``, since the diffusion would model the residual of an untrained network).
        ``val_data`` adds validation losses and early stopping (``train.early_stopping``) per stage; ``options``
        override ``config.train`` for this call. A ``checkpoint_dir`` gets one sub-folder per stage
        (``forecaster/``, ``residual/``) and ``resume=True`` skips a finished stage and continues the other.
        """
        from scigen.core.train.stages import Stage

        if stage not in _STAGES:
            raise InvalidInputError(f"stage must be one of {_STAGES}, got {stage!r}")
        budget = self.training_options().max_steps if max_steps is None else check_count(max_steps, "max_steps")
        rows = self.prepare_data(data, role="data")
        val_rows = None if val_data is None else self.prepare_data(val_data, role="val_data")
        if not isinstance(rows, torch.Tensor) or not isinstance(val_rows, (torch.Tensor, type(None))):
            from scigen.timeseries.data.stream import batch_as_is

            options = {"collate_fn": batch_as_is, **options}  # streamed windows come batched
        forecaster = Stage("forecaster", ("forecaster",), loss="_forecaster_loss", min_steps=0,
                           share=self.config.stage_shares["forecaster"])
        if stage == "both" and forecaster_steps is not None:
            n1 = 0 if forecaster_steps == 0 else check_count(forecaster_steps, "forecaster_steps")
            if n1 >= budget:
                raise InvalidInputError(f"forecaster_steps={n1} leaves none of max_steps={budget} for the "
                                        "residual diffusion")
            forecaster = Stage("forecaster", ("forecaster",), loss="_forecaster_loss", steps=n1)
        residual = Stage("residual", ("denoiser",), loss="training_loss")
        plan = {"both": [forecaster, residual], "forecaster": [Stage("forecaster", ("forecaster",),
                                                                     loss="_forecaster_loss")],
                "residual": [residual]}[stage]
        from scigen.core.log import get_logger
        from scigen.core.train.stages import split_budget

        if stage == "residual" and self.config.forecaster != "custom" and not self._forecaster_trained():
            import warnings

            warnings.warn(f"fit(stage='residual') on a {self.config.forecaster} forecaster that has not been trained: "
                          "the diffusion will model the residual of an untrained network; run fit(...) (both "
                          "stages) or fit(..., stage='forecaster') first, or pass a trained module as forecaster=",
                          UserWarning, stacklevel=2)
        split = dict(zip([st.name for st in plan], split_budget(plan, budget), strict=True))
        get_logger("scigen.timeseries.d3u").info(
            "D3U fit: max_steps=%d is the budget of both stages together: %s%s", budget,
            " + ".join(f"{k} {v}" for k, v in split.items()),
            " (the residual stage also gets the steps an early-stopped forecaster leaves)" if len(split) > 1 else "")
        self.train_stages(rows, plan, val_data=val_rows, max_steps=budget, **options)
        if stage != "forecaster":
            for key in ("spread_scale", "spread_scale_windows", "spread_scale_rel_se"):
                self.metadata.pop(key, None)
            if val_rows is not None and self.config.calibrate:
                self._calibrate(val_rows)
        self.network.eval()
        return self

    def _forecaster_trained(self) -> bool:
        """Whether any fit of this model trained the forecaster stage (``history.stages``)."""
        return any(name == "forecaster" and end > start for name, start, end in self.history.stages)

    def _calibrate(self, val_rows: torch.Tensor, max_windows: int | None = None, n: int | None = None) -> None:
        """Std scaling (ours; Levi et al. 2022, "Evaluating and calibrating uncertainty prediction in regression
        tasks", §4): one factor per horizon step and variable ``κ_{h,n} = sqrt(E[(Y − Ŷ)²] / E[r̂²])`` (per
        variable only with ``calibrate_by="variable"``) over up to ``max_windows`` validation windows
        (``config.calibrate_windows``, a seeded subsample) and ``n`` draws each (``config.calibrate_draws``),
        each factor with a relative standard error of about ``sqrt((1 + 1/n) / (2·windows))``
        (:func:`~scigen.timeseries.d3u.process.kappa_relative_se`; 6.6 % at the default 128 × 8), so the
        draws' second moment matches the held-out residuals' on the same grid as the
        constant-variance baseline's ``σ_{h,n}``; PatchDN then contributes how the spread varies across windows.
        Centred draws are scaled by ``sqrt(n / (n − 1))`` first (centring ``n`` draws removes ``1/n`` of their
        variance; at 100 samples it removes 1 %, at 16 it removed 6 %, which inflated the calibrated spread).
        The residual diffusion learns the *training* residuals, which are smaller than out-of-sample ones
        whenever the forecaster fits its training windows better than new ones."""
        from scigen.timeseries.d3u.process import sample_residuals

        c = self.config
        max_windows = c.calibrate_windows if max_windows is None else max_windows
        n = c.calibrate_draws if n is None else n
        gen = self.generator(self.training_options().seed + 1)
        idx = torch.randperm(len(val_rows), generator=gen, device=self.device)[:max_windows]
        X, Y, marks = self._split(take_windows(val_rows, idx))
        y_hat, r = sample_residuals(self.network, c, X, n, method=c.method, steps=c.steps, generator=gen, marks=marks)
        if c.center_residuals:  # centred draws: their mean square is (n − 1)/n of the draws' variance
            r = _centred(r, True) * math.sqrt(n / (n - 1))
        over = (0, 1) if c.calibrate_by == "variable" else (0,)  # -> kappa [N] or [H, N]
        kappa = torch.sqrt((Y - y_hat).pow(2).mean(over) / r.pow(2).mean(over).mean(0).clamp_min(1e-12))
        self.metadata["spread_scale"] = kappa.double().cpu().tolist()
        from scigen.timeseries.d3u.process import kappa_relative_se

        self.metadata["spread_scale_windows"] = int(X.shape[0])
        self.metadata["spread_scale_rel_se"] = kappa_relative_se(int(X.shape[0]), n)

    @torch.no_grad()
    def point_forecast(self, X: torch.Tensor, marks: torch.Tensor | None = None) -> torch.Tensor:
        """The frozen forecaster's ``Ŷ [W, H, N]`` for standardised contexts ``X [W, C, N]`` (``marks [W, C + H,
        F]``: the windows' calendar features, for an NS-Transformer with ``f_time_features``)."""
        from scigen.timeseries.forecasters import forecast_and_tokens

        self.require_trained("point_forecast")
        if marks is None and self._uses_marks():
            raise InvalidInputError("this NS-Transformer embeds calendar features (f_time_features): pass "
                                    "point_forecast(X, marks=model.evaluation_marks(data, ...)) with the windows' marks")
        self.network.eval()
        return forecast_and_tokens(self.network.forecaster, X.to(self.device),
                                   None if marks is None else marks.to(self.device))[0]

    keyed_sampling = True  # _sample_std(keys=): one stream per sample (sample(devices=N))

    def _sample_std(self, X: torch.Tensor, n: int, seed: int | None, method: str | None, steps: int | None,
                    progress: bool | None = False, marks: torch.Tensor | None = None,
                    keys: torch.Tensor | None = None) -> torch.Tensor:
        """``keys [n]``: sample indices; chain ``i`` of window ``w`` draws from the stream keyed by
        ``(seed, keys[i]·W + w)`` (:class:`~scigen.core.streams.SampleStreams`), and the residuals are left
        uncentred: ``config.center_residuals`` (a mean over all the draws) is applied by :meth:`_after_gather`
        once every process's draws are gathered."""
        from scigen.timeseries.d3u.process import sample_residuals

        c = self.config
        n = check_count(n, "n_samples")
        method = c.method if method is None else check_method(method)
        steps = c.steps if steps is None else check_count(steps, "steps")
        gen = self._sampling_generator(seed, keys, X.shape[0])
        y_hat, r = sample_residuals(self.network, c, X, n, method=method, steps=steps,
                                    generator=gen, progress=progress, marks=marks)
        if keys is None:
            r = _centred(r, c.center_residuals)
        else:
            self._keyed_point = y_hat[0].detach()  # the first window's Ŷ: what sample() keeps, for _after_gather
        if self._use_calibration():
            r = r * torch.tensor(self.metadata["spread_scale"], dtype=r.dtype, device=r.device)
        return y_hat[None] + r

    def _couples_samples(self) -> bool:
        return bool(self.config.center_residuals)

    def _after_gather(self, out: torch.Tensor) -> torch.Tensor:
        """Keyed forecasts ``[n, H, N]`` of all processes, centred over the ``n`` draws when
        ``config.center_residuals``: ``Ŷ + s·r_i − mean_j(Ŷ + s·r_j) + Ŷ = Ŷ + s·(r_i − mean r)`` (``Ŷ``, the same
        for every draw, from this process's last keyed draw: every process computes it from the same context)."""
        if not self.config.center_residuals or out.shape[0] < 2:
            return out
        y_hat = self._keyed_point.to(out)
        return out - out.mean(0, keepdim=True) + y_hat[None]

    def _use_calibration(self) -> bool:
        """Whether draws get the stored scale factors: the call's ``calibrate=`` (:meth:`sample`,
        :meth:`evaluate`), else ``config.calibrate``; never without factors (no ``val_data`` at fit)."""
        want = getattr(self, "_calibrate_call", None)
        want = self.config.calibrate if want is None else want
        return bool(want) and "spread_scale" in self.metadata

    @contextlib.contextmanager
    def _calibration(self, calibrate: bool | None):
        if calibrate not in (None, True, False):
            raise InvalidInputError(f"calibrate must be True, False or None (the config's), got {calibrate!r}")
        if calibrate and "spread_scale" not in self.metadata:
            raise InvalidInputError("calibrate=True: this model has no calibration factors (fit with val_data= "
                                    "and config.calibrate=True stores them)")
        self._calibrate_call = calibrate
        try:
            yield
        finally:
            self._calibrate_call = None

    def sample(self, context: Any, n_samples: int | None = None, *, method: str | None = None,
               steps: int | None = None, seed: int | None = None, progress: bool | None = None,
               calibrate: bool | None = None, devices: int = 1):
        """:meth:`ForecastSystem.sample <scigen.timeseries.forecast_system.ForecastSystem.sample>` (default
        ``config.n_samples`` draws). ``calibrate``: ``False`` gives the paper's uncalibrated draws of a model
        fitted with calibration, ``True`` requires the stored factors, ``None`` follows ``config.calibrate``
        (so ``model.config.calibrate = False`` switches them off too)."""
        with self._calibration(calibrate):
            return super().sample(context, n_samples, method=method, steps=steps, seed=seed, progress=progress,
                                  devices=devices)

    def evaluate(self, data: Any, *, n_samples: int | None = None, stride: int | None = None,
                 max_windows: int | None = None, seed: int | None = None, method: str | None = None,
                 steps: int | None = None, calibrate: bool | None = None) -> dict[str, float]:
        """:meth:`ForecastSystem.evaluate <scigen.timeseries.forecast_system.ForecastSystem.evaluate>`;
        ``calibrate`` as in :meth:`sample`."""
        with self._calibration(calibrate):
            return super().evaluate(data, n_samples=n_samples, stride=stride, max_windows=max_windows, seed=seed,
                                    method=method, steps=steps)

    # ---------------------------------------------------------------- demo
    @classmethod
    def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
        """Synthetic heteroscedastic series: PatchTST + residual diffusion against the same frozen PatchTST with
        a constant residual variance fitted on validation; forecast plot."""
        from scigen.timeseries.d3u.demo import run_demo

        return run_demo(cls, out, quick=quick)


def _centred(r: torch.Tensor, on: bool) -> torch.Tensor:
    """Residual draws ``[n, W, H, N]`` minus their mean over the draws (``config.center_residuals``; not for n = 1)."""
    return r - r.mean(0, keepdim=True) if on and r.shape[0] > 1 else r


def _device_of(module: nn.Module) -> torch.device:
    for p in module.parameters():
        return p.device
    return torch.device("cpu")
