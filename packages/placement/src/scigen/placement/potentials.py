"""Differentiable placement potentials on the [-1, 1]² canvas, batched over placements ``x [B, V, 2]``.

* legality (ChipDiffusion, Lee et al., ICML 2025, §4.3 Eq. "L_legality"): the smooth pairwise overlap
  plus out-of-canvas energy of :func:`scigen.kernels.box_overlap_energy` (a product of smoothed
  penetrations, in units of area; 0 for a legal placement as the sharpness grows);
* wirelength: the exact per-net HPWL of :func:`scigen.kernels.net_hpwl` (sub-gradient, as the paper's
  max-aggregation HPWL), summed over nets; or its smooth weighted-average approximation
  :func:`scigen.kernels.wa_wirelength` (Hsu et al., DAC 2011, Eq. 3; tends to HPWL from below as
  ``gamma -> 0``), whose gradient reaches every pin of a net, not only the two extreme ones.

Fixed objects are pinned: :meth:`Potentials.pin` replaces their coordinates by the known ones, so
gradients never move them.
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.kernels import box_overlap_energy, net_hpwl, wa_wirelength

__all__ = ["Potentials"]


class Potentials:
    """Potentials of one circuit in normalised units (build with :meth:`from_graph`)."""

    def __init__(self, size: Tensor, active: Tensor, fixed: Tensor, known: Tensor, pin_offset: Tensor,
                 pin_obj: Tensor, net_ptr: Tensor) -> None:
        self.size, self.active, self.fixed, self.known = size, active, fixed, known
        self.pin_offset, self.pin_obj, self.net_ptr = pin_offset, pin_obj, net_ptr

    @classmethod
    def from_graph(cls, g, dtype=torch.float32) -> Potentials:
        size = g.x.to(dtype)
        active = ~g.is_ports & (size.prod(-1) > 0)
        return cls(size, active, g.is_fixed | g.is_ports, g.pos.to(dtype), g.pin_offset.to(dtype),
                   g.pin_obj.long(), g.net_ptr.long())

    def pin(self, x: Tensor) -> Tensor:
        """``x [B, V, 2]`` with fixed objects at their known positions (no gradient to them)."""
        return torch.where(self.fixed[:, None], self.known.to(x), x)

    def legality(self, x: Tensor, sharpness: float) -> Tensor:
        """[B] smooth overlap + boundary energy of every placement."""
        x = self.pin(x)
        size = self.size.to(x)
        return torch.stack([box_overlap_energy(xb, size, self.active, sharpness=sharpness) for xb in x])

    @property
    def pins_per_object(self) -> float:
        """Pins per movable object (>= 1): the scale of one object's HPWL gradient (one unit per net it
        bounds), used to normalise the wirelength weight across circuits."""
        movable = int((~self.fixed).sum())
        return max(1.0, self.pin_obj.shape[0] / max(1, movable))

    def hpwl(self, x: Tensor, gamma: float | None = None) -> Tensor:
        """[B] exact HPWL (normalised units) of every placement, or with ``gamma > 0`` the smooth
        weighted-average wirelength of smoothing ``gamma`` (normalised units)."""
        x = self.pin(x)
        b, v, _ = x.shape
        p, n = self.pin_obj.shape[0], self.net_ptr.shape[0] - 1
        if p == 0 or n == 0:
            return x.new_zeros(b)
        obj = (self.pin_obj[None] + v * torch.arange(b, device=x.device)[:, None]).reshape(-1)
        ptr = torch.cat([self.net_ptr[:1], (self.net_ptr[1:][None] + p * torch.arange(b, device=x.device)[:, None]
                                            ).reshape(-1)])
        args = (x.reshape(b * v, 2), self.pin_offset.to(x).repeat(b, 1), obj, ptr)
        if gamma:
            per_net = wa_wirelength(*args, float(gamma), check_indices=False)
        else:
            per_net = net_hpwl(*args, check_indices=False)
        return per_net.reshape(b, n).sum(1)

    def exact_overlap(self, x: Tensor) -> Tensor:
        """[B] Σ pairwise intersection areas (normalised units, no gradient)."""
        from scigen.kernels import total_overlap_area

        x = self.pin(x.detach())
        return torch.stack([total_overlap_area(xb, self.size.to(x), self.active) for xb in x])

    def outside(self, x: Tensor) -> Tensor:
        """[B] largest protrusion of an active box beyond the canvas (0 when all inside)."""
        x = self.pin(x.detach())
        half = self.size.to(x) / 2
        prot = (x.abs() + half - 1.0).clamp_min(0.0).amax(-1)
        return (prot * self.active).amax(-1)
