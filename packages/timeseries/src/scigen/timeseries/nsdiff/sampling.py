"""NsDiff's sampler (Ye et al. 2025, Alg. 2) on the engine, and the one part the engine cannot express.

Start ``Y_T = f + √g·z``; for ``k = T … 1`` predict ``(ε̂, σ̂)``, form ``Ŷ0 = f + (Y_k − f − √Σ2_k(s) ε̂)/√ᾱ_k``
and step with the posterior ``q(Y_{k−1} | Y_k, Ŷ0)`` of the two-source path (the last step returns ``Ŷ0``).

* **TMDM** (``g = σ = 1``) and **NsDiff with ``sigma_source="g"``** (NsDiff-PE: ``σ_Y0 := g``): then
  ``Σ2_k = (1 − ᾱ_k)·g`` and ``z = (Y − f)/√g`` follows the discrete VP path exactly, so the chain is
  :func:`scigen.core.samplers.sample` on ``schedule.as_path()`` in ``z`` with the ``eps``-prediction
  ``ε̂(f + √g z, k)``; every engine method and step count applies (``ddpm`` on all steps is the paper's).
  Off-grid times (e.g. RK4 midpoints) use the nearest step of the denoiser's step embedding.
* **NsDiff with ``sigma_source="denoiser"``** (the paper's default) — **exception, a loop here**: at
  each step ``σ_Y0`` is *recovered from the network's output*, the ``s`` whose posterior variance is
  ``σ̂`` (:meth:`~scigen.core.paths.LocationScalePath.var2_from_posterior_variance`), so the path's noise
  level ``Σ2_k(s)`` is per element and changes with the state at every step, and the step's variance is
  the network's own ``σ̂``. The engine's solvers integrate one fixed path with one prediction kind and
  cannot express a state-dependent path or a learned reverse variance. The loop uses only the engine
  path's ``variance``, ``posterior`` and inversion; it runs on the paper's ancestral grid (all ``T`` steps)
  or, with ``steps=n < T`` (ours), on the respaced grid ``schedule.steps(n)`` (Nichol & Dhariwal 2021,
  §4: ancestral steps ``k → j`` with the posterior ``q(Y_j | Y_k, Ŷ0)``): ``σ_Y0`` is still recovered
  from ``σ̂``, the one-step posterior variance at ``k → k − 1`` the network was trained on, and the step
  ``k → j`` uses the path's posterior variance with that ``σ_Y0`` (equal to ``σ̂`` when ``j = k − 1``); its
  last step ``k → 0`` draws ``Y0 ~ N(Ŷ0, Σ2_k/ᾱ_k·Γ_k)`` instead of returning the mean ``Ŷ0``
  (with the exact denoiser on Gaussian data the 10-step chain then ends at the exact law, tested).

**Reverse variance (ours; Analytic-DPM, Bao et al. ICLR 2022, Thm. 1).** The paper's ``v = σ̂ ≈ σ̃_k``
ignores the uncertainty of ``Ŷ0``; the exact reverse kernel has variance ``σ̃_k + γ0²·Var(Y_0 | Y_k)``
(law of total variance) with ``Var(Y_0 | Y_k) = Σ2_k/ᾱ_k · Var(ε | Y_k)`` and ``E[(ε − ε̂)²] = E Var(ε | Y_k)``:

    v = σ̃_k + γ0² · Σ2_k(s)/ᾱ_k · Γ_k,     Γ_k = E[(ε − ε̂_k)²]

(``σ̂`` in place of ``σ̃_k`` for ``sigma_source="denoiser"``; the engine's ``ddpm(eps_error=)`` on the
other route), ``Γ_k`` measured per step on the training windows after fitting
(:func:`~scigen.timeseries.nsdiff.process.estimate_eps_error`, stored in ``NsDiffNet.eps_error``).
Without it the chain under-disperses even with the exact ε̂ on Gaussian data (tested in
``tests/core/test_paths_location_scale.py``). ``reverse_variance="posterior"`` is the paper's sampler.

**Clipping Ŷ0 (ours; the static thresholding of Ho et al. 2020, §4 / Saharia et al. 2022, §2.3).** On the
paper's route ``Ŷ0`` is clamped to ``y0_range`` (the training targets' range, widened by ``clip_margin``
of it on each side; config ``clip_margin=None`` = unclipped). An under-trained denoiser (e.g. after a
staged fit that gave it a few dozen steps) mis-predicts ``ε̂`` on states it never saw; unclipped, the
chain then drifts outward step after step (measured: ``|Y_k − f|/√g`` grew from 2.6 at ``k = T`` to 60 at
``k = 1``) and the forecasts explode (MSE 33 where the truth's variance is 1). The clamp never binds for a
chain that stays in the data's range.
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core import streams
from scigen.core.errors import InvalidInputError
from scigen.core.paths import LocationScalePath
from scigen.core.samplers import sample
from scigen.timeseries.nsdiff.process import NsDiffNet, steps_of

__all__ = ["engine_route", "sample_windows"]


def engine_route(mode: str, sigma_source: str) -> bool:
    """True when the chain is the engine's (TMDM, or ``sigma_source="g"``); see module docstring."""
    return mode == "tmdm" or sigma_source == "g"


