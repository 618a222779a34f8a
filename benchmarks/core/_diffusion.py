"""Diffusion half of the benchmark: one eps-prediction MLP on the continuous VP path, sampled by our
``dpmpp_2m`` / ``unipc`` / ``ddim`` and by diffusers' DPMSolverMultistep / UniPCMultistep / DDIM schedulers.

The time mapping (exact up to diffusers' float32 arithmetic)
-------------------------------------------------------------
The model is trained on :class:`VPLinear` (beta 0.1 -> 20, continuous ``t ∈ [0, 1]``, t = 0 data).
diffusers works on ``T = 1000`` discrete steps with index ``i ∈ {0 … T−1}`` and
``alphas_cumprod[i] = Π_{j ≤ i} (1 − betas[j])``, i.e. DDPM step ``k = i + 1``. We hand diffusers
``trained_betas[i] = 1 − ᾱ(t_{i+1}) / ᾱ(t_i)`` with ``ᾱ(t) = alpha(t)²`` of VPLinear and
``t_k = k / T`` (``ᾱ(t_0) = 1``), so ``alphas_cumprod[i] = alpha((i + 1)/T)²`` and diffusers'
``x_i = sqrt(alphas_cumprod[i])·x0 + sqrt(1 − alphas_cumprod[i])·eps`` is our ``x_t`` at
``t = (i + 1)/T``. The model is therefore called by diffusers as ``model(x, t = (timestep + 1)/T)``.
(This is the continuous path sampled on the grid, not DDPM's own linear betas 1e-4…0.02, which differ
from VPLinear by O(1/T).) Both sides start from the same ``x_T = noise`` (diffusers'
``init_noise_sigma = 1``; our ``sigma(1) = 1 − 2e-5``).

Grids: diffusers uses its own spacing (``timestep_spacing``; DPM/UniPC default ``"linspace"``:
``round(linspace(0, T−1, n+1))[::-1][:-1]``, then a final step to sigma = 0). Ours are run on every
kind of :func:`time_grid` and on diffusers' exact grid (``"matched"``: ``t = (timestep + 1)/T`` then 0),
which compares solvers with the time points held equal.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from scigen.core.losses import denoising_loss
from scigen.core.paths import VPLinear
from scigen.core.samplers import sample, time_grid

T_TRAIN = 1000
PATH = VPLinear()
OUR_METHODS = ("dpmpp_2m", "unipc", "ddim")
OUR_GRIDS = ("uniform", "logsnr", "edm", "matched")


def eps_loss(model, batch: Tensor) -> Tensor:
    """Our denoising loss: eps target on VPLinear, uniform t in [1e-5, 1], unit weights."""
    return denoising_loss(model, batch, PATH, target="eps")


def trained_betas() -> np.ndarray:
    """``betas[i] = 1 − alpha(t_{i+1})²/alpha(t_i)²`` on ``t_k = k/T`` (float64, computed from logs)."""
    t = torch.arange(T_TRAIN + 1, dtype=torch.float64) / T_TRAIN
    la = PATH.log_alpha(t)
    return (-torch.expm1(2.0 * (la[1:] - la[:-1]))).numpy()


def _scheduler(kind: str, variant: str):
    from diffusers import DDIMScheduler, DPMSolverMultistepScheduler, UniPCMultistepScheduler

    common = dict(num_train_timesteps=T_TRAIN, trained_betas=trained_betas(), prediction_type="epsilon")
    extra = {"default": {}, "karras": {"use_karras_sigmas": True}, "lu": {"use_lu_lambdas": True},
             "trailing": {"timestep_spacing": "trailing"}}[variant]
    if kind == "dpm":
        return DPMSolverMultistepScheduler(algorithm_type="dpmsolver++", solver_order=2, **common, **extra)
    if kind == "unipc":
        return UniPCMultistepScheduler(solver_order=2, solver_type="bh2", **common, **extra)
    if kind == "ddim":  # set_alpha_to_one: the last step lands on clean data, as ours does
        return DDIMScheduler(set_alpha_to_one=True, clip_sample=False, **common, **extra)
    raise ValueError(kind)


def diffusers_times(kind: str, variant: str, n: int) -> Tensor:
    """The times ``t = (timestep + 1)/T`` at which diffusers evaluates the model, then 0 (our grid "matched")."""
    s = _scheduler(kind, variant)
    s.set_timesteps(n)
    ts = (s.timesteps.double() + 1.0) / T_TRAIN
    return torch.cat([ts, torch.zeros(1, dtype=torch.float64)])


@torch.no_grad()
def diffusers_sample(model, noise: Tensor, kind: str, variant: str, n: int) -> tuple[Tensor, int]:
    """Run a diffusers scheduler loop; returns ``(samples, NFE)``."""
    s = _scheduler(kind, variant)
    s.set_timesteps(n)
    x, nfe = noise.clone() * s.init_noise_sigma, 0
    for ts in s.timesteps:
        t = torch.full((x.shape[0],), (float(ts) + 1.0) / T_TRAIN, dtype=x.dtype)
        eps = model(x, t)
        nfe += 1
        x = s.step(eps, ts, x).prev_sample
    return x, nfe


def our_times(grid: str, n: int, matched_kind: str) -> Tensor:
    if grid == "matched":
        return diffusers_times(matched_kind, "default", n)
    return time_grid(n, grid, path=PATH, t_max=1.0, t_min=0.0, dtype=torch.float64)


def our_sample(model, noise: Tensor, method: str, grid: str, n: int) -> tuple[Tensor, int]:
    """Our ``sample`` with ``n`` steps on ``grid``; returns ``(samples, NFE)``."""
    from _common import Counted

    fn = Counted(model)
    matched = {"dpmpp_2m": "dpm", "unipc": "unipc", "ddim": "ddim"}[method]
    times = our_times(grid, n, matched)
    x = sample(fn, noise.clone(), times, path=PATH, prediction="eps", method=method, progress=False)
    return x, fn.n


PEERS = {"dpmpp_2m": "dpm", "unipc": "unipc", "ddim": "ddim"}
PEER_VARIANTS = {"dpm": ("default", "karras", "lu"), "unipc": ("default", "karras"), "ddim": ("default", "trailing")}
