"""Cost-gradient guidance: a few optimiser steps on the x0 estimate at every sampling step.

At each call of the denoiser, ``x̂0 = D(x_t, t)`` is refined by ``inner_steps`` steps of Adam
(Kingma & Ba 2015) or SGD on the per-sample cost

``C(x0) = weight·objective(x0) + alpha·constraint(x0)``,

where ``objective`` and ``constraint`` take either ``(x0)`` or ``(x0, t)`` (``t`` a ``[B]`` tensor of
the current time, 0 data / 1 noise), so a cost can sharpen as ``t → 0`` (e.g. the legality
sharpness schedule of guided placement),

and the refined ``x̂0`` is returned to the sampler (which then steps toward it; the final step
into ``sigma = 0`` returns it). This is the scheme of guided chip placement with diffusion
(legality ``L_legal`` as constraint, HPWL as objective), also used for reward/energy guidance of
the clean estimate (e.g. Bansal et al. 2024, "Universal guidance", forward guidance on x̂0).

The Lagrange weight ``alpha`` (per sample) can follow dual ascent (Boyd & Vandenberghe 2004,
§5.5; Platt & Barr 1988): after each refinement
``alpha ← clip(alpha + step·(constraint(x̂0) − target), 0, alpha_max)``, so ``alpha`` grows while
the constraint is above its target and relaxes below it. Gradients are taken with respect to
``x̂0`` only (no backpropagation through the model). The state (``alpha``) lives for one
``sample`` call; :attr:`CostGradient.history` records ``t``, ``alpha``, ``constraint`` and
``objective`` (batch means) of the last call. With ``DualAscent(t_range=(lo, hi))`` the multiplier is
updated only while ``t`` lies in ``[lo, hi]`` (and kept fixed elsewhere), so a constraint that is
meaningless on very noisy estimates does not inflate ``alpha`` early in sampling.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from scigen.core.samplers.denoiser import Denoiser

__all__ = ["CostGradient", "DualAscent", "cost_gradient"]


@dataclass(frozen=True)
class DualAscent:
    """Dual ascent on the constraint weight: ``alpha ← clip(alpha + step·(c − target), 0, alpha_max)``.

    ``t_range``: the update happens only at times ``t`` in this closed interval (default: always).
    """

    target: float = 0.0
    step: float = 1.0
    alpha_max: float = math.inf
    t_range: tuple[float, float] = (0.0, 1.0)

    def __post_init__(self):
        if not math.isfinite(self.target):
            raise ValueError(f"DualAscent.target must be finite, got {self.target}")
        if not (math.isfinite(self.step) and self.step > 0):
            raise ValueError(f"DualAscent.step must be finite and > 0, got {self.step}")
        if not self.alpha_max > 0:
            raise ValueError(f"DualAscent.alpha_max must be > 0, got {self.alpha_max}")
        lo, hi = (float(v) for v in self.t_range)
        if not 0.0 <= lo <= hi <= 1.0:
            raise ValueError(f"DualAscent.t_range must satisfy 0 <= lo <= hi <= 1, got {self.t_range}")
        object.__setattr__(self, "t_range", (lo, hi))


def _takes_time(fn: Callable, name: str) -> bool:
    """True when ``fn`` accepts a second positional argument ``t`` (``fn(x0, t)``), False for ``fn(x0)``."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # builtins without a signature: call with x0 only
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return True
    required = [p for p in positional if p.default is p.empty]
    if len(required) > 2 or not positional:
        raise TypeError(f"{name} must be callable as {name}(x0) or {name}(x0, t), "
                        f"but its signature is {inspect.signature(fn)}")
    return len(positional) >= 2


def _per_sample(value, b: int, name: str) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(x0) must return a tensor (per-sample [B] or a scalar), got {type(value).__name__}")
    if value.ndim == 0:
        return value.expand(b)
    if value.shape != (b,):
        raise ValueError(f"{name}(x0) must return shape [B] = [{b}] or a scalar, got {tuple(value.shape)}")
    return value