@torch.no_grad()
def sample_windows(net: NsDiffNet, path: LocationScalePath, x: Tensor, n: int, *, sigma_source: str = "denoiser",
                   method: str = "ddpm", steps: int | None = None, generator: torch.Generator | None = None,
                   chunk: int = 4096, use_eps_error: bool = True, progress: bool | None = False,
                   y0_range: tuple[float, float] | None = None) -> Tensor:
    """``n`` forecasts for each window of ``x [W, C, N]`` -> ``[n, W, H, N]`` (standardised units).

    ``use_eps_error=False`` samples with the paper's reverse variance (no ``Γ_k`` term); ``y0_range``
    clamps ``Ŷ0`` on the paper's route (module docstring). ``generator``: a ``torch.Generator`` or
    :class:`~scigen.core.streams.SampleStreams` with one key per row ``i·W + w`` (sample ``i``, window ``w``)."""
    T = steps_of(path)
    engine = engine_route(net.mode, sigma_source)
    if not engine and method != "ddpm":
        raise InvalidInputError(
            f"method={method!r} needs sigma_source='g' or mode='tmdm': with sigma_source='denoiser' NsDiff recovers "
            f"sigma_Y0 from the denoiser at every ancestral step, so it samples with method='ddpm' (on all {T} steps "
            f"or a respaced grid of steps=n)")
    W = x.shape[0]
    f, g = net.mean_var(x)  # [W, H, N]
    f = f.repeat(n, 1, 1)
    g = g.repeat(n, 1, 1)
    err = net.eps_error.detach().double() if use_eps_error else torch.zeros(T + 1, dtype=torch.float64)
    outs = []
    for i in range(0, f.shape[0], chunk):
        fi, gi = f[i : i + chunk], g[i : i + chunk]
        gen = generator
        if isinstance(generator, streams.SampleStreams):  # row keys of this chunk (same draws in every chunk)
            gen = streams.SampleStreams(generator.seed, generator.keys[i : i + chunk])
        if engine:
            outs.append(_engine_chain(net, path, fi, gi, err, method, steps, gen, progress))
        else:
            outs.append(_denoiser_sigma_chain(net, path, fi, gi, err, gen, y0_range, steps))
    return torch.cat(outs).view(n, W, *f.shape[1:])


