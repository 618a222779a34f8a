"""``core/toy``: the built-in system, flow matching or diffusion on toy distributions.

It is what ``scigen demo`` shows before any domain is installed, and the shortest complete example
of a system built on the engine:

* **flow matching** (Lipman et al. 2023, rectified flow of Liu et al. 2023): the linear path
  ``x_t = (1 − t)·x0 + t·eps``, the network regresses the velocity ``eps − x0``, samples come from
  integrating the ODE from ``t = 1`` to ``t = 0`` (Heun by default);
* **diffusion** (Ho et al. 2020; the continuous linear-beta VP path of Song et al. 2021, beta from
  0.1 to 20): the network predicts ``eps``; sampling with DPM-Solver++(2M) (Lu et al. 2022) on a
  grid uniform in log-SNR from ``t = 1`` to ``t = 1e-3``, the setting of the DPM-Solver papers.
  (``alpha(1) = 0.0066 > 0`` on this path, so the x0 estimate exists at the first step.)

Evaluation reports the exact W2 (POT, Euclidean ground cost) and the biased multi-bandwidth RBF
MMD² between generated and held-out data.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar, Literal

import pydantic
import torch
from torch import Tensor, nn

from scigen.core.errors import InvalidInputError
from scigen.core.generative import Diffusion, FlowMatching
from scigen.core.nn import ResidualMLP
from scigen.core.plotting import save_figure
from scigen.core.streams import SampleStreams
from scigen.core.system import DemoResult, System, SystemConfig, TrainingOptions, training_defaults
from scigen.core.toy.data import DATASETS, toy_data
from scigen.core.validation import check_count


class ToyConfig(SystemConfig):
    """Settings of the toy system (defaults train eight-Gaussians well in well under a minute)."""

    dataset: str = "eight_gaussians"
    objective: Literal["flow_matching", "diffusion"] = "flow_matching"
    width: int = pydantic.Field(128, gt=0)
    depth: int = pydantic.Field(3, gt=0)
    method: str | None = None  # default: "heun" for flow matching, "dpmpp_2m" for diffusion
    steps: int = pydantic.Field(20, gt=0)
    train: TrainingOptions = training_defaults(max_steps=1500, batch_size=256, lr=2e-3, ema_decay=0.995)

    SAMPLING_FIELDS: ClassVar[tuple[str, ...]] = ("method", "steps")
    #: ``sampling("fast")``: per objective, the cheapest setting within seed noise of the paper sampler (heun @ 20
    #: / dpmpp_2m @ 20) over seeds 3-5 (benchmarks/core/results/system_samplers_fast.md)
    SAMPLERS: ClassVar[dict[str, Any]] = {
        "fast": lambda c: {"method": "heun", "steps": 3} if c.objective == "flow_matching"
        else {"method": "dpmpp_2m", "steps": 5},
    }
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "tiny": {"width": 64, "depth": 2, "train": {"max_steps": 400}},
        "small": {},
        "paper": {"width": 256, "depth": 4, "train": {"max_steps": 20000}},
    }

    @pydantic.field_validator("dataset")
    @classmethod
    def _known_dataset(cls, v: str) -> str:
        if v not in DATASETS:
            raise ValueError(f"unknown toy dataset {v!r}; valid: {', '.join(DATASETS)}")
        return v

    @pydantic.field_validator("method")
    @classmethod
    def _known_method(cls, v: str | None) -> str | None:
        from scigen.core.samplers import check_method

        return check_method(v, allow_none=True, error=ValueError)


class ToySystem(System):
    """Flow matching / diffusion on a toy distribution (see module docstring)."""

    domain = "core"
    name = "toy"
    description = "Flow matching or diffusion on 2-D toys and a 32-d Gaussian mixture."
    Config = ToyConfig

    # ---------------------------------------------------------------- wiring
    @property
    def dim(self) -> int:
        return 32 if self.config.dataset == "gaussian_mixture_32d" else 2

    @property
    def process(self) -> Diffusion:
        """The network bound to its path and prediction (the engine's loss and sampler)."""
        from scigen.core.paths import VPLinear

        if self.config.objective == "flow_matching":
            return FlowMatching(self.network, method=self.config.method or "heun", steps=self.config.steps)
        return Diffusion(self.network, VPLinear(), "eps", method=self.config.method or "dpmpp_2m",
                         steps=self.config.steps, grid="logsnr", grid_t_min=1e-3)

    def build_network(self) -> nn.Module:
        return ResidualMLP(self.dim, width=self.config.width, depth=self.config.depth)

    def _check_points(self, data: Any, what: str) -> Tensor:
        if not isinstance(data, Tensor):
            raise InvalidInputError(f"{what} must be a torch.Tensor of shape [n, {self.dim}], got {type(data).__name__}")
        if data.ndim != 2 or data.shape[1] != self.dim or data.shape[0] == 0:
            raise InvalidInputError(f"{what} must have shape [n>0, {self.dim}] for dataset "
                                    f"{self.config.dataset!r}, got {tuple(data.shape)}")
        if not bool(torch.isfinite(data).all()):
            raise InvalidInputError(f"{what} contains NaN or inf")
        return data.float().to(self.device)

    # ---------------------------------------------------------------- verbs
    def prepare_data(self, data: Any, *, role: str) -> Tensor:
        """Points ``[n, dim]`` (checked) on the network's device."""
        return self._check_points(data, role)

    def training_loss(self, network: nn.Module, batch: Tensor) -> Tensor:
        return self.process.loss(batch, network=network)

    @torch.no_grad()
    def sample(self, n_samples: int, *, method: str | None = None, steps: int | None = None,
               seed: int | None = None, return_trajectory: bool = False, progress: bool | None = None,
               devices: int = 1):
        """Draw ``n_samples`` points ``[n_samples, dim]`` by integrating from ``t = 1`` (noise) to ``t = 0``
        with the engine's ``method`` (default: Heun for flow matching, DPM-Solver++(2M) for diffusion).

        Always a tensor (one return type per verb); the states of every step come from :meth:`trajectory`
        (``return_trajectory=True`` here is deprecated: it still returns ``(x, trajectory)`` for one release).

        Sample ``i`` draws its noise from its own stream keyed by ``(seed, i)``
        (:class:`~scigen.core.streams.SampleStreams`): the first ``k`` of ``n`` samples are ``sample(k)``, and
        ``devices=N`` splits the samples over ``N`` processes (Lightning Fabric) with the same result."""
        if return_trajectory:
            from scigen.core.deprecation import warn_renamed

            warn_renamed("ToySystem.sample(return_trajectory=True)", "ToySystem.trajectory(n_samples, ...)")
            return self.trajectory(n_samples, method=method, steps=steps, seed=seed, progress=progress)
        n = check_count(n_samples, "n_samples")
        self.require_trained("sample")
        from scigen.core.system.sharded import sample_in_shards

        return sample_in_shards(self.sample_draw(method=method, steps=steps, seed=seed, progress=progress), n,
                                devices=devices)

    def sample_draw(self, *, method: str | None = None, steps: int | None = None, seed: int | None = None,
                    progress: bool | None = None):
        """``draw(keys)``: the points ``[len(keys), dim]`` of the samples with these indices (see :meth:`sample`;
        :meth:`sample_to` writes them into one ``.npy`` file)."""
        return lambda keys: self._generate(len(keys), method=method, steps=steps, seed=seed, progress=progress,
                                           keys=keys)

    def trajectory(self, n_samples: int, *, method: str | None = None, steps: int | None = None,
                   seed: int | None = None, progress: bool | None = None) -> tuple[Tensor, Tensor]:
        """``(x, states)``: what :meth:`sample` draws (same seed, same points) and the states
        ``[steps + 1, n_samples, dim]`` from the noise to it."""
        n = check_count(n_samples, "n_samples")
        self.require_trained("sample")
        return self._generate(n, method=method, steps=steps, seed=seed, return_trajectory=True, progress=progress,
                              keys=torch.arange(n))

    def _generate(self, n: int, *, method=None, steps=None, seed=None, return_trajectory=False, progress=False,
                  keys=None):
        process = self.process
        if keys is None:
            gen = self.generator(seed)
        else:  # per-sample streams on the network's device
            gen = SampleStreams(self.sample_seed(seed), keys.to(self.device))
        x1 = process.prior((n, self.dim), generator=gen)
        return process.sample(x1, steps=steps, method=method, generator=gen,
                              return_trajectory=return_trajectory, progress=progress)

    def evaluate(self, data: Tensor, *, n_samples: int | None = None, seed: int | None = None) -> dict[str, float]:
        """``W2`` (exact OT, not squared) and biased RBF ``MMD2`` of samples against ``data``."""
        from scigen.core.metrics import mmd_rbf, w2

        ref = self._check_points(data, "data")
        gen = self.sample(n_samples or ref.shape[0], seed=seed)
        return {"W2": float(w2(gen, ref)), "MMD2": float(mmd_rbf(gen, ref))}

    # ---------------------------------------------------------------- CLI / demo
    @classmethod
    def default_data(cls, quick: bool = False, dataset: str = "eight_gaussians") -> Tensor:
        return toy_data(dataset, 2000 if quick else 20000, seed=0)

    @classmethod
    def read_data(cls, path: str | os.PathLike[str]) -> Tensor:
        """Read points from a ``.npy`` or a whitespace/comma separated text file ``[n, dim]``."""
        import numpy as np

        p = Path(path)
        if not p.is_file():
            raise InvalidInputError(f"{p}: no such data file")
        import warnings

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # numpy's "input contained no data"
                arr = np.load(p) if p.suffix == ".npy" else np.loadtxt(p, delimiter="," if p.suffix == ".csv" else None)
        except (ValueError, OSError) as exc:
            raise InvalidInputError(f"{p}: cannot read numbers ({exc})") from None
        arr = np.atleast_2d(arr)
        if arr.size == 0:
            raise InvalidInputError(f"{p}: the file holds no points")
        if arr.ndim != 2 or not np.issubdtype(arr.dtype, np.number):
            raise InvalidInputError(f"{p}: expected a table of numbers [n, dim], got shape {arr.shape}, dtype {arr.dtype}")
        return torch.as_tensor(arr, dtype=torch.float32)

    @classmethod
    def run_demo(cls, out: Path, *, quick: bool = False) -> DemoResult:
        """Train on eight-Gaussians, compare W2 with the untrained network, plot samples vs data."""
        model = cls(train={"max_steps": 400 if quick else 1500, "progress": False})
        train = cls.default_data(quick=quick)
        test = toy_data(model.config.dataset, 1000, seed=1)
        from scigen.core.metrics import w2

        w2_untrained = float(w2(cls(model.config)._generate(1000), test))
        model.fit(train)
        after = model.evaluate(test)
        fig = plot_samples(model.sample(1000), test, title=f"core/toy {model.config.objective}: W2 {after['W2']:.3f}")
        png = save_figure(fig, out / "samples.png", dpi=120)
        model.save(out / "model", overwrite=True)
        metrics = {"W2": after["W2"], "MMD2": after["MMD2"], "W2_untrained": w2_untrained}
        return DemoResult(metrics=metrics, files=[png, out / "model"],
                          report={"config": model.config.model_dump(),
                                  "note": "W2 is the exact 2-Wasserstein distance (not squared) between "
                                          "1000 samples and 1000 held-out points"})


def plot_samples(samples: Tensor, data: Tensor, path: str | os.PathLike[str] | None = None, *,
                 ax=None, title: str = ""):
    """Scatter ``samples`` over ``data`` (first two coordinates) into ``ax`` (a new figure when None).

    Returns the Figure; writes a PNG atomically only when ``path`` is given. Never sets the backend."""
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=(5, 5))
    else:
        fig = ax.figure
    data, samples = data.detach().cpu(), samples.detach().cpu()
    ax.scatter(data[:, 0], data[:, 1], s=3, alpha=0.4, label="data", color="tab:gray")
    ax.scatter(samples[:, 0], samples[:, 1], s=3, alpha=0.6, label="samples", color="tab:red")
    ax.set_aspect("equal")
    ax.legend(loc="upper right")
    ax.set_title(title)
    if path is not None:
        save_figure(fig, path, dpi=120, close=False)
    return fig
