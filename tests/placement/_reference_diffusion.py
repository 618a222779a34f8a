"""The placer's own eps-MSE and guided DDPM sampling as they were before the move onto the engine's
``Diffusion`` binding (scigen 5a79999, ``placement/diffusion/system.py``), kept verbatim in logic so the
equivalence tests keep comparing the engine wiring against the original implementation."""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core.paths import VPCosine

T_EPS = 1e-4


def reference_loss(net, x0: Tensor, port: Tensor, graph, copies: int) -> Tensor:
    """The old ``DiffusionPlacer.loss``: eps-MSE over the non-port coordinates of ``copies`` noisy
    copies, drawing t ~ U[1e-4, 1 - 1e-4] and then eps from the global RNG."""
    b = copies
    x0 = x0.expand(b, -1, -1)
    t = torch.rand(b) * (1 - 2 * T_EPS) + T_EPS
    eps = torch.randn_like(x0)
    path = VPCosine(s=0.0)
    xt = path.alpha(t)[:, None, None] * x0 + path.sigma(t)[:, None, None] * eps
    xt = torch.where(port[None, :, None], x0, xt)
    pred = net(xt, t, graph)
    keep = (~port).to(pred.dtype)[None, :, None]
    return ((pred - eps) ** 2 * keep).sum() / (keep.sum() * 2 * b).clamp_min(1.0)


def reference_guidance(c, pot, fixed: Tensor, known: Tensor, b: int) -> list:
    """The old ``DiffusionPlacer._guidance``: clip x0, cost-gradient guidance, inpainting."""
    from scigen.core.guidance import DualAscent, cost_gradient, inpainting, static_threshold

    transforms = []
    if c.clip_x0 is not None:
        transforms.append(static_threshold(float(c.clip_x0)))
    if c.guidance:
        ppo = pot.pins_per_object

        def wirelength(x):
            return pot.hpwl(x, c.guidance_gamma) / ppo

        def legality(x):
            return pot.legality(x, c.legality_sharpness)

        dual = DualAscent(c.dual_target, c.dual_step, c.alpha_max, t_range=(0.0, float(c.dual_t_max)))
        transforms.append(cost_gradient(wirelength, constraint=legality, weight=c.hpwl_weight, alpha=0.0,
                                        dual_ascent=dual, inner_steps=c.inner_steps, lr=c.guidance_lr))
    transforms.append(inpainting(fixed[None, :, None].expand(b, -1, 2), known[None].expand(b, -1, -1)))
    return transforms


@torch.no_grad()
def reference_sample(net, c, nl, n: int, steps: int, generator: torch.Generator) -> Tensor:
    """The old ``sample_positions`` up to (not including) legalisation: ``n`` guided DDPM samples
    ``[n, V, 2]``, clamped to [-2, 2] with the fixed objects pinned."""
    from scigen.core.samplers import sample
    from scigen.placement.diffusion.model import GraphInputs
    from scigen.placement.potentials import Potentials

    g = nl.to_graph()
    graph = GraphInputs.from_graph(g)
    pot = Potentials.from_graph(g)
    fixed = g.is_fixed | g.is_ports
    known = g.pos
    net = net.eval()

    def model_fn(x, t):
        return net(torch.where(fixed[None, :, None], known, x), t, graph)

    times = torch.linspace(1 - T_EPS, 0.0, steps + 1)
    x1 = torch.randn(n, nl.num_objects, 2, generator=generator)
    x = sample(model_fn, x1, times, path=VPCosine(s=0.0), prediction="eps", method="ddpm",
               guidance=reference_guidance(c, pot, fixed, known, n), generator=generator, progress=False)
    return pot.pin(x.clamp(-2, 2))
