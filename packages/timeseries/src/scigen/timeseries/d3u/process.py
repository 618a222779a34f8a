"""D3U's two networks and its residual diffusion on the engine (Li et al., ICLR 2025, §3.2-3.4).

**Decoupling.** A point forecaster ``P`` gives ``Ŷ = P(X)`` (the certain part); a conditional DDPM
models the residual ``r0 = Y − Ŷ`` (the uncertain part); a forecast is ``Ŷ + r̂0`` with ``r̂0`` a
draw of the reverse chain. ``P`` is frozen while the diffusion trains (the paper's default).

**Diffusion** (:func:`residual_process`): the engine's :class:`~scigen.core.generative.Diffusion`
on :meth:`DiscreteSchedule.linear(T, β_1, β_T).as_path() <scigen.core.paths.DiscreteSchedule.as_path>`
(``r_k = √ᾱ_k r0 + √(1 − ᾱ_k) ε``, step ``k`` at ``t = k/T``), prediction ``x0`` (the paper's
``x_start``; ``eps`` selectable), loss = the engine's denoising MSE. Training steps are antithetic
(:func:`antithetic_steps`: ``k`` and ``T + 1 − k``, from the engine's antithetic times). Sampling is
the engine's sampler from ``r_T ~ N(0, 1 − ᾱ_T)`` on ``steps`` of the schedule's integer steps
(default DPM-Solver++(2M), 20 steps; every engine method applies).

**Condition** (:func:`condition`): per variable, the flattened forecaster tokens ``[B, N, P·D]``
when the forecaster exposes them (:func:`~scigen.timeseries.forecasters.forecast_and_tokens`) and
``config.condition == "tokens"``, else ``Ŷ`` itself ``[B, N, H]``.

**Residual unit (ours, ``config.residual_scale``).** The chain runs on ``r0 / sd(X)`` (each variable's
context standard deviation, as RevIN normalises the forecaster's input) and its draws are multiplied
back. The normalising forecasters emit scale-free tokens, so on the paper's raw residual PatchDN cannot
tell a calm window from a volatile one and, when the volatility drifts past the training range, keeps the
training spread (measured on the synthetic set: PICP 0.66 for a nominal 0.9); with the unit the spread
follows the context's. Measured before the validation calibration (``config.calibrate``) existed; with
the per-step calibration it costs CRPS on the synthetic set, so ``residual_scale=False`` (the paper's) is
the default.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from scigen.core.generative import Diffusion
from scigen.core.losses import sample_times
from scigen.core.paths import DiscreteSchedule
from scigen.core.streams import SampleStreams
from scigen.timeseries.d3u.patchdn import PatchDN
from scigen.timeseries.forecasters import forecast_and_tokens

__all__ = ["CHUNK_SEQUENCES", "D3UNet", "antithetic_steps", "kappa_relative_se", "condition", "residual_loss", "residual_process", "sample_residuals"]


def antithetic_steps(batch: int, T: int, generator: torch.Generator | None = None, device=None) -> Tensor:
    """Integer steps in ``1 … T`` in antithetic pairs ``k, T + 1 − k``: ``k = 1 + ⌊u·T⌋`` with the engine's
    antithetic ``u, 1 − u`` (``⌊uT⌋ + ⌊(1 − u)T⌋ = T − 1`` for ``uT ∉ ℤ``)."""
    u = sample_times("antithetic", batch, generator=generator, device=device, dtype=torch.float64)
    return (1 + torch.floor(u * T)).clamp(1, T).long()


def condition(net: D3UNet, x: Tensor, mode: str, marks: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """``(Ŷ [B, H, N], cond [B, N, cond_dim])`` of the context ``x`` (see module docstring); ``marks``: the
    calendar features ``[B, C + H, F]`` of a forecaster that embeds them."""
    y, tok = forecast_and_tokens(net.forecaster, x, marks)
    if mode == "tokens" and tok is not None:
        return y, tok.flatten(2)
    return y, y.transpose(1, 2)


def condition_dim(forecaster: nn.Module, x: Tensor, horizon: int, mode: str, marks: Tensor | None = None) -> int:
    """The width of :func:`condition` for this forecaster, measured on the probe ``x`` (not hard-coded)."""
    with torch.no_grad():
        _, tok = forecast_and_tokens(forecaster, x, marks)
    return math.prod(tok.shape[2:]) if mode == "tokens" and tok is not None else horizon


def residual_scale(x: Tensor, on: bool) -> Tensor:
    """The residual's unit per window and variable ``[B, 1, N]``: the context's standard deviation when ``on``
    (ours, ``config.residual_scale``), else 1."""
    if not on:
        return torch.ones_like(x[:, :1])
    return torch.sqrt(x.var(1, keepdim=True, unbiased=False) + 1e-6)


class D3UNet(nn.Module):
    """``forecaster`` (any ``(X [B, C, N]) -> [B, H, N]`` module) and ``denoiser`` (:class:`PatchDN`)."""

    def __init__(self, forecaster: nn.Module, cfg, cond_dim: int):
        super().__init__()
        self.forecaster = forecaster
        self.denoiser = PatchDN(cfg.horizon, cond_dim, cfg.diffusion_steps, patch_len=cfg.patch_len,
                                stride=cfg.patch_stride, d_model=cfg.d_model, n_heads=cfg.n_heads, depth=cfg.depth,
                                mlp_ratio=cfg.mlp_ratio, t_embed_dim=cfg.t_embed_dim)


def residual_process(cfg, denoiser: nn.Module) -> Diffusion:
    """The engine binding of the residual DDPM (module docstring)."""
    schedule = DiscreteSchedule.linear(cfg.diffusion_steps, cfg.beta_start, cfg.beta_end)
    return Diffusion(denoiser, schedule.as_path(), prediction=cfg.prediction, method=cfg.method, steps=cfg.steps)


def residual_loss(net: D3UNet, cfg, x: Tensor, y: Tensor, generator: torch.Generator | None = None,
                  marks: Tensor | None = None) -> Tensor:
    """The diffusion loss of one batch of windows with the forecaster frozen (no gradient, eval mode)."""
    was = net.forecaster.training
    net.forecaster.eval()
    with torch.no_grad():
        y_hat, cond = condition(net, x, cfg.condition, marks)
    net.forecaster.train(was)
    r0 = (y - y_hat) / residual_scale(x, cfg.residual_scale)
    k = antithetic_steps(r0.shape[0], cfg.diffusion_steps, generator, r0.device)
    t = k.to(r0.dtype) / cfg.diffusion_steps
    return residual_process(cfg, net.denoiser).loss(r0, t=t, generator=generator, cond=cond)


def kappa_relative_se(windows: int, draws: int) -> float:
    """Relative standard error of one calibration factor ``κ̂ = sqrt(mean_w e_w² / mean_{w,j} r̂_{w,j}²)``
    estimated from ``windows`` validation windows and ``draws`` draws each, for Gaussian residuals ``e`` and
    draws ``r̂`` (independent across windows; draws of a window independent): ``Var(mean e²)/E[e²]² = 2/W``,
    ``Var(mean r̂²)/E[r̂²]² = 2/(W·n)``, and by the delta method on ``log κ̂ = ½(log A − log B)``

        SE(κ̂)/κ ≈ sqrt((1 + 1/n) / (2W)).

    (Per horizon step and variable, ``calibrate_by="step"``; pooling the ``H`` steps of a variable,
    ``"variable"``, divides it by up to ``sqrt(H)``.) 128 windows × 8 draws: 6.6 %; 512 × 32: 3.1 %."""
    return math.sqrt((1 + 1 / draws) / (2 * windows))


#: PatchDN sequences (chains × variables) per sampler call. PatchDN runs one sequence per chain and variable,
#: and its CPU cost per sequence grows with the batch past a few thousand (measured, default config, 21
#: variables, CPU-s per window of 100 draws: 1.53 at 100 chains per call, 1.98 at 500, 2.89 at 4,096; 3
#: variables: 0.25 / 0.23 / 0.29 at 200 / 700 / 4,096 chains), so evaluation's chains go in calls of about
#: the size one window's draws are (``benchmarks/timeseries/d3u_cost.py``).
CHUNK_SEQUENCES = 2048


@torch.no_grad()
def sample_residuals(net: D3UNet, cfg, x: Tensor, n: int, *, method: str, steps: int,
                     generator: torch.Generator | None = None, progress: bool | None = False,
                     chunk: int | None = None, marks: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """``(Ŷ [W, H, N], r̂ [n, W, H, N])``: ``n`` reverse-chain draws of the residual per window of ``x`` (in the
    data's units: the chain's draws times :func:`residual_scale`).

    The ``n·W`` chains (draw-major: chain ``i`` is draw ``i // W`` of window ``i % W``) run ``chunk`` at a
    time (default ``CHUNK_SEQUENCES // N`` chains, at least one), each call indexing the windows' condition
    rather than copying it ``n`` times. ``generator``: a ``torch.Generator`` or
    :class:`~scigen.core.streams.SampleStreams` with one key per chain (in that order)."""
    net.eval()
    y_hat, cond = condition(net, x, cfg.condition, marks)
    W, N = x.shape[0], x.shape[-1]
    chunk = max(1, CHUNK_SEQUENCES // max(1, N)) if chunk is None else int(chunk)
    proc = residual_process(cfg, net.denoiser)
    times = DiscreteSchedule.linear(cfg.diffusion_steps, cfg.beta_start, cfg.beta_end).time_grid(steps,
                                                                                                  device=x.device)
    outs = []
    for i in range(0, n * W, chunk):
        ci = cond[torch.arange(i, min(i + chunk, n * W), device=cond.device) % W]
        gen = generator
        if isinstance(generator, SampleStreams):  # this chunk's row keys (every chunk makes the same draws)
            gen = SampleStreams(generator.seed, generator.keys[i : i + chunk])
        r_T = proc.prior((ci.shape[0], *y_hat.shape[1:]), generator=gen, device=x.device, dtype=x.dtype)
        outs.append(proc.sample(r_T, times=times, method=method, generator=gen, progress=progress, cond=ci))
    return y_hat, torch.cat(outs).view(n, W, *y_hat.shape[1:]) * residual_scale(x, cfg.residual_scale)
