"""Exact log-likelihood through the probability-flow ODE (instantaneous change of variables).

For ``dx/dt = v(x, t)`` (``t = 0`` data, ``t = 1`` prior) the log-density obeys
``d log p_t(x_t)/dt = −div v(x_t, t)`` (Chen et al. 2018, Thm. 1; Song et al. 2021, Eq. 39), so

``log p_0(x) = log p_1(x_1) + ∫_0^1 div v(x_t, t) dt``

with ``x_1`` the ODE solution started at ``x``. The joint ODE for ``(x_t, ∫ div)`` is solved with
torchdiffeq's adaptive ``dopri5`` (Dormand-Prince 5(4)). The divergence is exact (one
backward pass per dimension) for small dimensions, or Hutchinson's unbiased estimate
``E_z[zᵀ (∂v/∂x) z]`` with Rademacher or Gaussian probes ``z`` held fixed along the trajectory
(Grathwohl et al. 2019, FFJORD, Eq. 7).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

__all__ = ["likelihood", "standard_normal_log_prob"]


def standard_normal_log_prob(x: Tensor) -> Tensor:
    """``log N(x; 0, I)`` per sample, summed over all but the batch dimension (nats), shape ``[B]``."""
    d = x[0].numel()
    return -0.5 * x.flatten(1).pow(2).sum(1) - 0.5 * d * math.log(2 * math.pi)


def _grad(out: Tensor, x: Tensor, w: Tensor) -> Tensor:
    (g,) = torch.autograd.grad(out, x, w, retain_graph=True, allow_unused=True)
    return torch.zeros_like(x) if g is None else g


def likelihood(
    velocity_fn: Callable[[Tensor, Tensor], Tensor],
    x: Tensor,
    *,
    path=None,
    prediction: str = "velocity",
    t0: float = 0.0,
    t1: float = 1.0,
    divergence: str = "auto",
    exact_max_dim: int = 64,
    n_probes: int = 1,
    probe: str = "rademacher",
    generator: torch.Generator | None = None,
    prior_log_prob: Callable[[Tensor], Tensor] | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-5,
    return_latent: bool = False,
):
    """``log p(x)`` in nats, shape ``[B]``, under the prior at ``t1`` pushed through the flow.

    Args:
        velocity_fn: ``v(x [B, ...], t [B]) -> dx/dt`` (``t = 0`` data, ``t = 1`` noise). With
            ``path`` given, it may return another kind (``prediction``), converted by
            ``path.convert(..., dst="velocity")`` (undefined where that conversion divides by 0,
            e.g. an ``x0`` model at ``sigma = 0``).
        x: data, shape ``[B, ...]``.
        t0, t1: integrate from ``t0`` (data) to ``t1`` (prior), ``0 <= t0 < t1 <= 1``.
        divergence: ``"exact"``, ``"hutchinson"`` or ``"auto"`` (exact when the per-sample
            dimension is at most ``exact_max_dim``).
        n_probes, probe: Hutchinson probes per sample (``"rademacher"`` or ``"gaussian"``).
        prior_log_prob: ``log p_1(x_1)`` per sample; default the standard normal
            (:func:`standard_normal_log_prob`), correct when ``alpha(1) = 0, sigma(1) = 1``.
        rtol, atol: dopri5 tolerances.
        return_latent: also return ``x_1``.

    Returns:
        ``log p(x)`` ``[B]`` (an unbiased estimate of it with Hutchinson), or ``(log p, x_1)``.
    """
    from torchdiffeq import odeint

    if not callable(velocity_fn):
        raise TypeError(f"velocity_fn must be callable as velocity_fn(x, t), got {type(velocity_fn).__name__}")
    if not isinstance(x, Tensor) or not x.is_floating_point() or x.ndim < 1 or x.shape[0] == 0:
        got = f"shape {tuple(x.shape)}, dtype {x.dtype}" if isinstance(x, Tensor) else type(x).__name__
        raise ValueError(f"x must be a non-empty floating tensor [B, ...], got {got}")
    if not (0.0 <= float(t0) < float(t1) <= 1.0):
        raise ValueError(f"need 0 <= t0 < t1 <= 1 (t=0 data, t=1 prior), got t0={t0}, t1={t1}")
    if divergence not in ("auto", "exact", "hutchinson"):
        raise ValueError(f"divergence must be 'auto', 'exact' or 'hutchinson', got {divergence!r}")
    if probe not in ("rademacher", "gaussian"):
        raise ValueError(f"probe must be 'rademacher' or 'gaussian', got {probe!r}")
    if isinstance(n_probes, bool) or not isinstance(n_probes, int) or n_probes < 1:
        raise ValueError(f"n_probes must be an int >= 1, got {n_probes!r}")
    b, d = x.shape[0], x[0].numel()
    exact = divergence == "exact" or (divergence == "auto" and d <= exact_max_dim)
    field = velocity_fn
    if path is not None and prediction != "velocity":

        def field(xt, tt):
            return path.convert(velocity_fn(xt, tt), xt, tt, src=prediction, dst="velocity")

    probes = None
    if not exact:
        shape = (n_probes, *x.shape)
        if probe == "rademacher":
            probes = torch.randint(0, 2, shape, generator=generator, device=x.device).to(x.dtype) * 2 - 1
        else:
            probes = torch.randn(shape, generator=generator, device=x.device, dtype=x.dtype)

    def rhs(t: Tensor, state):
        xt = state[0]
        with torch.enable_grad():
            xt = xt.detach().requires_grad_(True)
            v = field(xt, t.to(x.dtype).expand(b))
            if not isinstance(v, Tensor) or v.shape != xt.shape:
                got = tuple(v.shape) if isinstance(v, Tensor) else type(v).__name__
                raise ValueError(f"velocity_fn must return a tensor of x's shape {tuple(xt.shape)}, got {got}")
            if not v.requires_grad:  # a field that does not depend on x (or no autograd graph)
                div = torch.zeros(b, device=x.device, dtype=x.dtype)
            elif exact:
                vf = v.reshape(b, d)
                eye = torch.zeros_like(vf)
                div = torch.zeros(b, device=x.device, dtype=x.dtype)
                for i in range(d):
                    eye.zero_()
                    eye[:, i] = 1.0
                    div = div + _grad(vf, xt, eye).reshape(b, d)[:, i]
            else:
                div = sum((_grad(v, xt, z) * z).flatten(1).sum(1) for z in probes) / n_probes
        return v.detach(), div.detach()

    ts = torch.tensor([float(t0), float(t1)], dtype=x.dtype, device=x.device)
    state0 = (x.detach(), torch.zeros(b, device=x.device, dtype=x.dtype))
    xs, divs = odeint(rhs, state0, ts, method="dopri5", rtol=rtol, atol=atol)
    x1, int_div = xs[-1], divs[-1]
    prior = standard_normal_log_prob if prior_log_prob is None else prior_log_prob
    logp = prior(x1) + int_div
    return (logp, x1) if return_latent else logp
