"""Pseudo-anomalous graphs (AGDiff Sec. 4.2): conditional reverse diffusion on node latents, decoded by
the frozen VGAE decoder.

:func:`pseudo_latents` starts at ``z_T ~ N(0, σ(1)² I)`` and runs the engine's DDIM on the discrete
DDPM grid, respaced to ``generate_steps`` steps (ours: the paper's eq. 9 ancestral chain over all T
steps, respaced so that training through the chain stays cheap), conditioned on
``c = sigmoid(W(z0 + η) + b)``. ``pseudo="random"`` (the random-perturbation baseline) is
``z0 + random_scale·N(0, I)`` instead.

With ``config.start_t < 1`` (the default, ours) the chain starts instead from ``z0`` noised to
``t = start_t`` and runs the tail of the respaced grid (``generate_steps / start_t`` points on the
whole grid, the ones at or below ``start_t``).

:func:`decode_graphs` gives ``Ã = sigmoid(Z̃ Z̃ᵀ)`` and ``X̃ = MLP(Z̃)``; with ``hard=True`` both are
binarised (edges at 0.5, node types by argmax) with straight-through gradients (ours: the paper does
not say whether Ã is thresholded; binary pseudo-anomalies keep the detector from telling real and
generated graphs apart by "is it 0/1", which real test anomalies never show), so the detector's loss
still reaches ε_θ and the condition layer.

``mode="source_count"`` (``config.edge_decode``, ours) fixes the decoded density instead: the
inner-product decoder, trained on as many sampled non-edges as edges, decodes a normal graph's own
latents at 0.5 to about twice its edges, so every pseudo-anomaly is denser than every normal graph and
the detector learns edge density. Here the edge probabilities are prior-corrected
(``sigmoid(Z̃ Z̃ᵀ + log r)``, :func:`~scigen.graphs.agdiff.objective.sampling_log_rate`) and the hard
graph keeps the ``k`` most probable pairs, ``k`` = the source graph's edge count (ties by index), so a
pseudo-anomaly differs from its source in *which* pairs are edges, not in how many.

:func:`pseudo_graphs` with ``config.pseudo_decode = "edit"`` (ours) keeps the source graph and applies
only the decoded *changes*: a pair (node) whose hard decode from ``z̃`` differs from its hard decode
from the unperturbed ``z0`` takes the value decoded from ``z̃``; every other pair (node) keeps the
source graph's, so the decoder's own reconstruction error is not part of the pseudo-anomaly.
``"shift"`` (ours) adds the *soft* change instead: ``Ã = A + P(z̃) − P(z0)`` and ``X̃ = X + softmax(X̂(z̃))
− softmax(X̂(z0))``, hardened like a decode (at 0.5, or the source's ``|E|`` top pairs with
``"source_count"``, which keeps the edge count exactly); ``z̃ = z0`` gives the source graph back.
"""

from __future__ import annotations

import math

import networkx as nx
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from scigen.core import streams
from scigen.core.errors import InvalidInputError
from scigen.core.generative import Diffusion
from scigen.graphs.dense import pair_mask

__all__ = ["decode_graphs", "edge_counts", "pseudo_graphs", "pseudo_latents", "to_networkx"]


def pseudo_latents(net: nn.Module, process: Diffusion, z0: Tensor, c: Tensor, mask: Tensor, config, *,
                   grad: bool = False, generator: torch.Generator | None = None, steps: int | None = None,
                   method: str | None = None) -> Tensor:
    """Latents of pseudo-anomalies ``[B, N, d]`` for the graphs whose latents are ``z0`` (module docstring)."""
    m = mask.unsqueeze(-1).to(z0.dtype)
    noise = streams.randn(z0.shape, generator=generator, device=z0.device, dtype=z0.dtype)
    if config.pseudo == "random":
        return (z0 + config.random_scale * noise) * m
    proc = process.bind(net.denoiser)
    n_steps = config.generate_steps if steps is None else steps
    was = net.denoiser.training
    out = _chain(proc, z0, noise, c, mask, float(config.start_t), n_steps, method, grad, generator)
    net.denoiser.train(was)
    return out * m


def _chain(proc, z0: Tensor, noise: Tensor, c: Tensor, mask: Tensor, start: float, n_steps: int, method, grad: bool,
           generator) -> Tensor:
    """The reverse chain from ``t = start`` (``1``: pure noise; below: ``z0`` noised to ``start``)."""
    m = mask.unsqueeze(-1).to(z0.dtype)
    if start >= 1.0:
        times = proc.times(n_steps)
        z_init = noise * float(proc.path.sigma(torch.tensor(1.0, dtype=torch.float64))) * m
    else:  # SDEdit-style start: z0 noised to t = start_t, then denoised (ours)
        full = proc.times(max(n_steps, math.ceil(n_steps / start)))
        times = full[full <= start + 1e-9]
        s = times[0].to(torch.float64)
        z_init = (float(proc.path.alpha(s)) * z0 + float(proc.path.sigma(s)) * noise) * m
    return proc.sample(z_init, times=times, method=method, grad=grad, generator=generator, c=c, nodes=mask)


def edge_counts(adj: Tensor, mask: Tensor) -> Tensor:
    """Edges per graph ``[B]`` of a dense symmetric adjacency (pairs ``i < j`` of real nodes)."""
    return ((adj > 0.5) & pair_mask(mask)).flatten(1).sum(1) // 2


