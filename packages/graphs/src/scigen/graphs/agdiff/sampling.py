"""Pseudo-anomalous graphs (AGDiff Sec. 4.2): conditional reverse diffusion on node latents, decoded by
the frozen VGAE decoder.

:func:`pseudo_latents` starts at ``z_T ~ N(0, σ(1)² I)`` and runs the engine's DDIM on the discrete
DDPM grid, respaced to ``generate_steps`` steps (ours: the paper's eq. 9 ancestral chain over all T
steps, respaced so that training through the chain stays cheap), conditioned on
``c = sigmoid(W(z0 + η) + b)``. ``pseudo="random"`` (the random-perturbation baseline) is
``z0 + random_scale·N(0, I)`` instead.

With ``config.start_t < 1`` (the default, ours) the chain starts instead from ``z0`` noised to
``t = start_t`` and runs the tail of the respaced grid (``generate_steps / start_t`` points on the
whole grid, the ones at or below ``start_t``); ``config.clip_latents`` clamps the result.

:func:`decode_graphs` gives ``Ã = sigmoid(Z̃ Z̃ᵀ)`` and ``X̃ = MLP(Z̃)``; with ``hard=True`` both are
binarised (edges at 0.5, node types by argmax) with straight-through gradients (ours: the paper does
not say whether Ã is thresholded; binary pseudo-anomalies keep the detector from telling real and
generated graphs apart by "is it 0/1", which real test anomalies never show), so the detector's loss
still reaches ε_θ and the condition layer.
"""

from __future__ import annotations

import math

import networkx as nx
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from scigen.core.generative import Diffusion

__all__ = ["decode_graphs", "pseudo_latents", "to_networkx"]


def pseudo_latents(net: nn.Module, process: Diffusion, z0: Tensor, c: Tensor, mask: Tensor, config, *,
                   grad: bool = False, generator: torch.Generator | None = None, steps: int | None = None,
                   method: str | None = None) -> Tensor:
    """Latents of pseudo-anomalies ``[B, N, d]`` for the graphs whose latents are ``z0`` (module docstring)."""
    m = mask.unsqueeze(-1).to(z0.dtype)
    noise = torch.randn(z0.shape, generator=generator, device=z0.device, dtype=z0.dtype)
    if config.pseudo == "random":
        return (z0 + config.random_scale * noise) * m
    proc = process.bind(net.denoiser)
    n_steps = config.generate_steps if steps is None else steps
    start = float(config.start_t)
    if start >= 1.0:
        times = proc.times(n_steps)
        z_init = noise * float(proc.path.sigma(torch.tensor(1.0, dtype=torch.float64))) * m
    else:  # SDEdit-style start: z0 noised to t = start_t, then denoised (ours)
        full = proc.times(max(n_steps, math.ceil(n_steps / start)))
        times = full[full <= start + 1e-9]
        s = times[0].to(torch.float64)
        z_init = (float(proc.path.alpha(s)) * z0 + float(proc.path.sigma(s)) * noise) * m
    was = net.denoiser.training
    out = proc.sample(z_init, times=times, method=method, grad=grad, generator=generator, c=c, nodes=mask)
    net.denoiser.train(was)
    if config.clip_latents is not None:  # keep z̃0 inside the encoder's range (ours)
        out = out.clamp(-config.clip_latents, config.clip_latents)
    return out * m


def decode_graphs(net: nn.Module, z: Tensor, mask: Tensor, *, hard: bool = True) -> tuple[Tensor, Tensor]:
    """Node features ``[B, N, F]`` and adjacency ``[B, N, N]`` decoded from latents (module docstring)."""
    from scigen.graphs.agdiff.objective import pair_mask

    pairs = pair_mask(mask).to(z.dtype)
    adj = torch.sigmoid(net.vgae.edge_logits(z)) * pairs
    x = net.vgae.decode_features(z)
    if hard:
        adj = adj + ((adj > 0.5).to(adj.dtype) - adj).detach()
        soft = torch.softmax(x, dim=-1)
        x = soft + (F.one_hot(x.argmax(-1), x.shape[-1]).to(x.dtype) - soft).detach()
    return x * mask.unsqueeze(-1).to(x.dtype), adj


def to_networkx(x: Tensor, adj: Tensor, mask: Tensor, vocab: list[str]) -> list[nx.Graph]:
    """Decoded dense graphs → networkx graphs with node ``type`` from the vocabulary, ``anomaly = 1``."""
    out = []
    for k in range(x.shape[0]):
        n = int(mask[k].sum())
        g = nx.Graph(anomaly=1, pseudo=True)
        types = x[k, :n].argmax(-1).tolist()
        for i in range(n):
            g.add_node(i, type=vocab[types[i]])
        a = adj[k, :n, :n] > 0.5
        iu = torch.triu_indices(n, n, 1)
        keep = a[iu[0], iu[1]]
        g.add_edges_from(zip(iu[0][keep].tolist(), iu[1][keep].tolist(), strict=True))
        out.append(g)
    return out
