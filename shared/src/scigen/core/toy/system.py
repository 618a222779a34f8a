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
from typing import Any, Literal

import pydantic
import torch
from torch import Tensor, nn

from scigen.core.errors import InvalidInputError
from scigen.core.nn import ResidualMLP
from scigen.core.plotting import save_figure
from scigen.core.system import DemoResult, System, SystemConfig, write_report
from scigen.core.system.base import Stopwatch
from scigen.core.toy.data import DATASETS, toy_data


class ToyConfig(SystemConfig):
    """Settings of the toy system (defaults train eight-Gaussians well in well under a minute)."""

    dataset: str = "eight_gaussians"
    objective: Literal["flow_matching", "diffusion"] = "flow_matching"
    width: int = pydantic.Field(128, gt=0)
    depth: int = pydantic.Field(3, gt=0)
    lr: float = pydantic.Field(2e-3, gt=0)
    batch_size: int = pydantic.Field(256, gt=0)
    max_steps: int = pydantic.Field(1500, gt=0)
    ema_decay: float = pydantic.Field(0.995, ge=0, lt=1)
    sampler: str | None = None  # default: "heun" for flow matching, "dpmpp_2m" for diffusion
    sample_steps: int = pydantic.Field(20, gt=0)
    seed: int = 0

    @pydantic.field_validator("dataset")
    @classmethod
    def _known_dataset(cls, v: str) -> str:
        if v not in DATASETS:
            raise ValueError(f"unknown toy dataset {v!r}; valid: {', '.join(DATASETS)}")
        return v


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
    def path(self):
        from scigen.core.paths import LinearPath, VPLinear

        return LinearPath() if self.config.objective == "flow_matching" else VPLinear()

    @property
    def prediction(self) -> str:
        return "velocity" if self.config.objective == "flow_matching" else "eps"

    def build_network(self) -> nn.Module:
        torch.manual_seed(self.config.seed)
        return ResidualMLP(self.dim, width=self.config.width, depth=self.config.depth)

    def _check_points(self, data: Any, what: str) -> Tensor:
        if not isinstance(data, Tensor):
            raise InvalidInputError(f"{what} must be a torch.Tensor of shape [n, {self.dim}], got {type(data).__name__}")
        if data.ndim != 2 or data.shape[1] != self.dim or data.shape[0] == 0:
            raise InvalidInputError(f"{what} must have shape [n>0, {self.dim}] for dataset "
                                    f"{self.config.dataset!r}, got {tuple(data.shape)}")
        if not bool(torch.isfinite(data).all()):
            raise InvalidInputError(f"{what} contains NaN or inf")
        return data.float()

    # ---------------------------------------------------------------- verbs
    def fit(self, data: Tensor, *, max_steps: int | None = None, **options: Any) -> ToySystem:
        """Train on points ``data [n, dim]``; options go to :func:`scigen.core.train.fit`."""
        from scigen.core.losses import denoising_loss, flow_matching_loss
        from scigen.core.train import fit

        x = self._check_points(data, "data")
        path, target = self.path, self.prediction

        def loss_fn(net: nn.Module, batch: Tensor) -> Tensor:
            if self.config.objective == "flow_matching":
                return flow_matching_loss(net, batch, path=path)
            return denoising_loss(net, batch, path, target=target)

        options.setdefault("batch_size", self.config.batch_size)
        options.setdefault("lr", self.config.lr)
        options.setdefault("ema_decay", self.config.ema_decay)
        options.setdefault("seed", self.config.seed)
        result = fit(self.network, loss_fn, x, max_steps=max_steps or self.config.max_steps, **options)
        self.network = result.module
        self.metadata["trained_steps"] = int(self.metadata.get("trained_steps", 0)) + int(result.steps)
        self.metadata["final_loss"] = float(result.losses[-1]) if len(result.losses) else None
        return self

    @torch.no_grad()
    def sample(self, n: int, *, steps: int | None = None, method: str | None = None,
               generator: torch.Generator | None = None, return_trajectory: bool = False):
        """Draw ``n`` samples ``[n, dim]`` by integrating from ``t = 1`` (noise) to ``t = 0``."""
        from scigen.core.samplers import sample, time_grid

        if int(n) <= 0:
            raise InvalidInputError(f"n must be a positive number of samples, got {n}")
        method = method or self.config.sampler or ("heun" if self.config.objective == "flow_matching" else "dpmpp_2m")
        path = self.path
        steps = steps or self.config.sample_steps
        if generator is None:
            generator = torch.Generator().manual_seed(self.config.seed)
        x1 = torch.randn(int(n), self.dim, generator=generator)
        if self.config.objective == "flow_matching":
            times = time_grid(steps, kind="uniform", path=path, t_max=1.0, t_min=0.0)
        else:
            times = time_grid(steps, kind="logsnr", path=path, t_max=1.0, t_min=1e-3)
        self.network.eval()
        return sample(self.network, x1, times, path=path, prediction=self.prediction, method=method,
                      generator=generator, return_trajectory=return_trajectory, progress=False)

    def evaluate(self, data: Tensor, *, n: int | None = None) -> dict[str, float]:
        """``W2`` (exact OT, not squared) and biased RBF ``MMD2`` of samples against ``data``."""
        from scigen.core.metrics import mmd_rbf, w2

        ref = self._check_points(data, "data")
        gen = self.sample(n or ref.shape[0])
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
        try:
            arr = np.load(p) if p.suffix == ".npy" else np.loadtxt(p, delimiter="," if p.suffix == ".csv" else None)
        except ValueError as exc:
            raise InvalidInputError(f"{p}: cannot read numbers ({exc})") from exc
        return torch.as_tensor(np.atleast_2d(arr), dtype=torch.float32)

    @classmethod
    def demo(cls, out_dir: str | os.PathLike[str], *, quick: bool = False) -> DemoResult:
        """Train on eight-Gaussians, compare W2 with the untrained model, plot samples vs data."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        with Stopwatch() as sw:
            model = cls(max_steps=400 if quick else 1500)
            train = cls.default_data(quick=quick)
            test = toy_data(model.config.dataset, 1000, seed=1)
            before = model.evaluate(test)
            model.fit(train, progress=False)
            after = model.evaluate(test)
            png = plot_samples(model.sample(1000), test, out / "samples.png",
                               title=f"core/toy {model.config.objective}: W2 {after['W2']:.3f}")
            model.save(out / "model")
        metrics = {"W2": after["W2"], "MMD2": after["MMD2"], "W2_untrained": before["W2"]}
        report = write_report(out, {"system": cls.key(), "config": model.config.model_dump(),
                                    "metrics": metrics, "seconds": sw.seconds,
                                    "note": "W2 is the exact 2-Wasserstein distance (not squared) between "
                                            "1000 samples and 1000 held-out points"})
        return DemoResult(metrics=metrics, files=[report, png, out / "model"], seconds=sw.seconds)


def plot_samples(samples: Tensor, data: Tensor, path: Path, *, title: str = "") -> Path:
    """Scatter ``samples`` over ``data`` (first two coordinates) and save a PNG atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 5))
    ax.scatter(data[:, 0], data[:, 1], s=3, alpha=0.4, label="data", color="tab:gray")
    ax.scatter(samples[:, 0], samples[:, 1], s=3, alpha=0.6, label="samples", color="tab:red")
    ax.set_aspect("equal")
    ax.legend(loc="upper right")
    ax.set_title(title)
    return save_figure(fig, path, dpi=120)