def top_k_edges(prob: Tensor, mask: Tensor, k: Tensor) -> Tensor:
    """``[B, N, N]`` 0/1 symmetric: the ``k[b]`` most probable pairs ``i < j`` of real nodes of graph ``b``
    (ties broken by pair index)."""
    b, n, _ = prob.shape
    upper = pair_mask(mask) & torch.ones(n, n, dtype=torch.bool, device=prob.device).triu(1)
    vals = torch.where(upper, prob.detach(), torch.full_like(prob, -1.0)).flatten(1)
    order = vals.argsort(dim=1, descending=True, stable=True)
    rank = torch.empty_like(order).scatter_(1, order, torch.arange(n * n, device=prob.device).expand(b, -1))
    keep = (rank < k.view(-1, 1).to(rank.dtype)).view(b, n, n) & upper
    keep = keep | keep.transpose(1, 2)
    return keep.to(prob.dtype)


def _edge_probabilities(net: nn.Module, z: Tensor, mask: Tensor, mode: str) -> Tensor:
    pairs = pair_mask(mask).to(z.dtype)
    if mode == "threshold":
        return torch.sigmoid(net.vgae.edge_logits(z)) * pairs
    if mode == "source_count":
        return torch.sigmoid(net.vgae.calibrated_edge_logits(z)) * pairs
    raise InvalidInputError(f"edge_decode must be 'threshold' or 'source_count', got {mode!r}")


def _harden(x_prob: Tensor, adj: Tensor, mask: Tensor, mode: str, n_edges: Tensor | None) -> tuple[Tensor, Tensor]:
    """0/1 edges (at 0.5, or the ``n_edges`` top pairs) and one-hot node types, straight-through."""
    if mode == "source_count" and n_edges is None:
        raise InvalidInputError("decode_graphs(mode='source_count', hard=True) needs n_edges (edges per graph)")
    target = (adj > 0.5).to(adj.dtype) if mode == "threshold" else top_k_edges(adj, mask, n_edges)
    adj = adj + (target - adj).detach()
    x = x_prob + (F.one_hot(x_prob.argmax(-1), x_prob.shape[-1]).to(x_prob.dtype) - x_prob).detach()
    return x, adj


def decode_graphs(net: nn.Module, z: Tensor, mask: Tensor, *, hard: bool = True, mode: str = "threshold",
                  n_edges: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Node features ``[B, N, F]`` and adjacency ``[B, N, N]`` decoded from latents (module docstring).

    ``mode``: ``"threshold"`` (``sigmoid(Z Zᵀ)``, edges at 0.5) or ``"source_count"`` (prior-corrected
    probabilities; the hard graph has ``n_edges[b]`` edges, required then)."""
    adj = _edge_probabilities(net, z, mask, mode)
    x = net.vgae.decode_features(z)
    if hard:
        x, adj = _harden(torch.softmax(x, dim=-1), adj, mask, mode, n_edges)
    return x * mask.unsqueeze(-1).to(x.dtype), adj


def pseudo_graphs(net: nn.Module, z: Tensor, z0: Tensor, x: Tensor, adj: Tensor, mask: Tensor, config, *,
                  hard: bool = True) -> tuple[Tensor, Tensor]:
    """The pseudo-anomalies ``(x̃, Ã)`` of source graphs ``(x, adj)`` whose latents ``z0`` were perturbed
    to ``z``: the decode of ``z`` (``config.pseudo_decode = "full"``), the source graph edited where
    the decodes of ``z`` and ``z0`` differ (``"edit"``) or shifted by their difference (``"shift"``;
    module docstring)."""
    n_edges = edge_counts(adj, mask)
    m = mask.unsqueeze(-1).to(x.dtype)
    mode = config.edge_decode
    if config.pseudo_decode == "shift":
        with torch.no_grad():
            p0 = _edge_probabilities(net, z0, mask, mode)
            s0 = torch.softmax(net.vgae.decode_features(z0), dim=-1)
        a_soft = adj + _edge_probabilities(net, z, mask, mode) - p0
        x_soft = x + torch.softmax(net.vgae.decode_features(z), dim=-1) - s0
        if hard:
            xs, a_s = _harden(x_soft, a_soft, mask, mode, n_edges)
            return xs * m, a_s
        return x_soft.clamp(0.0, 1.0) * m, a_soft.clamp(0.0, 1.0)
    xf, af = decode_graphs(net, z, mask, hard=hard, mode=mode, n_edges=n_edges)
    if config.pseudo_decode == "full":
        return xf, af
    with torch.no_grad():
        x0, a0 = decode_graphs(net, z0, mask, hard=True, mode=mode, n_edges=n_edges)
        xz, az = (xf, af) if hard else decode_graphs(net, z, mask, hard=True, mode=mode, n_edges=n_edges)
        node_changed = (xz.argmax(-1) != x0.argmax(-1)).unsqueeze(-1).to(x.dtype)
        pair_changed = ((az > 0.5) != (a0 > 0.5)).to(adj.dtype)
    return (x + node_changed * (xf - x)) * m, adj + pair_changed * (af - adj)


def to_networkx(x: Tensor, adj: Tensor, mask: Tensor, vocab: list[str]) -> list[nx.Graph]:
    """Decoded dense graphs → networkx graphs with node ``type`` from the vocabulary, ``anomaly = 1``."""
    out = []
    x, adj, mask = x.detach().cpu(), adj.detach().cpu(), mask.cpu()  # graphs are built on the host
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
