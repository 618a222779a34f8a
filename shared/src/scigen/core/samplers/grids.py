"""Sampling time grids: decreasing 1-D tensors from ``t_max`` to ``t_min`` (``t = 0`` data, ``t = 1`` noise).

* ``"uniform"``: equal steps in ``t``.
* ``"edm"``: Karras et al. (2022, Eq. 5) steps in the EDM noise level ``σ = sigma/alpha``:
  ``σ_i = (σ_max^{1/ρ} + i/N·(σ_min^{1/ρ} − σ_max^{1/ρ}))^ρ``, mapped back to ``t`` through the path.
* ``"logsnr"``: equal steps in ``lambda = log(alpha/sigma)`` (Lu et al. 2022a, §3.3 "logSNR"
  schedule), mapped back to ``t``.
* ``"discrete"``: the integer steps of a discrete DDPM schedule, ``t = k/T`` for
  ``k = round(linspace(T, 0, n_steps + 1))`` without repeats (all ``T + 1`` steps when
  ``n_steps >= T``); ``path`` must be a :class:`~scigen.core.paths.DiscreteSchedulePath`
  (``DiscreteSchedule.as_path()``), float64 unless ``dtype`` is given (see
  :meth:`DiscreteSchedule.time_grid`).

For ``"edm"`` and ``"logsnr"`` an end with an infinite log-SNR gets one step of its own: when
``sigma(t_min) = 0`` the grid goes down to the EDM noise level ``sigma_floor`` (default 0.002,
Karras et al.'s ``σ_min``) and its last step goes to ``t_min`` exactly (the final denoising step
every sampler handles); when ``alpha(t_max) = 0`` (t = 1 of linear and cosine paths) the first
step goes from ``t_max`` to the noise level ``sigma_ceil`` (default 80, Karras et al.'s ``σ_max``).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["GRID_KINDS", "time_grid"]

GRID_KINDS = ("uniform", "edm", "logsnr", "discrete")


def time_grid(
    n_steps: int,
    kind: str = "uniform",
    *,
    path=None,
    t_max: float = 1.0,
    t_min: float = 0.0,
    rho: float = 7.0,
    sigma_floor: float = 0.002,
    sigma_ceil: float = 80.0,
    dtype: torch.dtype | None = None,
    device=None,
) -> Tensor:
    """Return ``n_steps + 1`` strictly decreasing times from ``t_max`` to ``t_min`` (module docstring).

    Args:
        n_steps: number of steps (>= 1).
        kind: ``"uniform"``, ``"edm"``, ``"logsnr"`` or ``"discrete"``; all but the first need ``path``.
        path: the Gaussian path (its ``log_snr`` and ``t_from_log_snr`` map between ``t`` and noise level).
        t_max, t_min: end points, ``0 <= t_min < t_max <= 1``.
        rho: EDM's ``ρ`` (``kind="edm"``).
        sigma_floor: EDM noise level of the last non-final point when ``sigma(t_min) = 0``.
        sigma_ceil: EDM noise level of the second point when ``alpha(t_max) = 0``.
        dtype, device: of the result (default dtype: ``torch.get_default_dtype()``).
    """
    if isinstance(n_steps, bool) or not isinstance(n_steps, int) or n_steps < 1:
        raise ValueError(f"n_steps must be an int >= 1, got {n_steps!r}")
    if kind not in GRID_KINDS:
        raise ValueError(f"kind must be one of {GRID_KINDS}, got {kind!r}")
    t_max, t_min = float(t_max), float(t_min)
    if not (0.0 <= t_min < t_max <= 1.0):
        raise ValueError(f"need 0 <= t_min < t_max <= 1 (t=0 data, t=1 noise), got t_min={t_min}, t_max={t_max}")
    if kind == "discrete":
        schedule = getattr(path, "schedule", None)
        if schedule is None or not hasattr(schedule, "time_grid"):
            raise ValueError("kind='discrete' needs path=DiscreteSchedule.as_path() (a DiscreteSchedulePath)")
        if (t_max, t_min) != (1.0, 0.0):
            raise ValueError(f"kind='discrete' runs over all steps T -> 0; got t_max={t_max}, t_min={t_min}")
        return schedule.time_grid(n_steps, dtype=dtype or torch.float64, device=device)
    dtype = dtype or torch.get_default_dtype()
    f64 = torch.float64
    if kind == "uniform":
        return torch.linspace(t_max, t_min, n_steps + 1, dtype=f64).to(dtype=dtype, device=device)
    if path is None:
        raise ValueError(f"kind={kind!r} needs the path (path=...) to map noise levels to times")
    if not (math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be finite and > 0, got {rho}")
    lam_hi = float(path.log_snr(torch.tensor(t_max, dtype=f64))) / 2  # lambda = log(alpha/sigma) at t_max
    lam_lo = float(path.log_snr(torch.tensor(t_min, dtype=f64))) / 2
    for v, nm in ((sigma_floor, "sigma_floor"), (sigma_ceil, "sigma_ceil")):
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"{nm} must be finite and > 0, got {v}")
    open_hi = not math.isfinite(lam_hi)  # alpha(t_max) = 0
    open_lo = not math.isfinite(lam_lo)  # sigma(t_min) = 0
    if open_hi:
        lam_hi = -math.log(sigma_ceil)
    if open_lo:
        lam_lo = -math.log(sigma_floor)
    m = n_steps - int(open_hi) - int(open_lo)
    if m < 1 or lam_lo <= lam_hi:
        raise ValueError(
            f"kind={kind!r}: cannot place {n_steps} step(s) between t_max={t_max} and t_min={t_min} "
            f"(noise levels {math.exp(-lam_hi):.3g} -> {math.exp(-lam_lo):.3g}; an infinite/zero end needs one "
            "extra step to reach it); use more steps or adjust sigma_ceil/sigma_floor"
        )
    u = torch.linspace(0.0, 1.0, m + 1, dtype=f64)
    if kind == "edm":
        s_hi, s_lo = math.exp(-lam_hi), math.exp(-lam_lo)
        sig = (s_hi ** (1 / rho) + u * (s_lo ** (1 / rho) - s_hi ** (1 / rho))) ** rho
        lam = -torch.log(sig)
    else:
        lam = lam_hi + u * (lam_lo - lam_hi)
    t = path.t_from_log_snr(2.0 * lam).to(f64)
    if open_hi:
        t = torch.cat([torch.tensor([t_max], dtype=f64), t])
    else:
        t[0] = t_max  # exact end points (the inverse map is only accurate to rounding)
    if open_lo:
        t = torch.cat([t, torch.tensor([t_min], dtype=f64)])
    else:
        t[-1] = t_min
    if not bool((t[1:] < t[:-1]).all()):
        raise ValueError(
            f"time_grid({n_steps}, {kind!r}) is not strictly decreasing after mapping noise levels to t "
            "(too many steps for the float resolution of this path); use fewer steps or kind='uniform'"
        )
    return t.to(dtype=dtype, device=device)
