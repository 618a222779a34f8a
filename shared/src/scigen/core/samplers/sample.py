"""``sample(...)``: the one entry point to every solver (docs/engine-api.md, "Samplers").

Stateless: each call builds the x0-denoiser from ``model_fn`` (via ``path.convert``), applies the
guidance transforms in order, runs the chosen solver over ``times`` (``t = 0`` data, ``t = 1``
noise; decreasing) and returns the final state. Nothing is kept between calls.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from scigen.core.samplers._common import mt
from scigen.core.samplers._progress import StepHook
from scigen.core.samplers.denoiser import PREDICTIONS, Denoiser, as_denoiser
from scigen.core.samplers.methods import METHODS, check_method
from scigen.core.streams import SampleStreams

__all__ = ["METHODS", "sample"]


def _check_x(x_init) -> Tensor:
    if not isinstance(x_init, Tensor):
        raise TypeError(f"x_init must be a torch.Tensor of shape [B, ...], got {type(x_init).__name__}")
    if x_init.ndim < 1 or x_init.shape[0] == 0:
        raise ValueError(f"x_init must have a non-empty batch dimension [B, ...], got shape {tuple(x_init.shape)}")
    if not x_init.is_floating_point():
        raise TypeError(f"x_init must be a floating tensor, got dtype {x_init.dtype}")
    if not bool(torch.isfinite(x_init).all()):
        raise ValueError("x_init contains NaN or inf")
    return x_init


def _check_times(times, x: Tensor, path, method: str) -> Tensor:
    """``times`` as float64 ``[n+1, Bt]`` on ``x``'s device (``Bt`` = 1 for a shared grid, else ``B``)."""
    if not isinstance(times, Tensor):
        raise TypeError(f"times must be a decreasing 1-D torch.Tensor (e.g. from time_grid), got {type(times).__name__}")
    if times.ndim not in (1, 2):
        raise ValueError(f"times must have shape [n+1] or per-sample [n+1, B], got shape {tuple(times.shape)}")
    b = x.shape[0]
    if times.ndim == 2 and times.shape[1] != b:
        raise ValueError(f"per-sample times must have shape [n+1, B] with B={b} (x_init's batch), got {tuple(times.shape)}")
    min_len = 1 if method == "consistency" else 2
    if times.shape[0] < min_len:
        raise ValueError(f"times must hold at least {min_len} points for method={method!r}, got {times.shape[0]}")
    t = times.detach().to(device=x.device, dtype=torch.float64)
    if not bool(torch.isfinite(t).all()) or float(t.min()) < 0.0 or float(t.max()) > 1.0:
        raise ValueError(f"times must be finite and lie in [0, 1] (t=0 data, t=1 noise), got range "
                         f"[{float(t.min())}, {float(t.max())}]")
    if t.ndim == 1:
        t = t[:, None]
    if t.shape[0] > 1 and not bool((t[1:] < t[:-1]).all()):
        raise ValueError("times must be strictly decreasing (from noise t≈1 to data t≈0)")
    t = t.contiguous()
    s = path.sigma(t)
    if bool((s[:-1] <= 0).any()):
        raise ValueError("sigma(t) must be > 0 at every time but the last; only the final time may be clean data")
    last = s[-1] == 0
    if bool(last.any()) and not bool(last.all()):
        raise ValueError("per-sample times must end either all at sigma = 0 or all at sigma > 0")
    return t


def _apply_guidance(denoise: Denoiser, guidance) -> Denoiser:
    if guidance is None:
        return denoise
    transforms: Sequence = guidance if isinstance(guidance, (list, tuple)) else [guidance]
    for g in transforms:
        if not callable(g):
            raise TypeError(f"guidance must be a transform denoiser -> denoiser (or a list of them), got {type(g).__name__}")
        denoise = as_denoiser(g(denoise), denoise)
    return denoise


def _projected(project: Callable, x: Tensor, denoise: Denoiser) -> tuple[Tensor, Denoiser]:
    """``P(x_init)`` and the denoiser ``P ∘ D ∘ P`` (see ``sample(project=...)``)."""
    if not callable(project):
        raise TypeError(f"project must be callable as project(x) -> x (a linear projection), got {type(project).__name__}")
    px = project(x)
    if not isinstance(px, Tensor) or px.shape != x.shape:
        got = tuple(px.shape) if isinstance(px, Tensor) else type(px).__name__
        raise ValueError(f"project(x) must return a tensor of x's shape {tuple(x.shape)}, got {got}")

    def fn(x, t):
        return project(denoise(project(x), t))

    return px, Denoiser(fn, denoise.path, denoise.prediction)


def _check_options(method: str, fn: Callable, opts: dict) -> None:
    params = inspect.signature(fn).parameters
    allowed = [k for k, p in params.items() if p.kind is p.KEYWORD_ONLY and k not in ("hook", "generator")]
    unknown = sorted(set(opts) - set(allowed))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for method={method!r}; it accepts {allowed or 'no options'}")


