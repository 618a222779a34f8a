"""The algorithm wraps the network: a network bound to its path and prediction kind.

``Diffusion(network, path, prediction)`` and ``FlowMatching(network)`` expose the two verbs every
diffusion / flow system needs, on the engine's losses and samplers (DESIGN.md §4); the network is called
``net(x_t, t, **cond)``, so a condition passed to ``loss`` / ``sample`` (``cond=c``) reaches it by name.

Example::

    import torch
    from scigen.core.generative import Diffusion
    from scigen.core.nn import ResidualMLP
    from scigen.core.paths import VPLinear

    x0 = torch.randn(256, 2) * 0.5 + 1.0                        # the data
    process = Diffusion(ResidualMLP(2, width=32, depth=2), VPLinear(), prediction="eps")
    loss = process.loss(x0)                                     # scigen.core.losses.denoising_loss
    loss.backward()
    x = process.sample(process.prior((100, 2)), steps=20, method="dpmpp_2m")  # scigen.core.samplers.sample

Time convention: ``t ∈ [0, 1]``, ``t = 0`` data, ``t = 1`` noise.
"""

from scigen.core.generative.binding import Diffusion, FlowMatching

__all__ = ["Diffusion", "FlowMatching"]
