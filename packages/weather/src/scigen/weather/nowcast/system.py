"""``weather/nowcast``: precipitation nowcasting with a posterior-mean estimator and a rectified flow.

After "Perceptually constrained precipitation nowcasting" (ICML 2025) and PMRF (Ohayon, Michaeli & Elad,
ICLR 2025): stage 1, an MSE U-Net, predicts the posterior-mean sequence (``horizon`` frames from
``context_frames``); stage 2, a rectified flow on the engine's linear path, transports
``mean + sigma_s·noise`` to the observed frames, conditioned on the context and the mean, with lead-time
weights that grow with distance::

    model = Nowcast(NowcastConfig.preset("small")).fit(field)      # DataArray (time, y, x), units attr
    fc = model.sample(context, n_samples=8)        # DataArray (member, lead_time, y, x), valid_time coord
    scores = model.evaluate(test_field)            # CSI/POD/FAR/HSS, pooled CSI, FSS, CRPS, SSIM, PSNR, spectra
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import nn

from scigen.core.deprecation import renamed_kwarg
from scigen.core.errors import InvalidInputError
from scigen.core.system import DemoResult, System
from scigen.core.validation import check_count
from scigen.weather.data.fields import as_field, is_lazy, time_step, to_units
from scigen.weather.nowcast.config import NowcastConfig
from scigen.weather.nowcast.windows import Transform, window_starts

__all__ = ["Nowcast", "NowcastConfig"]


class Nowcast(System):
    """Two-stage nowcaster on xarray fields (see module docstring)."""

    domain = "weather"
    name = "nowcast"
    description = "Radar nowcasting: MSE U-Net posterior mean + rectified flow (PMRF, ICML 2025 nowcasting)."
    Config = NowcastConfig

    # ---------------------------------------------------------------- wiring
    def build_network(self) -> nn.Module:
        if "grid" not in self.metadata:
            return nn.ModuleDict()  # built by the first fit, once the grid is known
        from scigen.weather.nowcast.networks import NowcastNet

        return NowcastNet(self.config, *self.metadata["grid"])

    @property
    def transform(self) -> Transform:
        if "transform" not in self.metadata:
            self.require_trained("using its value transform")
        return Transform.from_dict(self.metadata["transform"])

    def _field(self, data: Any, name: str, min_frames: int):
        """``data`` validated against the training grid, units (converted) and time step."""
        f = as_field(data, name, min_frames=min_frames)
        md = self.metadata
        H, W = md["grid"]
        if (f.sizes["y"], f.sizes["x"]) != (H, W):
            raise InvalidInputError(f"{name}: grid (y, x) = {(f.sizes['y'], f.sizes['x'])} differs from the "
                                    f"training grid {(H, W)}")
        for dim in ("y", "x"):  # same spacing (the model's motion is in pixels per step); location may differ
            if not np.allclose(np.diff(f[dim].values), np.diff(np.asarray(md[dim])), rtol=1e-3, atol=1e-9):
                raise InvalidInputError(f"{name}: dimension {dim!r} is spaced {_spacing(f[dim].values)}, the training "
                                        f"grid {_spacing(md[dim])}; regrid the field to the training spacing")
        src, dst = f.attrs["units"], md["units"]
        if src != dst and is_lazy(f):
            raise InvalidInputError(f"{name} is in {src}, the model in {dst}: a field opened lazily is not converted "
                                    f"on the fly; write it in {dst} (scigen.weather.data.to_units per block)")
        if src != dst:
            if {src, dst} != {"VIL digital", "kg/m2"}:  # the one exact conversion (SEVIR's decoding)
                rel = "a Z-R relation, e.g. a=200, b=1.6 (Marshall-Palmer)" if "mm/h" in (src, dst) else \
                    "a VIL column depth, e.g. depth_m=5000"
                opts = "a=200, b=1.6" if "mm/h" in (src, dst) else "depth_m=5000"
                raise InvalidInputError(f"{name} is in {src}, the model in {dst}: the conversion needs {rel}, which "
                                        f"is yours to state: pass scigen.weather.data.to_units({name}, {dst!r}, "
                                        f"{opts})")
            f = to_units(f, dst)
        if f.sizes["time"] > 1 and time_step(f) != pd.Timedelta(md["step"]):
            step = pd.Timedelta(md["step"])
            raise InvalidInputError(f"{name}: dimension 'time' steps by {time_step(f)}; the model was trained on "
                                    f"{step} (jittered scan times: field.assign_coords(time=field.time.dt.round("
                                    f"{_freq(step)!r})); another step: resample the field)")
        if f.sizes["time"] > 1:  # a near-step spacing is jitter, not a gap between events: never silently dropped
            step = pd.Timedelta(md["step"])
            t = pd.DatetimeIndex(f["time"].values)
            d = np.diff(t.asi8)
            near = np.nonzero((d != step.value) & (np.abs(d - step.value) < step.value / 2))[0]
            if near.size:
                j = int(near[0])
                raise InvalidInputError(
                    f"{name}: frames at {t[j]} and {t[j + 1]} are {t[j + 1] - t[j]} apart, near the {step} step "
                    f"({near.size} such pairs); windows only use exact steps, so these frames would be dropped "
                    f"silently: round the times (field.assign_coords(time=field.time.dt.round({_freq(step)!r})))")
        return f

    def _z(self, values: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(self.transform.forward(values), device=self.device)

    def windows(self, data: Any, name: str = "data", stride: int | None = None) -> torch.Tensor:
        """Contiguous windows ``[W, C + L, H, W]`` of ``data`` in model units."""
        c = self.config
        n = c.context_frames + c.horizon
        f = self._field(data, name, n)
        starts = window_starts(f["time"].values, n, pd.Timedelta(self.metadata["step"]), stride or c.stride)
        if starts.size == 0:
            raise InvalidInputError(f"{name}: no run of {n} evenly spaced frames (context_frames + horizon = "
                                    f"{c.context_frames} + {c.horizon}); the time axis has gaps or too few frames")
        v = f.values
        return self._z(np.stack([v[i : i + n] for i in starts]))

    # ---------------------------------------------------------------- training
    def prepare_data(self, data: Any, *, role: str) -> torch.Tensor:
        """The training windows of ``data``: a tensor ``[W, C + L, H, W]`` in model units; for a field opened
        lazily (``xr.open_zarr``, :func:`~scigen.weather.data.open_field`, or the path of a ``.zarr`` /
        ``.nc``) a :class:`~.windows.WindowDataset` reading each window from disk when the engine asks
        for it (the same rows; the value transform's statistics in one streaming pass)."""
        c = self.config
        if isinstance(data, (str, os.PathLike)):
            from scigen.weather.data.io import open_field

            data = open_field(data)
        if _on_disk(data):
            return self._prepare_lazy(data, role)
        if "grid" not in self.metadata:
            self._set_grid(data, role)
        rows = self.windows(data, role)
        if c.advection_input:  # ours: the extrapolated context appended (training.split_batch)
            from scigen.weather.nowcast.forecast import advection_input

            rows = torch.cat([rows, advection_input(self, rows[:, : c.context_frames])], dim=1)
        if role == "data":
            f = self._field(data, role, c.context_frames)
            self.network.last_context.copy_(self._z(f.values[-c.context_frames :]))
            self.metadata["last_time"] = str(pd.Timestamp(f["time"].values[-1]))
        return rows

    def _set_grid(self, data: Any, role: str) -> None:
        """On the first training data: check the grid against the U-Net's factor, record grid, units, time step,
        value transform and coordinates, and build the network (in memory or lazily opened alike:
        ``Transform.fit`` streams a lazy field block by block)."""
        c = self.config
        f = as_field(data, role, min_frames=c.context_frames + c.horizon)
        H, W = f.sizes["y"], f.sizes["x"]
        if H % c.factor or W % c.factor:
            raise InvalidInputError(f"{role}: grid (y, x) = {(H, W)} must be divisible by {c.factor} "
                                    f"(2 ** (len(channel_mults) - 1)); crop or pad the field")
        self.metadata.update(grid=[H, W], units=f.attrs["units"], step=str(time_step(f)),
                             transform=Transform.fit(f).to_dict(),
                             y=f["y"].values.tolist(), x=f["x"].values.tolist())
        self.network = self.make_network()

    def _prepare_lazy(self, data: Any, role: str):
        """:meth:`prepare_data` for a field not in memory: validated and scanned block by block, windows
        read per item (:class:`~.windows.WindowDataset`); nothing reads the whole cube."""
        from scigen.weather.nowcast.windows import WindowDataset

        c = self.config
        n = c.context_frames + c.horizon
        if "grid" not in self.metadata:
            self._set_grid(data, role)
        f = self._field(data, role, n)
        starts = window_starts(f["time"].values, n, pd.Timedelta(self.metadata["step"]), c.stride)
        if starts.size == 0:
            raise InvalidInputError(f"{role}: no run of {n} evenly spaced frames (context_frames + horizon = "
                                    f"{c.context_frames} + {c.horizon}); the time axis has gaps or too few frames")
        extra = None
        if c.advection_input:  # ours: the extrapolated context appended, per window
            from scigen.weather.nowcast.forecast import advection_input

            def extra(rows):
                return advection_input(self, rows[:, : c.context_frames]).cpu()
        if role == "data":
            last = np.asarray(f.isel(time=slice(-c.context_frames, None)).values, dtype=np.float32)
            self.network.last_context.copy_(self._z(last))
            self.metadata["last_time"] = str(pd.Timestamp(f["time"].values[-1]))
        return WindowDataset(f, starts, n, self.transform, extra)

    def training_loss(self, network: nn.Module, batch: torch.Tensor) -> torch.Tensor:
        from scigen.weather.nowcast.training import estimator_loss_fn

        return estimator_loss_fn(self.config)(network, batch)

    def fit(self, data: Any, *, max_steps: int | None = None, val_data: Any = None, **options: Any) -> Nowcast:
        """Two engine stages (:meth:`train_stages`) on the one budget ``max_steps``: ``"estimator"`` (stage 1,
        MSE) on every step ``"flow"`` leaves, then ``"flow"`` (stage 2, the rectified flow, estimator frozen)
        on ``config.stage_shares["flow"]`` of it (0.5; 0 = stage 1 only). ``options`` override
        ``config.train``; a ``checkpoint_dir`` gets an ``estimator/`` and a ``flow/`` folder and
        ``resume=True`` continues either stage exactly. ``val_data`` adds validation losses and early
        stopping per stage."""
        from scigen.core.train.stages import Stage
        from scigen.weather.nowcast.training import estimator_loss_fn, flow_loss_fn

        rows = self.prepare_data(data, role="data")
        val = None if val_data is None else self.prepare_data(val_data, role="val_data")
        stages = [Stage("estimator", ("estimator",), loss=estimator_loss_fn(self.config)),
                  Stage("flow", ("flow",), loss=flow_loss_fn(self.config), share=self.config.stage_shares["flow"],
                        min_steps=0)]
        self.train_stages(rows, stages, val_data=val, max_steps=max_steps, **options)
        return self

    # ---------------------------------------------------------------- forecasting
    def _context(self, context: Any) -> tuple[torch.Tensor, pd.Timestamp, dict]:
        c = self.config
        f = self._field(context, "context", 1)
        if f.sizes["time"] < c.context_frames:
            raise InvalidInputError(f"context: dimension 'time' has {f.sizes['time']} frames; the model needs "
                                    f"context_frames = {c.context_frames}")
        f = f.isel(time=slice(-c.context_frames, None))
        if c.context_frames > 1 and window_starts(f["time"].values, c.context_frames, pd.Timedelta(self.metadata["step"])).size == 0:
            raise InvalidInputError(f"context: its last {c.context_frames} frames are not evenly "
                                    f"{pd.Timedelta(self.metadata['step'])} apart")
        return self._z(f.values)[None], pd.Timestamp(f["time"].values[-1]), {"y": f["y"].values, "x": f["x"].values}

    def sample(self, context: Any, *, n_samples: int | None = None, seed: int | None = None,
               method: str | None = None, steps: int | None = None, stage: str = "flow", devices: int = 1):
        """Forecast ``horizon`` frames after the last ``context_frames`` frames of ``context`` (a field on the
        training grid). ``stage="flow"``: ``n_samples`` ensemble members (default ``config.n_members``) of the
        rectified flow (``method`` / ``steps``: euler, heun or rk4 and its step count); ``stage="mean"``: the
        stage-1 posterior mean (one member). Returns a DataArray ``(member, lead_time, y, x)`` in the
        training units with a ``valid_time`` coordinate (last context time + lead).

        Member ``i`` draws its source noise (the whole field, every lead) from its own stream keyed by
        ``(seed, i)`` (:class:`~scigen.core.streams.SampleStreams`) and the flow integration is deterministic, so
        the first ``k`` of ``n`` members are ``sample(n_samples=k)`` (with the default ``spread_inflation = 1``:
        inflation, ours, rescales deviations from the mean of the whole ensemble), and ``devices=N`` integrates
        the members on ``N`` processes (Lightning Fabric, :func:`~scigen.core.system.sharded.sample_in_shards`)
        and gathers the same ensemble as one process (inflation and probability matching run after the gather).
        With ``devices > 1`` on the CPU the script is re-launched per process: call it under
        ``if __name__ == "__main__"``. :meth:`evaluate` draws from one seeded generator, as before."""
        import xarray as xr

        from scigen.weather.nowcast.forecast import draw_members

        self.require_trained("sample")
        z, t0, coords = self._context(context)
        zs = draw_members(self, z, n_samples, seed, method, steps, stage, keyed=True, devices=devices)[:, 0]
        step = pd.Timedelta(self.metadata["step"])
        leads = pd.to_timedelta([(i + 1) * step for i in range(self.config.horizon)])
        return xr.DataArray(self.transform.inverse(zs.cpu().numpy()), dims=("member", "lead_time", "y", "x"),
                            coords={"lead_time": leads, "valid_time": ("lead_time", t0 + leads),
                                    "y": coords["y"], "x": coords["x"]},
                            name="forecast", attrs={"units": self.metadata["units"], "stage": stage,
                                                    "issue_time": str(t0)})

    def sample_draw(self, *, context: Any = None, seed: int | None = None, method: str | None = None,
                    steps: int | None = None):
        """``draw(keys)`` for :meth:`~scigen.core.system.base.System.sample_to`: member ``i`` of :meth:`sample`'s
        flow ensemble after ``context``, ``forecast`` ``[m, lead_time, y, x]`` in the training units:
        ``model.sample_to("members", 1000, context=radar, devices=4, chunk_size=16)`` writes one folder of
        ``.npy`` files, member ``i`` equal to ``sample``'s. Refused with ``spread_inflation`` or
        ``probability_matching`` (ours, off by default): both use the whole ensemble, so a member depends on the
        others drawn with it. ``context=None``: the training data's last frames (what the CLI forecasts from)."""
        from scigen.weather.nowcast.forecast import member_draw

        self.require_trained("sample")
        c = self.config
        if c.probability_matching or any(float(k) != 1.0 for k in c.inflation()):
            raise InvalidInputError("sample_to: spread_inflation / probability_matching use the whole ensemble, so "
                                    "its members cannot be written a chunk at a time; switch them off or use sample()")
        z, _, _ = self._context(self._cli_context() if context is None else context)
        raw = member_draw(self, z, seed, method, steps)

        def draw(keys: torch.Tensor) -> dict[str, torch.Tensor]:
            return {"forecast": torch.from_numpy(self.transform.inverse(raw(keys)[:, 0].cpu().numpy()))}

        return draw

    def evaluate(self, data: Any, *, n_samples: int | None = None, max_windows: int | None = 32,
                 stride: int | None = None, seed: int | None = None, method: str | None = None,
                 steps: int | None = None, n_members: int | None = None,
                 references: bool | None = None) -> dict[str, float]:
        """Scores of stage 1, stage 1 + flow and persistence on the windows of ``data`` (see
        :mod:`scigen.weather.nowcast.evaluation` for the names); ``n_samples``: ensemble members (default
        ``config.n_members``; ``n_members=`` is its deprecated old name); ``references``: also the same
        CRPS / ES / VS by ``scoringrules`` and FSS / CRPS by ``pysteps.verification`` (``None``: each when
        installed; ``True``: both required; ``False``: none)."""
        from scigen.weather.nowcast.evaluation import evaluate_windows

        n_samples = renamed_kwarg(n_samples, n_members, old="n_members", new="n_samples", where="Nowcast.evaluate")
        self.require_trained("evaluate")
        if max_windows is not None:
            check_count(max_windows, "max_windows")
        units = self.metadata["units"]
        if units != "mm/h" and tuple(self.config.thresholds) == NowcastConfig().thresholds:
            raise InvalidInputError(
                f"evaluate: the thresholds {tuple(self.config.thresholds)} are the mm/h defaults but the model is in "
                f"{units}; state thresholds in {units} (model.config.thresholds = (...), e.g. "
                "SEVIR's VIL bytes (16, 74, 133, 160, 181, 219), or dBZ 20, 30, 40)")
        rows = self.windows(data, "data", stride or self.config.horizon)
        return evaluate_windows(self, rows[:max_windows], n_samples=n_samples, seed=seed, method=method, steps=steps,
                                references=references)

    # ---------------------------------------------------------------- CLI / demo
    @classmethod
    def default_data(cls, quick: bool = False):
        from scigen.weather.data.synthetic import synthetic_storms

        return synthetic_storms(8 if quick else 48, 30, 32, seed=0)

    @classmethod
    def read_data(cls, path: str | os.PathLike[str]):
        from scigen.weather.data.io import read_field

        return read_field(path)

    def write_samples(self, samples: Any, path: str | os.PathLike[str]) -> Path:
        from scigen.weather.data.io import write_field

        return write_field(samples, path, overwrite=True)

    def example_condition(self, data: Any) -> tuple:
        """``(context,)``: the data (``sample`` uses its last ``context_frames`` frames)."""
        return (data,)

    def sample_for_cli(self, n_samples: int, seed: int, devices: int = 1):
        """Forecast after the training data's last frames."""
        self.require_trained("sample")
        return self.sample(self._cli_context(), n_samples=n_samples, seed=seed, devices=devices)

    def _cli_context(self):
        """The training data's last ``context_frames`` frames as a field (what the CLI forecasts from)."""
        from scigen.weather.data.fields import make_field

        c = self.config
        t1 = pd.Timestamp(self.metadata["last_time"])
        step = pd.Timedelta(self.metadata["step"])
        times = [t1 - (c.context_frames - 1 - i) * step for i in range(c.context_frames)]
        values = self.transform.inverse(self.network.last_context.cpu().numpy())
        return make_field(values, times, units=self.metadata["units"], y=self.metadata["y"], x=self.metadata["x"])

    @classmethod
    def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
        from scigen.weather.nowcast.demo import run_demo

        return run_demo(cls, out, quick=quick)


def _on_disk(data: Any) -> bool:
    """True for a DataArray / Dataset whose values are not in memory (opened lazily from a file)."""
    import xarray as xr

    if isinstance(data, xr.Dataset):
        return any(is_lazy(v) for v in data.data_vars.values())
    return isinstance(data, xr.DataArray) and is_lazy(data)


def _spacing(v) -> str:
    d = np.diff(np.asarray(v, dtype=np.float64))
    return f"{d[0]:g}" if d.size and np.allclose(d, d[0]) else f"irregularly ({d.min() if d.size else 0:g} to {d.max() if d.size else 0:g})"


def _freq(step: pd.Timedelta) -> str:
    s = int(step.total_seconds())
    return f"{s // 60}min" if s % 60 == 0 else f"{s}s"
