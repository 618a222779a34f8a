"""The loss and sampling wiring of the diffusion placer, on the engine's :class:`~scigen.core.generative.Diffusion`.

* **process**: the AttGNN predicts the noise ``eps`` of the object centres on the [-1, 1]² canvas under the
  cosine path ``x_t = cos(pi t/2) x0 + sin(pi t/2) eps`` (t = 0 data; Lee et al., ICML 2025, §4.1 with
  Nichol & Dhariwal's cosine schedule at ``s = 0``); training times ``U[1e-4, 1 - 1e-4]``;
* **training** (§4.1): each step takes one circuit and ``copies`` independent ``(t, eps)``; the eps-MSE runs
  over the movable objects, ports and fixed objects are held clean (``Diffusion.loss(clean=...)``);
* **guided sampling** (§4.3): DDPM ancestral steps (``method="ddpm"``, the paper's sampler) on a uniform grid
  from ``1 - 1e-4`` to 0, with the denoiser transforms of :func:`guidance_transforms`; the network always sees
  the fixed objects at their known positions (:class:`HoldFixed`, as in training).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from scigen.core.generative import Diffusion
from scigen.placement.diffusion.model import GraphInputs
from scigen.placement.netlist import Netlist
from scigen.placement.potentials import Potentials

__all__ = ["T_EPS", "Circuit", "HoldFixed", "guidance_transforms", "placement_process"]

#: the time range of training and sampling is [T_EPS, 1 - T_EPS] (sampling ends at 0)
T_EPS = 1e-4


class HoldFixed(nn.Module):
    """``forward(x, t, graph, fixed=None, known=None)``: the denoiser with the ``fixed`` entries of its input
    replaced by their ``known`` positions, so sampling conditions on them exactly as training does (where
    ``Diffusion.loss(clean=...)`` holds them at x0)."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: Tensor, t: Tensor, graph: GraphInputs, fixed: Tensor | None = None,
                known: Tensor | None = None) -> Tensor:
        if fixed is not None:
            x = torch.where(fixed, known, x)
        return self.net(x, t, graph)


def placement_process(network: nn.Module, *, method: str = "ddpm", steps: int = 1000) -> Diffusion:
    """``network`` (an AttGNN) bound to the cosine path, eps prediction and the paper's DDPM sampler."""
    from scigen.core.paths import VPCosine

    return Diffusion(HoldFixed(network), VPCosine(s=0.0), "eps", t_min=T_EPS, t_max=1 - T_EPS, method=method,
                     steps=steps, grid="uniform", grid_t_max=1 - T_EPS, grid_t_min=0.0)


class Circuit:
    """One circuit on ``device``: graph inputs, clean centres ``x0 [V, 2]``, the held-clean mask
    ``clean [V]`` (ports and fixed objects), and the potentials of guidance and legalisation."""

    def __init__(self, nl: Netlist, device: torch.device | str = "cpu") -> None:
        self._set_graph(nl.to_graph().to(device))

    def _set_graph(self, g) -> None:
        self._g = g
        self.graph = GraphInputs.from_graph(g)
        self.x0 = g.pos
        self.clean = g.is_ports | g.is_fixed
        self.potentials = Potentials.from_graph(g)

    @property
    def device(self) -> torch.device:
        return self.x0.device

    def to(self, device: torch.device | str, non_blocking: bool = False) -> Circuit:
        """This circuit on ``device`` (itself when already there). Having ``to`` makes a batch of circuits
        movable by Lightning, so training data built on the CPU follows the network to its device."""
        device = torch.device(device)
        if self.device == device:
            return self
        moved = Circuit.__new__(Circuit)
        moved._set_graph(self._g.to(device, non_blocking=non_blocking))
        return moved

    @property
    def num_objects(self) -> int:
        return int(self.x0.shape[0])

    def loss(self, process: Diffusion, network: nn.Module, copies: int) -> Tensor:
        """The eps-MSE of ``copies`` noisy copies of this circuit, over its movable objects."""
        x0 = self.x0.expand(copies, -1, -1)
        return process.loss(x0, clean=self.clean[None, :, None], network=network, graph=self.graph)

    def sample(self, process: Diffusion, transforms: list, n: int, *, generator: torch.Generator,
               steps: int | None = None, method: str | None = None, progress: bool | None = None) -> Tensor:
        """``n`` guided samples ``[n, V, 2]`` (normalised centres), clamped to [-2, 2], fixed objects pinned."""
        x1 = process.prior((n, self.num_objects, 2), generator=generator, t=1.0)
        fixed = self.clean[None, :, None].expand(n, -1, 2)
        x = process.sample(x1, steps=steps, method=method, guidance=transforms, generator=generator,
                           progress=progress, graph=self.graph, fixed=fixed, known=self.x0)
        return self.potentials.pin(x.clamp(-2, 2))


def guidance_transforms(c, circuit: Circuit, b: int) -> list:
    """The denoiser transforms of guided sampling (config ``c``), innermost first:

    1. clip the x0 estimate to ``[-clip_x0, clip_x0]`` (the canvas is [-1, 1]²). Near ``t = 1`` the eps
       -> x0 conversion divides by ``alpha(t) ~ 1e-4`` and amplifies the model's error ~1e4-fold;
       unclipped, the DDPM chain leaves the canvas and never returns (the paper instead clamps
       ``x_t`` to [-2, 2] after every step);
    2. cost-gradient guidance (``scigen.core.guidance.cost_gradient``): ``inner_steps`` Adam steps on
       ``w·HPWL(x̂0)/p + alpha·L_legal(x̂0)`` (``p`` pins per movable object). For ``t > dual_t_max``
       ``alpha`` stays 0 (wirelength only); for ``t <= dual_t_max`` it follows dual ascent toward
       ``dual_target`` (the paper's ``alpha_critical_factor``; ``DualAscent(t_range=(0, dual_t_max))``);
    3. inpainting of fixed objects and ports (``scigen.core.guidance.inpainting``).
    """
    from scigen.core.guidance import DualAscent, cost_gradient, inpainting, static_threshold

    pot = circuit.potentials
    out: list = [] if c.clip_x0 is None else [static_threshold(float(c.clip_x0))]
    if c.guidance:
        per_pin = pot.pins_per_object
        dual = DualAscent(c.dual_target, c.dual_step, c.alpha_max, t_range=(0.0, float(c.dual_t_max)))
        out.append(cost_gradient(lambda x: pot.hpwl(x, c.guidance_gamma) / per_pin,
                                 constraint=lambda x: pot.legality(x, c.legality_sharpness),
                                 weight=c.hpwl_weight, alpha=0.0, dual_ascent=dual, inner_steps=c.inner_steps,
                                 lr=c.guidance_lr))
    out.append(inpainting(circuit.clean[None, :, None].expand(b, -1, 2), circuit.x0[None].expand(b, -1, -1)))
    return out
