"""Legalisation by optimisation (ChipDiffusion, Lee et al., ICML 2025, §4.4 and App. D "legalize_opt").

Adam on ``alpha·L_legal(x; k) + w·HPWL(x)/p`` over the movable objects (``p`` the pins per movable
object, :attr:`Potentials.pins_per_object`, so that ``w`` means the same on every circuit: one unit of
gradient per net an object bounds, against the overlap gradient), where the legality sharpness ``k``
rises linearly from ``k_start`` to ``k_end`` over the first ``ramp`` fraction of steps and the
multiplier ``alpha`` follows dual ascent toward ``target`` (``alpha <- clip(alpha + step·(L - target),
0, alpha_max)``). It stops early once the exact pairwise overlap is at most ``tolerance`` times the total object area and
no box protrudes from the canvas by more than ``tolerance`` (normalised units).
Fixed objects never move.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from scigen.placement.potentials import Potentials

__all__ = ["LegalizerConfig", "legalize"]


@dataclass(frozen=True)
class LegalizerConfig:
    """Legaliser settings (paper: lr 2e-3, k 5 -> 50 over 10 %, 5k-20k steps; here a larger step and a
    sharper ramp, scaled to the kernel's area-valued energy, so that CPU runs converge in hundreds of steps).
    ``hpwl_weight`` multiplies the per-pin normalised HPWL (exact, or weighted-average with smoothing
    ``gamma`` when set); 0 legalises without regard to wirelength."""

    steps: int = 3000
    lr: float = 1e-2
    betas: tuple[float, float] = (0.8, 0.99)
    hpwl_weight: float = 10.0
    gamma: float | None = None
    alpha: float = 1.0
    dual_step: float = 50.0
    target: float = 0.0
    alpha_max: float = 1e4
    k_start: float = 20.0
    k_end: float = 400.0
    ramp: float = 0.2
    check_every: int = 25
    tolerance: float = 1e-4
    jitter: float = 1e-3
    seed: int = 0


def legalize(x: Tensor, pot: Potentials, config: LegalizerConfig | None = None) -> tuple[Tensor, dict]:
    """Legalise ``x [B, V, 2]`` (normalised centres); return ``(x_legal, info)`` with ``info`` holding
    the steps run and the final exact overlap (normalised units²)."""
    cfg = config or LegalizerConfig()
    # a tiny seeded jitter breaks exact ties (coincident centres have a zero overlap gradient)
    gen = torch.Generator(device=x.device).manual_seed(cfg.seed)
    z0 = x.detach() + cfg.jitter * torch.randn(x.shape, generator=gen, device=x.device, dtype=x.dtype)
    z = pot.pin(z0).requires_grad_(True)
    area = float((pot.size.prod(-1) * pot.active).sum())
    opt = torch.optim.Adam([z], lr=cfg.lr, betas=cfg.betas)
    alpha = torch.full((x.shape[0],), float(cfg.alpha), dtype=z.dtype, device=z.device)
    ppo = pot.pins_per_object
    ramp_steps = max(1, int(cfg.ramp * cfg.steps))
    step = 0
    for step in range(cfg.steps):
        k = cfg.k_start + (cfg.k_end - cfg.k_start) * min(1.0, step / ramp_steps)
        opt.zero_grad()
        leg = pot.legality(z, k)
        cost = alpha * leg
        if cfg.hpwl_weight > 0:
            cost = cost + (cfg.hpwl_weight / ppo) * pot.hpwl(z, cfg.gamma)
        cost.sum().backward()
        opt.step()
        with torch.no_grad():
            alpha = (alpha + cfg.dual_step * (leg.detach() - cfg.target)).clamp(0.0, cfg.alpha_max)
        if step % cfg.check_every == 0 and step > ramp_steps // 2:
            tol = cfg.tolerance * area
            if bool(((pot.exact_overlap(z) <= tol) & (pot.outside(z) <= cfg.tolerance)).all()):
                break
    out = pot.pin(z.detach())
    return out, {"steps": step + 1, "overlap": pot.exact_overlap(out).tolist()}