def sample(
    model_fn: Callable[[Tensor, Tensor], Tensor],
    x_init: Tensor,
    times: Tensor,
    *,
    path,
    prediction: str = "eps",
    method: str = "dpmpp_2m",
    guidance=None,
    generator: torch.Generator | None = None,
    callback: Callable | None = None,
    return_trajectory: bool = False,
    progress: bool | None = None,
    final_denoise: bool = False,
    project: Callable[[Tensor], Tensor] | None = None,
    grad: bool = False,
    **method_options,
):
    """Integrate from ``times[0]`` to ``times[-1]`` with ``method``, starting at ``x_init``.

    Args:
        model_fn: ``model_fn(x [B, ...], t [B]) -> Tensor`` of ``x``'s shape, of kind ``prediction``.
        x_init: the state at ``times[0]`` (e.g. ``sigma(1)·N(0, I)`` for a prior at ``t = 1``).
        times: decreasing times in ``[0, 1]`` (``t = 0`` data, ``t = 1`` noise), shape ``[n+1]`` or
            per-sample ``[n+1, B]``; see :func:`time_grid`. Only the last time may have ``sigma = 0``;
            every method then ends with the exact denoising step ``alpha(t_end)·D(x, t_prev)``.
        path: the Gaussian path of the model.
        prediction: what ``model_fn`` returns: ``eps``, ``x0``, ``v``, ``velocity`` or ``score``.
        method: one of :data:`METHODS`: ``euler``, ``heun``, ``rk4`` (classical), ``rk4_38`` (3/8 rule) (probability-flow ODE),
            ``ddpm`` (ancestral), ``ddim`` (option ``eta``), ``dpmpp_2m``, ``unipc`` (options
            ``order``, ``corrector``), ``euler_maruyama`` (reverse SDE), ``consistency`` (needs
            ``prediction="x0"``: the model is the consistency function).
        guidance: a transform ``Denoiser -> Denoiser`` or a list applied in order
            (``scigen.core.guidance``).
        generator: source of the noise of stochastic methods: a ``torch.Generator``, or a
            :class:`~scigen.core.streams.SampleStreams` (one stream per row of ``x_init``: each sample's
            trajectory then depends only on its key, not on the batch it is drawn in).
        callback: ``callback(step, t [B], x, x0_hat)`` once per step, with the state at the start
            of the step and the (guided) denoiser output there.
        return_trajectory: also return the states ``[n_states, B, ...]`` (start of every step + end).
        progress: show a progress bar; ``None`` = only when standard error is a terminal.
        final_denoise: if the last time has ``sigma > 0``, return ``D(x, t_end)`` instead of ``x``
            (Tweedie denoising; one extra evaluation).
        project: a *linear* projection ``P`` onto the subspace the data live in (idempotent, e.g. the
            zero centre-of-mass projection of E(n)-equivariant molecule models, Hoogeboom et al. 2022,
            §3.2). The sampler then runs in that subspace: ``x_init`` and every denoiser input and
            output are projected, and so are the states shown to ``callback``/the trajectory and the
            result. Because ``P`` is linear, this equals running the solver with all its Gaussian
            noise drawn inside the subspace (the component outside it never reaches the model and
            is removed from the result).
        grad: keep autograd on through the whole chain (default off): the result is then a
            differentiable function of the model's parameters and of ``x_init``, for objectives that
            train through generated samples (e.g. AGDiff's detector loss reaching the denoiser).
        **method_options: options of the chosen method (an unknown one raises ``ValueError``).

    Returns:
        ``x`` (shape of ``x_init``), or ``(x, trajectory)`` when ``return_trajectory``.

    Runs under ``torch.no_grad()`` unless ``grad=True``; guidance that needs gradients enables them itself.
    """
    check_method(method, tuple(METHODS))  # InvalidInputError (a ValueError) naming the valid names
    if prediction not in PREDICTIONS:
        raise ValueError(f"prediction must be one of {PREDICTIONS}, got {prediction!r}")
    if method == "consistency" and prediction != "x0":
        raise ValueError(
            "method='consistency' needs the consistency function f(x_t, t) -> x0: pass prediction='x0' "
            f"(got prediction={prediction!r})"
        )
    if path is None:
        raise ValueError("path is required (the Gaussian path the model was trained on)")
    solver = METHODS[method].fn
    _check_options(method, solver, method_options)
    x = _check_x(x_init)
    t = _check_times(times, x, path, method)
    if generator is not None and not isinstance(generator, (torch.Generator, SampleStreams)):
        raise TypeError(f"generator must be a torch.Generator, a SampleStreams or None, got {type(generator).__name__}")
    denoise = _apply_guidance(Denoiser.from_model(model_fn, path, prediction), guidance)
    if project is not None:
        x, denoise = _projected(project, x, denoise)
    hook = StepHook(t.shape[0] - (0 if method == "consistency" else 1), callback, return_trajectory,
                    progress, f"sampling ({method})", project=project)
    try:
        with contextlib.nullcontext() if grad else torch.no_grad():
            x = solver(denoise, x, t, hook=hook, generator=generator, **method_options)
            if final_denoise and bool((path.sigma(t[-1]) > 0).all()) and method != "consistency":
                x = denoise(x, mt(t[-1], x))
    finally:
        hook.close()
    if project is not None:
        x = project(x)
    hook.finish(x)
    if return_trajectory:
        return x, torch.stack(hook.trajectory)
    return x
