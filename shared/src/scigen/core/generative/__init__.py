"""The algorithm wraps the network: a network bound to its path and prediction kind.

``Diffusion(network, path, prediction)`` and ``FlowMatching(network)`` expose the two verbs every
diffusion / flow system needs, on the engine's losses and samplers (DESIGN.md §4)::

    process = Diffusion(net, VPLinear(), prediction="eps")
    loss = process.loss(x0, mask=mask, cond=c)                  # scigen.core.losses.denoising_loss
    x0 = process.sample(process.prior((n, d)), steps=20, method="dpmpp_2m", cond=c)  # samplers.sample

Time convention: ``t ∈ [0, 1]``, ``t = 0`` data, ``t = 1`` noise.
"""

from scigen.core.generative.binding import Diffusion, FlowMatching

__all__ = ["Diffusion", "FlowMatching"]
