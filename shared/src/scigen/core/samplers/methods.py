"""The engine's solver table ``METHODS`` and the one check of a sampler name, ``check_method``.

``METHODS[name]`` is a :class:`Solver`: the solver function (called as
``solver(denoise, x, times[n+1, Bt] float64, *, hook, generator, **options)``), its cost in model
evaluations per step (``nfe_per_step``) and its family. Every ``method=`` a system accepts is a key of this
table (docs/engine-api.md, "The user vocabulary"), and every system checks it with :func:`check_method`.

Cost. ``nfe_per_step`` counts the model evaluations of one step of an ``n``-step grid. The Runge-Kutta
solvers (``heun``, ``rk4``, ``rk4_38``) end a grid that reaches ``sigma = 0`` with one first-order step
(``scigen.core.samplers.ode``), so ``n`` steps cost ``k·(n − 1) + 1`` model calls there
(:func:`nfe`); every other solver costs ``k·n``; ``dopri5`` is adaptive (``nfe_per_step = None``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from scigen.core.errors import InvalidInputError
from scigen.core.samplers.ancestral import ddim, ddpm
from scigen.core.samplers.consistency import consistency
from scigen.core.samplers.dpm_solver import dpmpp_2m
from scigen.core.samplers.ode import dopri5, euler, heun, rk4, rk4_38
from scigen.core.samplers.sde import euler_maruyama
from scigen.core.samplers.unipc import unipc

__all__ = ["DENOISER_METHODS", "METHODS", "Solver", "check_method", "nfe"]


@dataclasses.dataclass(frozen=True)
class Solver:
    """One entry of :data:`METHODS`: the solver, its model evaluations per step and its family."""

    fn: Callable
    nfe_per_step: int | None  # None: adaptive (as many as the error control needs)
    family: str  # "ode" (Runge-Kutta), "adaptive" (dopri5), "exponential" (DPM-Solver++/UniPC/DDIM), "ancestral", "sde", "consistency"
    needs_x0_model: bool = False  # consistency: the model must map x_t to x0 in one call

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


#: name -> :class:`Solver` (the solver function, ``nfe_per_step``, family)
METHODS: dict[str, Solver] = {
    "euler": Solver(euler, 1, "ode"),
    "heun": Solver(heun, 2, "ode"),
    "rk4": Solver(rk4, 4, "ode"),  # classical RK4 (the only meaning of "rk4" in scigen)
    "rk4_38": Solver(rk4_38, 4, "ode"),  # Kutta's 3/8 rule (torchdiffeq's fixed-grid "rk4")
    "dopri5": Solver(dopri5, None, "adaptive"),  # Dormand-Prince 5(4), torchdiffeq's, steps chosen by rtol/atol
    "ddpm": Solver(ddpm, 1, "ancestral"),
    "ddim": Solver(ddim, 1, "exponential"),
    "dpmpp_2m": Solver(dpmpp_2m, 1, "exponential"),
    "unipc": Solver(unipc, 1, "exponential"),
    "euler_maruyama": Solver(euler_maruyama, 1, "sde"),
    "consistency": Solver(consistency, 1, "consistency", needs_x0_model=True),
}

#: the fixed-grid methods every system whose network predicts eps / x0 / v / velocity takes by default (all but
#: ``consistency``, which needs an x0 model, and the adaptive ``dopri5``, which a system opts into: its error
#: control stalls on the stiff ends of discrete-schedule paths)
DENOISER_METHODS: tuple[str, ...] = tuple(m for m, s in METHODS.items()
                                          if not s.needs_x0_model and s.nfe_per_step is not None)


def nfe(method: str, steps: int, *, clean_end: bool = True) -> int:
    """Model evaluations of ``steps`` steps of ``method``; ``clean_end``: the grid ends at ``sigma = 0``,
    where a Runge-Kutta solver takes one first-order step (module docstring)."""
    k = METHODS[check_method(method, tuple(METHODS))].nfe_per_step
    if k is None:
        raise ValueError(f"{method} is adaptive: its NFE is what the error control needed, count it in the model")
    if clean_end and METHODS[method].family == "ode":
        return k * (steps - 1) + 1
    return k * steps


def check_method(method: object, valid: Iterable[str] | None = None, *, allow_none: bool = False,
                 what: str = "sampler", error: type[Exception] = InvalidInputError) -> str | None:
    """``method`` if it is one of ``valid`` (default :data:`DENOISER_METHODS`), else ``error`` (default
    :class:`~scigen.core.errors.InvalidInputError`, ``ValueError`` inside pydantic validators) naming the
    valid names. ``valid`` must be engine names; ``allow_none``: ``None`` passes (the system's default).

    The one sampler-name check of every system (docs/engine-api.md, "The user vocabulary").
    """
    valid = DENOISER_METHODS if valid is None else tuple(valid)
    foreign = [m for m in valid if m not in METHODS]
    if foreign:  # a programming error of the caller, not user input
        raise ValueError(f"check_method: {foreign} are not engine solvers (scigen.core.samplers.METHODS)")
    if method is None and allow_none:
        return None
    if method not in valid:
        hint = ""
        if isinstance(method, str) and method in METHODS:
            hint = " (an engine solver this system cannot use)"
        raise error(f"unknown {what} method {method!r}{hint}; valid: {', '.join(valid)}")
    return str(method)
