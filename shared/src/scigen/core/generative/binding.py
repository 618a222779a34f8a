"""A network bound to a Gaussian path and a prediction kind (lucidrains' ``loss = diffusion(x)``,
``diffusion.sample(...)``), on :func:`scigen.core.losses.denoising_loss` and
:func:`scigen.core.samplers.sample`.

The network is called as ``network(x_t, t, **cond)`` with ``t`` of shape ``[B]`` (``t = 0`` data,
``t = 1`` noise) and returns the prediction of kind ``prediction`` (``eps``, ``x0``, ``v``,
``velocity`` or ``score``) in ``x_t``'s shape. Conditioning keywords given to :meth:`loss` /
:meth:`sample` are passed through unchanged, so a conditional system (a forecast context, a netlist)
binds its network once and conditions per call.

Flow matching (Lipman et al. 2023; rectified flow, Liu et al. 2023) is the velocity prediction on
:class:`~scigen.core.paths.LinearPath` (or any Gaussian path), with the noise end ``x1`` optionally
a coupled sample (OT-CFM, Tong et al. 2024). Diffusion (Ho et al. 2020; Salimans & Ho 2022;
Karras et al. 2022) is the ``eps`` / ``x0`` / ``v`` prediction on a VP / VE / discrete path.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from scigen.core import streams
from scigen.core.errors import InvalidInputError
from scigen.core.paths import GaussianPath, LinearPath, check_kind

__all__ = ["Diffusion", "FlowMatching"]


@dataclasses.dataclass
class Diffusion:
    """``network`` + ``path`` + ``prediction``, with the sampler defaults of the paper it implements.

    Args:
        network: ``network(x_t [B, ...], t [B], **cond) -> prediction`` (an ``nn.Module`` or any callable).
        path: the :class:`~scigen.core.paths.GaussianPath` of the forward process.
        prediction: what the network predicts; also the regression target of :meth:`loss`.
        weighting: loss weight per time (``"uniform"``, ``"min_snr"``, ``"edm"`` or ``t -> [B]``).
        time_sampler: how training times are drawn (``scigen.core.losses.sample_times`` names or a callable).
        t_min, t_max: range of training times (``t_min > 0`` keeps ``sigma > 0`` at the data end).
        method, steps: default solver (one of ``scigen.core.samplers.METHODS``) and step count.
        grid, grid_t_max, grid_t_min: default time grid (``time_grid`` kind) and its end points.
        final_denoise: default of :func:`~scigen.core.samplers.sample`'s ``final_denoise``.
        grid_options: extra keywords of :func:`~scigen.core.samplers.time_grid` (``rho``, ``sigma_floor``, ...).
        reduction: ``"mean"`` over all valid entries or ``"per_sample"`` (each sample's mean, then the
            mean over samples), see :func:`~scigen.core.losses.denoising_loss`.
    """

    network: Callable[..., Tensor]
    path: GaussianPath
    prediction: str = "eps"
    weighting: Any = "uniform"
    time_sampler: Any = "uniform"
    t_min: float = 1e-5
    t_max: float = 1.0
    method: str = "dpmpp_2m"
    steps: int = 50
    grid: str = "uniform"
    grid_t_max: float = 1.0
    grid_t_min: float = 0.0
    final_denoise: bool = False
    grid_options: dict = dataclasses.field(default_factory=dict)
    reduction: str = "mean"

    def __post_init__(self) -> None:
        if not callable(self.network):
            raise InvalidInputError(f"network must be callable as network(x, t, **cond), got {type(self.network).__name__}")
        if not isinstance(self.path, GaussianPath):
            raise InvalidInputError(f"path must be a scigen.core.paths.GaussianPath, got {type(self.path).__name__}")
        try:
            check_kind(self.prediction, "prediction")
        except ValueError as exc:
            raise InvalidInputError(str(exc)) from None
        _check_steps(self.steps, "steps")
        from scigen.core.losses.denoising import REDUCTIONS

        if self.reduction not in REDUCTIONS:
            raise InvalidInputError(f"reduction must be one of {REDUCTIONS}, got {self.reduction!r}")

    # ------------------------------------------------------------------ binding
    def bind(self, network: Callable[..., Tensor]) -> Diffusion:
        """The same process around another network (e.g. the module ``fit`` passes, or an EMA copy)."""
        return dataclasses.replace(self, network=network)

    def model_fn(self, network: Callable[..., Tensor] | None = None, **cond: Any) -> Callable[[Tensor, Tensor], Tensor]:
        """``(x, t) -> prediction`` with ``cond`` closed over: the engine's model-function contract."""
        net = self.network if network is None else network
        if not cond:
            return net
        return lambda x, t: net(x, t, **cond)

    @property
    def device(self) -> torch.device:
        """Device of the network's first parameter (CPU for a parameter-free callable)."""
        params = getattr(self.network, "parameters", None)
        if params is not None:
            for p in params():
                return p.device
        return torch.device("cpu")

    # ------------------------------------------------------------------ training
    def loss(self, x0: Tensor, *, mask: Tensor | None = None, clean: Tensor | None = None,
             t: Tensor | None = None, noise: Tensor | None = None, x1: Tensor | None = None,
             generator: torch.Generator | None = None, network: Callable[..., Tensor] | None = None,
             **cond: Any) -> Tensor:
        """The regression loss of one batch: :func:`scigen.core.losses.denoising_loss` with target
        ``prediction``.

        Args:
            x0: clean data ``[B, ...]``.
            mask: boolean, broadcastable to ``x0``; True entries count (padding is False).
            clean: boolean, broadcastable to ``x0``; True entries are *held clean* (``x_t = x0``: fixed
                objects, known ports) and never count in the loss.
            t, noise: fixed times ``[B]`` / noise; drawn when ``None``. ``x1`` is a synonym of
                ``noise`` for flow matching (a coupled sample at ``t = 1``).
            network: train this module instead of the bound one (what ``fit``'s ``loss_fn`` receives).
            **cond: passed to the network.
        """
        from scigen.core.losses import denoising_loss

        if x1 is not None:
            if noise is not None:
                raise InvalidInputError("give the noise end either as noise= or as x1=, not both")
            noise = x1
        return denoising_loss(self.model_fn(network, **cond), x0, self.path, target=self.prediction,
                              weighting=self.weighting, mask=mask, clean=clean, t=t, noise=noise,
                              generator=generator, time_sampler=self.time_sampler, t_min=self.t_min,
                              t_max=self.t_max, reduction=self.reduction)

    def loss_fn(self, **cond: Any) -> Callable[[Any, Tensor], Tensor]:
        """``loss_fn(module, batch)`` for :func:`scigen.core.train.fit` (the batch is ``x0``)."""
        return lambda module, batch: self.loss(batch, network=module, **cond)

    # ------------------------------------------------------------------ sampling
    def times(self, steps: int | None = None) -> Tensor:
        """The default time grid with ``steps`` steps (decreasing, float64, from ``grid_t_max`` to ``grid_t_min``)."""
        from scigen.core.samplers import time_grid

        n = _check_steps(self.steps if steps is None else steps, "steps")
        return time_grid(n, self.grid, path=self.path, t_max=self.grid_t_max, t_min=self.grid_t_min,
                         dtype=torch.float64, **self.grid_options)

    def prior(self, shape: tuple[int, ...] | torch.Size, *, generator: torch.Generator | None = None,
              device=None, dtype: torch.dtype = torch.float32, t: float | None = None) -> Tensor:
        """A draw of the prior at ``t`` (default ``grid_t_max``): ``sigma(t)·N(0, I)`` — the
        ``alpha(t)·x0`` part is negligible at the noise end of VP paths and exactly 0 for linear ones."""
        t = self.grid_t_max if t is None else float(t)
        s = float(self.path.sigma(torch.tensor(t, dtype=torch.float64)))
        device = self.device if device is None else device
        return s * streams.randn(tuple(shape), generator=generator, device=device, dtype=dtype)

    def sample(self, x_init: Tensor, *, steps: int | None = None, times: Tensor | None = None,
               method: str | None = None, guidance=None, project=None, progress: bool | None = None,
               generator: torch.Generator | None = None, callback=None, return_trajectory: bool = False,
               final_denoise: bool | None = None, method_options: dict | None = None, grad: bool = False,
               **cond: Any):
        """Integrate from ``x_init`` (the state at the first time) to ``t = 0`` with
        :func:`scigen.core.samplers.sample`.

        ``steps`` builds the default grid (:meth:`times`); ``times`` gives one explicitly (not both).
        ``method`` defaults to the process's ``method``; ``method_options`` go to the solver
        (``eta`` of ddim, ``order`` of unipc, ...). ``grad=True`` keeps autograd on through the chain
        (see :func:`~scigen.core.samplers.sample`). ``**cond`` is passed to the network.
        """
        from scigen.core.samplers import sample

        if times is not None and steps is not None:
            raise InvalidInputError("give either steps= (a count on the default grid) or times= (a grid), not both")
        grid = self.times(steps) if times is None else times
        net = self.network
        was_training = getattr(net, "training", False)
        if was_training:
            net.eval()
        try:
            return sample(self.model_fn(**cond), x_init, grid, path=self.path, prediction=self.prediction,
                          method=self.method if method is None else method, guidance=guidance,
                          generator=generator, callback=callback, return_trajectory=return_trajectory,
                          progress=progress,
                          final_denoise=self.final_denoise if final_denoise is None else final_denoise,
                          project=project, grad=grad, **(method_options or {}))
        finally:
            if was_training:
                net.train()


def FlowMatching(network: Callable[..., Tensor], path: GaussianPath | None = None, *, method: str = "heun",
                 steps: int = 20, **options: Any) -> Diffusion:
    """Flow matching: velocity prediction on ``path`` (default the linear path ``(1 − t)·x0 + t·x1``),
    training times ``U[0, 1]``, sampling with Heun on a uniform grid from ``t = 1`` to ``t = 0``."""
    options.setdefault("t_min", 0.0)
    return Diffusion(network, LinearPath() if path is None else path, prediction="velocity",
                     method=method, steps=steps, **options)


def _check_steps(steps: Any, name: str) -> int:
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise InvalidInputError(f"{name} must be a positive int (number of sampler steps), got {steps!r}")
    return steps