class CostGradient:
    """The transform; build it with :func:`cost_gradient`."""

    def __init__(self, objective, constraint, weight, alpha, dual_ascent, inner_steps, lr, optimizer, t_range):
        self.objective, self.constraint = objective, constraint
        self.weight, self.alpha0 = weight, alpha
        self.dual_ascent, self.inner_steps, self.lr = dual_ascent, inner_steps, lr
        self.optimizer, self.t_range = optimizer, t_range
        self._obj_t = objective is not None and _takes_time(objective, "objective")
        self._con_t = constraint is not None and _takes_time(constraint, "constraint")
        self.history: list[dict] = []

    def _cost(self, x0: Tensor, alpha: Tensor, t: Tensor):
        b = x0.shape[0]
        if self.objective is None:
            obj = x0.new_zeros(b)
        else:
            obj = _per_sample(self.objective(x0, t) if self._obj_t else self.objective(x0), b, "objective")
        if self.constraint is None:
            con = x0.new_zeros(b)
        else:
            con = _per_sample(self.constraint(x0, t) if self._con_t else self.constraint(x0), b, "constraint")
        return self.weight * obj + alpha * con, obj, con

    def __call__(self, denoise: Denoiser) -> Denoiser:
        self.history = []
        state: dict[str, Tensor] = {}
        lo, hi = self.t_range

        def fn(x, t):
            x0 = denoise(x, t)
            tt = t.reshape(-1)
            if not bool(((tt >= lo) & (tt <= hi)).any()):
                return x0
            b = x0.shape[0]
            alpha = state.get("alpha")
            if alpha is None:
                alpha = torch.full((b,), float(self.alpha0), device=x0.device, dtype=x0.dtype)
            active = ((tt >= lo) & (tt <= hi)).expand(b)
            tb = tt.to(x0.dtype).expand(b)
            with torch.enable_grad():
                z = x0.detach().clone().requires_grad_(True)
                opt = (torch.optim.Adam if self.optimizer == "adam" else torch.optim.SGD)([z], lr=self.lr)
                for _ in range(self.inner_steps):
                    opt.zero_grad()
                    cost, _, _ = self._cost(z, alpha, tb)
                    cost.sum().backward()
                    opt.step()
                with torch.no_grad():
                    _, obj, con = self._cost(z, alpha, tb)
            keep = active.reshape((-1,) + (1,) * (x0.ndim - 1))
            out = torch.where(keep, z.detach(), x0)
            if self.dual_ascent is not None and self.constraint is not None:
                da = self.dual_ascent
                dlo, dhi = da.t_range
                update = active & (tb >= dlo) & (tb <= dhi)
                alpha = torch.where(update, (alpha + da.step * (con - da.target)).clamp(0.0, da.alpha_max), alpha)
            state["alpha"] = alpha
            self.history.append({"t": float(tt.mean()), "alpha": float(alpha.mean()),
                                 "constraint": float(con.mean()), "objective": float(obj.mean())})
            return out

        return Denoiser(fn, denoise.path, denoise.prediction)


def cost_gradient(
    objective: Callable[[Tensor], Tensor] | None = None,
    *,
    constraint: Callable[[Tensor], Tensor] | None = None,
    weight: float = 1.0,
    alpha: float = 1.0,
    dual_ascent: DualAscent | None = None,
    inner_steps: int = 5,
    lr: float = 0.05,
    optimizer: str = "adam",
    t_range: tuple[float, float] = (0.0, 1.0),
) -> CostGradient:
    """Return the cost-gradient transform (module docstring).

    Args:
        objective: ``objective(x0 [B, ...]) -> [B]`` (or a scalar), weighted by ``weight``; may also be
            ``objective(x0, t)`` with ``t`` the current time as a ``[B]`` tensor.
        constraint: ``constraint(x0) -> [B]`` or ``constraint(x0, t)`` (>= 0 penalty, e.g. overlap),
            weighted by ``alpha``.
        weight: the objective weight ``w``.
        alpha: the initial constraint weight (a Lagrange multiplier under ``dual_ascent``).
        dual_ascent: :class:`DualAscent` ``(target, step, alpha_max, t_range)``, or None for a fixed ``alpha``.
        inner_steps: optimiser steps per denoiser call (>= 1).
        lr: optimiser learning rate.
        optimizer: ``"adam"`` (fresh state at every call) or ``"sgd"``.
        t_range: guide only while ``t`` (0 data, 1 noise) lies in this closed interval.
    """
    if objective is None and constraint is None:
        raise ValueError("cost_gradient needs an objective, a constraint, or both")
    for f, n in ((objective, "objective"), (constraint, "constraint")):
        if f is not None and not callable(f):
            raise TypeError(f"{n} must be callable as {n}(x0) or {n}(x0, t) -> [B], got {type(f).__name__}")
    if optimizer not in ("adam", "sgd"):
        raise ValueError(f"optimizer must be 'adam' or 'sgd', got {optimizer!r}")
    if isinstance(inner_steps, bool) or not isinstance(inner_steps, int) or inner_steps < 1:
        raise ValueError(f"inner_steps must be an int >= 1, got {inner_steps!r}")
    for v, n in ((weight, "weight"), (alpha, "alpha"), (lr, "lr")):
        if not (math.isfinite(float(v)) and float(v) >= 0):
            raise ValueError(f"{n} must be finite and >= 0, got {v}")
    if dual_ascent is not None and not isinstance(dual_ascent, DualAscent):
        raise TypeError(f"dual_ascent must be a DualAscent(target, step) or None, got {type(dual_ascent).__name__}")
    lo, hi = (float(v) for v in t_range)
    if not 0.0 <= lo <= hi <= 1.0:
        raise ValueError(f"t_range must satisfy 0 <= lo <= hi <= 1, got {t_range}")
    return CostGradient(objective, constraint, float(weight), float(alpha), dual_ascent, inner_steps,
                        float(lr), optimizer, (lo, hi))
