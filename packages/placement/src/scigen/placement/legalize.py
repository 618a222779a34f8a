"""Legalisation by optimisation (ChipDiffusion, Lee et al., ICML 2025, §4.4 and App. D "legalize_opt").

Adam on ``alpha·L_legal(x; k) + w·HPWL(x)/p`` over the movable objects (``p`` the pins per movable
object, :attr:`Potentials.pins_per_object`, so that ``w`` means the same on every circuit: one unit of
gradient per net an object bounds, against the overlap gradient), where the legality sharpness ``k``
rises linearly from ``k_start`` to ``k_end`` over the first ``ramp`` fraction of steps and the
multiplier ``alpha`` follows dual ascent toward ``target`` (``alpha <- clip(alpha + step·(L - target),
0, alpha_max)``). It stops early once the exact pairwise overlap is at most ``tolerance`` times the total object area and
no box protrudes from the canvas by more than ``tolerance`` (normalised units).
Fixed objects never move.

With ``keys`` (one sample index per placement) the run is per placement: placement ``i``'s tie-breaking jitter
comes from the stream keyed by ``(seed, keys[i])`` (:class:`~scigen.core.streams.SampleStreams`), and it keeps its
state at the first check where it alone is legal (Adam's update, the dual multiplier and the costs are per
element / per placement), so its result does not depend on the other placements of the batch (issue 33.3).
Without ``keys`` the batch shares one seeded jitter draw and stops when every placement is legal.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from scigen.core.errors import InvalidInputError
from scigen.core.streams import SampleStreams
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


def legalize(x: Tensor, pot: Potentials, config: LegalizerConfig | None = None, *,
             keys: Tensor | None = None) -> tuple[Tensor, dict]:
    """Legalise ``x [B, V, 2]`` (normalised centres); return ``(x_legal, info)`` with ``info`` holding
    the steps run and the final exact overlap (normalised units²). ``keys [B]``: per-placement jitter and
    stopping (module docstring); ``info["sample_steps"]`` then holds each placement's steps."""
    cfg = config or LegalizerConfig()
    # a tiny seeded jitter breaks exact ties (coincident centres have a zero overlap gradient)
    if keys is None:
        gen = torch.Generator(device=x.device).manual_seed(cfg.seed)
        noise = torch.randn(x.shape, generator=gen, device=x.device, dtype=x.dtype)
    else:
        keys = torch.as_tensor(keys)
        if keys.shape != (x.shape[0],):
            raise InvalidInputError(f"legalize: keys must be [{x.shape[0]}] (one per placement), got "
                                    f"{tuple(keys.shape)}")
        noise = SampleStreams(cfg.seed, keys).randn(x.shape, device=x.device, dtype=x.dtype)
    z0 = x.detach() + cfg.jitter * noise
    z = pot.pin(z0).requires_grad_(True)
    area = float((pot.size.prod(-1) * pot.active).sum())
    opt = torch.optim.Adam([z], lr=cfg.lr, betas=cfg.betas)
    alpha = torch.full((x.shape[0],), float(cfg.alpha), dtype=z.dtype, device=z.device)
    ppo = pot.pins_per_object
    ramp_steps = max(1, int(cfg.ramp * cfg.steps))
    step = 0
    done = torch.zeros(x.shape[0], dtype=torch.bool, device=x.device)  # keyed: placements already legal
    kept = torch.zeros_like(z0)
    steps_of = torch.full((x.shape[0],), cfg.steps, dtype=torch.int64)
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
            legal = (pot.exact_overlap(z) <= tol) & (pot.outside(z) <= cfg.tolerance)
            if keys is not None:
                with torch.no_grad():
                    new = legal & ~done
                    kept[new] = z.detach()[new]
                    steps_of[new.cpu()] = step + 1
                    done |= new
                legal = done
            if bool(legal.all()):
                break
    z = z.detach() if keys is None else torch.where(done[:, None, None], kept, z.detach())
    out = pot.pin(z)
    info = {"steps": step + 1, "overlap": pot.exact_overlap(out).tolist()}
    if keys is not None:
        info["sample_steps"] = steps_of.tolist()
    return out, info
