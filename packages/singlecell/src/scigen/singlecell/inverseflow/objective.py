"""The two Inverse Flow objectives (Zhang & Zhou, ICML 2025) on the engine's consistency and flow pieces.

Grid: the Karras times ``t_n = (t_min^{1/ρ} + n/(N−1)(t_max^{1/ρ} − t_min^{1/ρ}))^ρ``, ``n = 0 … N−1``
(:func:`scigen.core.losses.karras_sigmas`; images N = 11, t_min = 0.002, t_max = 0.1, ρ = 7). The path
between an estimate ``x̂0`` and a fresh noisy copy ``x̂1 ~ p(x1 | x̂0)`` is linear for every noise model,
``x_{t} = x̂0 + (t / t_max)(x̂1 − x̂0)`` — the engine's VE form ``x̂0 + t·z`` with ``z = (x̂1 − x̂0)/t_max``.

* **ICM** (Inverse Consistency Model): ``x̂0 = f_θ(x1, t_max)`` without gradient; ``x̂1 = noise(x̂0)``;
  ``n ~ U{0, …, N−2}``; loss ``E[λ_n · PH(f_θ(x_{t_{n+1}}, t_{n+1}), sg f_θ(x_{t_n}, t_n))]`` with iCT's
  ``λ_n = 1/(t_{n+1} − t_n)`` and the entry-wise pseudo-Huber ``c = 0.00054√d`` —
  :func:`scigen.core.losses.consistency_training_loss` with ``indices`` and ``noise`` given. ``f_θ =
  c_skip(t)·x + c_out(t)·F_θ(x, t)`` (:func:`scigen.core.losses.consistency_scalings`, ``σ_min = t_min``;
  no ``c_in``, as the official code), so ``f(x, t_min) = x``. Denoising is one evaluation.
* **IFM** (Inverse Flow Matching): ``x̂0`` = explicit Euler of ``dx/dt = v_θ(x, t)`` from ``t_max`` down to
  ``t_min`` on the grid, without gradient (:func:`scigen.core.samplers.sample`, ``method="euler"`` on
  :class:`~scigen.core.paths.LinearPath` in the time ``s = t / t_max``); ``x̂1 = noise(x̂0)``; loss
  ``E[PH(v_θ(x_{t_{n+1}}, t_{n+1}), (x̂1 − x̂0)/t_max)]`` (the constant velocity of the linear path; the
  engine's :func:`~scigen.core.losses.flow_matching_loss` is MSE-only, so the regression uses the engine's
  :func:`~scigen.core.losses.pseudo_huber` on the engine path's target directly).

Noise models with a link (Jacobi: logit/sigmoid; counts: clamping) are applied around the network:
``f(x, t) = decode(c_skip·encode(x) + c_out·F(encode(x), t))`` (the official ``JacobiFlow`` /
``PoissonFlow``); IFM integrates and regresses in the encoded space. The network sees the raw time ``t``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from scigen.core import streams
from scigen.core.losses import consistency_scalings, consistency_training_loss, karras_sigmas, pseudo_huber
from scigen.core.paths import LinearPath
from scigen.core.samplers import sample as engine_sample
from scigen.singlecell.inverseflow.noise import NoiseModel

__all__ = ["ALGORITHMS", "consistency_function", "icm_loss", "ifm_loss", "invert", "karras_times"]

ALGORITHMS = ("icm", "ifm")


def karras_times(n: int, t_min: float, t_max: float, rho: float = 7.0) -> Tensor:
    """The ``n`` ascending Karras times from ``t_min`` to ``t_max`` (float64)."""
    return karras_sigmas(n, t_min, t_max, rho)


def _bc(t: Tensor, x: Tensor) -> Tensor:
    return t.reshape((-1,) + (1,) * (x.ndim - 1)).to(x.dtype)


def consistency_function(network: nn.Module, noise: NoiseModel, sigma_data: float,
                         t_min: float) -> Callable[[Tensor, Tensor], Tensor]:
    """ICM's ``f(x, t) = decode(c_skip(t)·y + c_out(t)·F(y, t))``, ``y = encode(x)``, per-sample ``t [B]``."""

    def f(x: Tensor, t: Tensor) -> Tensor:
        t = t.to(x.device, x.dtype)
        if t.ndim == 0:  # one time for every row: a stride-0 view, which the engine's networks embed once
            t = t.expand(x.shape[0])
        y = noise.encode(x)
        c_skip, c_out, _ = consistency_scalings(t, sigma_data, t_min)
        return noise.decode(_bc(c_skip, y) * y + _bc(c_out, y) * network(y, t))

    return f


