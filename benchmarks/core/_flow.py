"""Flow-matching half of the benchmark: our ``flow_matching_loss`` vs torchcfm's ConditionalFlowMatcher
(training), and our ``euler`` / ``heun`` / ``rk4`` vs torchdiffeq's ``odeint`` (sampling).

Conventions. Ours: ``t = 0`` data, ``t = 1`` noise, ``x_t = (1 − t)·x0 + t·eps`` (:class:`LinearPath`),
the model predicts ``dx_t/dt = eps − x0``, sampling integrates t: 1 -> 0. torchcfm (sigma = 0): its
``x0`` is the noise, ``x1`` the data, ``x_t = t·x1 + (1 − t)·x0``, target ``u_t = x1 − x0``; its model
is integrated t: 0 -> 1. So a torchcfm model ``v_cfm(x, s)`` is our ``velocity`` model via
``v(x, t) = −v_cfm(x, 1 − t)``; both losses are the same MSE with uniform time, they differ only in
bookkeeping and random-number use.

NFE. Our Runge-Kutta solvers end with the exact step into ``sigma = 0``
(``x = x − t·v``, one evaluation), so ``n`` steps cost ``n`` (euler), ``2n − 1`` (heun), ``4n − 3``
(rk4). torchdiffeq's fixed-grid solvers evaluate every stage of every step: ``n``, ``2n`` (midpoint),
``4n`` (rk4, 3/8 rule). For a budget B each side gets the largest ``n`` whose NFE is <= B; the actual
NFEs are recorded next to each W2.
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core.losses import flow_matching_loss
from scigen.core.paths import LinearPath
from scigen.core.samplers import METHODS, nfe, sample

PATH = LinearPath()
OURS = ("euler", "heun", "rk4")
#: our method -> torchdiffeq fixed-grid method of the same order (euler, 2nd-order, 4th-order)
PEER_OF = {"euler": "euler", "heun": "midpoint", "rk4": "rk4"}
#: torchdiffeq's fixed-grid solver -> the engine solver with its stage count (its "rk4" is our "rk4_38")
_PEER_AS = {"euler": "euler", "midpoint": "heun", "rk4": "rk4_38"}
DOPRI_TOLS = (1e-2, 1e-3, 1e-5)


def our_fm_loss(model, batch: Tensor) -> Tensor:
    return flow_matching_loss(model, batch, path=PATH)


def cfm_loss_fn():
    """torchcfm's independent CFM loss (sigma = 0) in its own convention (data = its ``x1``)."""
    from torchcfm.conditional_flow_matching import ConditionalFlowMatcher

    fm = ConditionalFlowMatcher(sigma=0.0)

    def loss(model, batch: Tensor) -> Tensor:
        x0 = torch.randn_like(batch)
        t, xt, ut = fm.sample_location_and_conditional_flow(x0, batch)
        return ((model(xt, t) - ut) ** 2).mean()

    return loss


def steps_for(budget: int, method: str, ours: bool) -> int:
    if ours:  # the engine's cost table: the last step into sigma = 0 is first order
        return max(n for n in range(1, budget + 1) if nfe(method, n) <= budget)
    return max(1, budget // METHODS[_PEER_AS[method]].nfe_per_step)


def ours_velocity(model, convention: str):
    """Our-convention velocity model function from a model trained in ``convention`` ("ours" | "cfm")."""
    if convention == "ours":
        return model
    return lambda x, t: -model(x, 1.0 - t)


def our_sample(model, convention: str, noise: Tensor, method: str, budget: int) -> tuple[Tensor, int]:
    from _common import Counted

    fn = Counted(ours_velocity(model, convention))
    n = steps_for(budget, method, ours=True)
    times = torch.linspace(1.0, 0.0, n + 1, dtype=torch.float64)
    x = sample(fn, noise.clone(), times, path=PATH, prediction="velocity", method=method, progress=False)
    return x, fn.n


@torch.no_grad()
def odeint_sample(model, convention: str, noise: Tensor, method: str, budget: int | None = None,
                  tol: float | None = None) -> tuple[Tensor, int]:
    """torchdiffeq ``odeint`` from noise to data (fixed grid of ``budget`` NFE, or dopri5 at ``tol``)."""
    from _common import Counted
    from torchdiffeq import odeint

    b = noise.shape[0]
    f = Counted(lambda t, x: model(x, t.expand(b)))
    # ours: t 1 -> 0 (torchdiffeq accepts decreasing times); torchcfm: t 0 -> 1
    t0, t1 = (1.0, 0.0) if convention == "ours" else (0.0, 1.0)
    if method == "dopri5":
        ts = torch.tensor([t0, t1])
        x = odeint(f, noise.clone(), ts, method="dopri5", rtol=tol, atol=tol)[-1]
    else:
        n = steps_for(budget, method, ours=False)
        ts = torch.linspace(t0, t1, n + 1)
        x = odeint(f, noise.clone(), ts, method=method)[-1]
    return x, f.n