def _engine_chain(net: NsDiffNet, path: LocationScalePath, f: Tensor, g: Tensor, err: Tensor, method: str,
                  steps: int | None, generator, progress) -> Tensor:
    """``scigen.core.samplers.sample`` in ``z = (Y − f)/√g`` on the discrete VP path (module docstring)."""
    T = steps_of(path)
    sd = g.sqrt()
    err = err.to(f.device)

    def eps_model(z: Tensor, t: Tensor) -> Tensor:
        k = torch.round(t.double() * T).long().clamp(0, T)
        return net.denoiser(f + sd * z, k, f, g)[0]

    z = streams.randn(f.shape, generator=generator, device=f.device, dtype=f.dtype)  # Y_T = f + √g z ~ N(f, g)
    times = path.base.schedule.time_grid(steps, device=f.device)
    opts = {}
    if method == "ddpm" and bool((err > 0).any()):
        opts["eps_error"] = lambda t: err[torch.round(t * T).long().clamp(0, T)]
    z = sample(eps_model, z, times, path=path.base, prediction="eps", method=method, generator=generator,
               progress=progress, **opts)
    return f + sd * z


def _denoiser_sigma_chain(net: NsDiffNet, path: LocationScalePath, f: Tensor, g: Tensor, err: Tensor,
                          generator, y0_range: tuple[float, float] | None = None, steps: int | None = None,
                          check_every_step: bool = False) -> Tensor:
    """The exception: the ancestral chain with ``σ_Y0`` recovered from ``σ̂`` at every step (module docstring),
    on all ``T`` steps or the respaced grid of ``steps``.

    The inputs are validated once per call (``g`` finite and > 0; the grid descending by construction);
    the path's per-call checks are skipped inside the loop (``check=False``): ``σ̂`` is a softplus plus a
    floor and ``σ_Y0`` is floored by the inversion, so they cannot fail there. ``check_every_step=True``
    restores the path's checks at every step (the former behaviour, the baseline of
    ``benchmarks/timeseries/nsdiff_chain.py``)."""
    T = steps_of(path)
    if not bool(torch.isfinite(g).all()) or bool((g <= 0).any()):
        raise InvalidInputError("NsDiff's variance g(X) must be finite and positive on every window; got "
                                f"min {float(g.min()):.3g}, {int((~torch.isfinite(g)).sum())} non-finite")
    chk = bool(check_every_step)
    gamma = err.tolist()
    grid = path.base.schedule.steps(steps).tolist()  # T, ..., 0
    y = f + g.sqrt() * streams.randn(f.shape, generator=generator, device=f.device, dtype=f.dtype)
    for step, nxt in zip(grid[:-1], grid[1:], strict=True):
        k = torch.full((f.shape[0],), step, dtype=torch.long, device=f.device)
        eps_hat, var_hat = net.denoiser(y, k, f, g)
        t = torch.tensor(step / T, dtype=torch.float64)
        s = torch.tensor((step - 1) / T, dtype=torch.float64)
        sig = g if step == 1 else path.var2_from_posterior_variance(t, s, var_hat, g, check=chk)
        var_t = path.variance(t, g, sig, check=chk)
        a_t = float(path.base.alpha(t))
        y0 = f + (y - f - var_t.sqrt() * eps_hat) / a_t
        if y0_range is not None:
            y0 = y0.clamp(*y0_range)
        if nxt == 0:  # Ŷ0 = E[Y0 | Y_k]; a respaced grid's last step k > 1 adds Var(Y0 | Y_k) = Σ2_k/ᾱ_k·Γ_k
            if step == 1 or not gamma[step]:
                return y0
            noise = streams.randn(f.shape, generator=generator, device=f.device, dtype=f.dtype)
            return y0 + (var_t * gamma[step]).sqrt() / a_t * noise
        c0, ct, post = path.posterior(t, torch.tensor(nxt / T, dtype=torch.float64), g, sig, check=chk)
        base = var_hat if nxt == step - 1 else post
        var = base + c0 * c0 * var_t / (a_t * a_t) * gamma[step] if gamma[step] else base
        mean = f + c0 * (y0 - f) + ct * (y - f)
        y = mean + var.sqrt() * streams.randn(f.shape, generator=generator, device=f.device, dtype=f.dtype)
    return y
