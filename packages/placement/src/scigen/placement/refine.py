"""Quadratic-wirelength descent: the analytical placer's objective, from any start.

The cost of a placement ``x [B, V, 2]`` (normalised centres) is the driver–sink quadratic wirelength

    W2(x) = sum over nets n, sink pins p of n:  || (x[obj(d_n)] + o_{d_n}) - (x[obj(p)] + o_p) ||²

(``d_n`` the net's driver pin, ``o`` the pin offsets; the classic force-directed / quadratic placement
model, e.g. Kleinhans et al., "GORDIAN", IEEE TCAD 1991) plus ``spread`` times the smooth overlap
energy of :meth:`scigen.placement.potentials.Potentials.legality`. Adam runs ``steps`` steps on it with
fixed objects pinned.

Used twice: :func:`scigen.placement.baselines.analytical` starts it from a random placement, and the
diffusion placer's optional refinement stage (``DiffusionPlacerConfig.refine_steps``; ours, not part of
ChipDiffusion) starts it from the guided diffusion sample before legalisation.
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.placement.potentials import Potentials

__all__ = ["quadratic_descent", "quadratic_wirelength"]


def _driver_sink(pot: Potentials) -> tuple[Tensor, Tensor]:
    """``(driver pin, sink pin)`` index pairs of every net with at least two pins."""
    ptr = pot.net_ptr
    counts = ptr[1:] - ptr[:-1]
    net = torch.repeat_interleave(torch.arange(counts.numel(), device=ptr.device), counts)
    pins = torch.arange(int(ptr[-1]), device=ptr.device)
    driver = ptr[:-1][net]
    sink = pins != driver
    return driver[sink], pins[sink]


def quadratic_wirelength(x: Tensor, pot: Potentials) -> Tensor:
    """[B] driver–sink quadratic wirelength ``W2(x)`` (module docstring) of every placement (fixed objects
    pinned), in normalised units²."""
    x = pot.pin(x)
    drv, snk = _driver_sink(pot)
    if drv.numel() == 0:
        return x.new_zeros(x.shape[0])
    off = pot.pin_offset.to(x)
    d = (x[:, pot.pin_obj[drv]] + off[drv]) - (x[:, pot.pin_obj[snk]] + off[snk])
    return (d**2).sum((1, 2))


def quadratic_descent(x: Tensor, pot: Potentials, *, steps: int, lr: float = 0.02, spread: float = 0.05,
                      sharpness: float = 10.0) -> Tensor:
    """``x [B, V, 2]`` after ``steps`` Adam steps on ``W2 + spread * L_legal`` (module docstring); fixed
    objects pinned; returned detached. Each placement of the batch descends its own cost."""
    z = pot.pin(x.detach()).clone().requires_grad_(True)
    if steps <= 0:
        return z.detach()
    opt = torch.optim.Adam([z], lr=lr)
    with torch.enable_grad():
        for _ in range(int(steps)):
            opt.zero_grad()
            cost = quadratic_wirelength(z, pot)
            if spread > 0:
                cost = cost + spread * pot.legality(pot.pin(z), sharpness)
            cost.sum().backward()
            opt.step()
    return pot.pin(z.detach())