def _euler_inverse(network: nn.Module, y1: Tensor, times: Tensor) -> Tensor:
    """Euler from ``t_max`` to ``t_min`` over ascending ``times`` on the engine sampler (encoded space)."""
    t_max = float(times[-1])
    s = (times.flip(0) / t_max).to(torch.float64)

    def velocity(y: Tensor, s_: Tensor) -> Tensor:  # d y / d s = t_max · v(y, t)
        # the sampler evaluates every row at the grid's time: pass it as one value viewed [B] (stride 0), which
        # the engine's networks embed once per step instead of once per row
        return t_max * network(y, (s_.reshape(-1)[0] * t_max).to(y.dtype).expand(y.shape[0]))

    return engine_sample(velocity, y1, s, path=LinearPath(), prediction="velocity", method="euler")


def invert(network: nn.Module, x1: Tensor, times: Tensor, *, algorithm: str, noise: NoiseModel,
           sigma_data: float) -> Tensor:
    """``x̂0`` from observations ``x1``: ICM ``f(x1, t_max)`` (one step), IFM Euler over ``times``."""
    if algorithm == "icm":
        f = consistency_function(network, noise, sigma_data, float(times[0]))
        return f(x1, torch.tensor(float(times[-1]), device=x1.device, dtype=x1.dtype))
    if algorithm == "ifm":
        return noise.decode(_euler_inverse(network, noise.encode(x1), times))
    raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")


def _pair_indices(n_times: int, batch: int, device, generator: torch.Generator | None) -> Tensor:
    return streams.randint(0, n_times - 1, (batch,), device=device, generator=generator)


def icm_loss(network: nn.Module, x1: Tensor, times: Tensor, *, noise: NoiseModel, sigma_data: float,
             generator: torch.Generator | None = None) -> Tensor:
    """One ICM step's loss on observations ``x1 [B, ...]`` (see the module docstring)."""
    times = times.to(x1.device)
    t_max = float(times[-1])
    f = consistency_function(network, noise, sigma_data, float(times[0]))
    with torch.no_grad():
        x0_hat = f(x1, torch.tensor(t_max, device=x1.device, dtype=x1.dtype))  # one time: embedded once
        x1_hat = noise.sample(x0_hat, generator).to(x0_hat.dtype)  # the contract (draw) is checked by fit
    z = (x1_hat - x0_hat) / t_max
    idx = _pair_indices(times.numel(), x1.shape[0], x1.device, generator)
    return consistency_training_loss(f, x0_hat, times.to(x1.dtype), indices=idx, noise=z, elementwise=True)


def ifm_loss(network: nn.Module, x1: Tensor, times: Tensor, *, noise: NoiseModel,
             generator: torch.Generator | None = None) -> Tensor:
    """One IFM step's loss on observations ``x1 [B, ...]`` (see the module docstring)."""
    times = times.to(x1.device)
    t_max = float(times[-1])
    with torch.no_grad():
        x0_hat = noise.decode(_euler_inverse(network, noise.encode(x1), times))
        x1_hat = noise.sample(x0_hat, generator).to(x0_hat.dtype)  # the contract (draw) is checked by fit
    y0, y1 = noise.encode(x0_hat), noise.encode(x1_hat)
    idx = _pair_indices(times.numel(), x1.shape[0], x1.device, generator)
    t = times[idx + 1].to(x1.dtype)
    path = LinearPath()
    s = t / t_max
    y_t = path.marginal(y0, s, y1)
    target = path.target(y0, y1, s, "velocity") / t_max
    return pseudo_huber(network(y_t, t), target, elementwise=True).mean()
