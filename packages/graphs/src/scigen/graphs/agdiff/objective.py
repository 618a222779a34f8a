"""AGDiff's two training objectives, as ``loss_fn(network, batch)`` for the engine's ``fit``.

* :func:`vgae_loss` — stage 1 (AGDiff eq. 7): per node ``‖x − x̂‖²`` + the edge BCE of the
  inner-product decoder on all edges and ``neg_ratio`` times as many sampled non-edges (negative
  sampling, the paper's complexity section) + ``kl_weight``·KL(q(z|G) ‖ N(0, I)). The paper's sum over
  graphs is a mean over nodes / node pairs here (ours: the terms then do not scale with graph size);
  eq. 7 prints "− KL", the VGAE sign is + KL (used here).
* :func:`joint_loss` — stage 2 (eq. 14): ``L = L_cls + λ·L_diff`` with the frozen encoder's
  ``z0 = μ + σ ⊙ τ``, ``L_diff`` the engine's ε-regression on the discrete DDPM path (eqs. 8, 11;
  :meth:`scigen.core.generative.Diffusion.loss`) conditioned on ``c`` (eq. 10), and ``L_cls`` the BCE
  of the detector on real graphs (label 1 = normal) and on pseudo-anomalies (label 0) drawn through
  the differentiable reverse chain (:func:`~scigen.graphs.agdiff.sampling.pseudo_latents`); every
  pseudo-anomaly enters ``L_cls``, as in the paper (leaving out those equal to their source graph was swept
  and made no difference: ``results/agdiff_sweep.md``).

Randomness (τ, η, times, negatives, the chain's start) comes from the global RNG that ``fit`` seeds and
checkpoints, so a resumed run continues exactly.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from scigen.core import streams
from scigen.core.generative import Diffusion
from scigen.graphs.agdiff.graphs import unpack
from scigen.graphs.dense import pair_mask

__all__ = ["edge_bce", "joint_loss", "make_process", "pair_mask", "sampling_log_rate", "vgae_loss"]


def make_process(config) -> Diffusion:
    """The latent DDPM: linear β (Ho et al. 2020) on ``T = diffusion_steps``, ε-prediction, DDIM on the
    integer grid (the engine's discrete schedule path)."""
    from scigen.core.paths import DiscreteSchedule

    path = DiscreteSchedule.linear(config.diffusion_steps, config.beta_start, config.beta_end).as_path()
    reduction = "per_sample" if getattr(config, "loss_reduction", "nodes") == "graphs" else "mean"
    return Diffusion(lambda x, t, **c: x, path, prediction="eps", method="ddim", steps=config.generate_steps,
                     grid="discrete", t_min=1.0 / config.diffusion_steps, reduction=reduction)


def _reduce(values: Tensor, weights: Tensor, per_graph: bool = True) -> Tensor:
    """``Σ values·weights / Σ weights`` per graph (leading dimension), then the mean over graphs (a graph with
    no weight counts 0)."""
    num = (values * weights).flatten(1).sum(1)
    return (num / weights.flatten(1).sum(1).clamp_min(1)).mean()


def _negative_sampling(adj: Tensor, mask: Tensor, neg_ratio: float, dtype: torch.dtype) -> tuple[Tensor, Tensor, Tensor]:
    """``(edges, non-edges, r [B])`` of real node pairs; ``r = min(1, neg_ratio·|E| / |non-edges|)`` per graph
    (in ``dtype``) is the share of non-edges :func:`edge_bce` samples."""
    pairs = pair_mask(mask)
    pos = (adj > 0.5) & pairs
    cand = (adj <= 0.5) & pairs
    n_pos = pos.flatten(1).sum(1).to(dtype)
    n_cand = cand.flatten(1).sum(1).to(dtype).clamp_min(1.0)
    return pos, cand, (neg_ratio * n_pos.clamp_min(1.0) / n_cand).clamp(max=1.0)


def edge_bce(logits: Tensor, adj: Tensor, mask: Tensor, neg_ratio: float = 1.0, per_graph: bool = False) -> Tensor:
    """BCE of ``sigmoid(logits)`` against ``adj`` on every edge and on non-edges sampled with probability
    ``neg_ratio·|E| / |non-edges|`` per graph (mean over the pairs counted; ``per_graph``: each graph's mean
    over its pairs, then the mean over graphs)."""
    pos, cand, rate = _negative_sampling(adj, mask, neg_ratio, torch.float32)
    neg = cand & (streams.rand(adj.shape, device=adj.device) < rate.view(-1, 1, 1))
    used = pos | neg
    loss = F.binary_cross_entropy_with_logits(logits, pos.to(logits.dtype), reduction="none")
    if not per_graph:
        return (loss * used).sum() / used.sum().clamp_min(1)
    return _reduce(loss, used.to(loss.dtype), True)


def sampling_log_rate(adj: Tensor, mask: Tensor, neg_ratio: float = 1.0) -> Tensor:
    """The mean over graphs of ``log r``, ``r`` = the share of non-edges :func:`edge_bce` samples
    (``min(1, neg_ratio·|E| / |non-edges|)``).

    A logistic model fitted on every positive and a share ``r`` of the negatives learns logits that are
    the true ones plus ``−log r`` (the prior shift of case-control sampling: King & Zeng 2001, Elkan
    2001), so ``Z Zᵀ + log r`` gives edge probabilities at the data's real density: the inner-product
    decoder trained with ``neg_ratio = 1`` otherwise decodes a graph's own latents to about twice its
    edges (ours; the paper decodes ``sigmoid(Z Zᵀ)`` as is)."""
    return _negative_sampling(adj, mask, neg_ratio, torch.float64)[2].log().mean().to(adj.dtype)


def sampling_log_rate_streamed(packed, n_features: int, neg_ratio: float = 1.0, chunk: int = 256) -> Tensor:
    """:func:`sampling_log_rate` of a dataset of packed graphs (:class:`~scigen.graphs.agdiff.graphs.PackedGraphs`),
    ``chunk`` graphs at a time: the per-graph rates are independent, so this is the in-memory value exactly."""
    from scigen.graphs.agdiff.graphs import unpack

    rates, dtype = [], torch.float32
    for s in range(0, len(packed), chunk):
        rows = torch.stack([packed[k] for k in range(s, min(s + chunk, len(packed)))])
        _, adj, mask = unpack(rows, n_features)
        rates.append(_negative_sampling(adj, mask, neg_ratio, torch.float64)[2])
        dtype = adj.dtype
    return torch.cat(rates).log().mean().to(dtype)


def vgae_loss(config) -> Callable[[nn.Module, Tensor], Tensor]:
    """Stage 1 loss (module docstring) on ``network.vgae``."""

    def loss_fn(net: nn.Module, batch: Tensor) -> Tensor:
        x, adj, mask = unpack(batch, net.n_features)
        mu, log_sigma = net.vgae.encode(x, adj, mask)
        z = mu + log_sigma.exp() * streams.randn(mu.shape, device=mu.device, dtype=mu.dtype)
        m = mask.unsqueeze(-1).to(z.dtype)
        z = z * m
        per_graph = config.loss_reduction == "graphs"
        sq = (net.vgae.decode_features(z) - x).pow(2)
        kl_terms = 0.5 * (mu.pow(2) + (2 * log_sigma).exp() - 1 - 2 * log_sigma)
        if per_graph:
            rec_x, kl = _reduce(sq.sum(-1), m[..., 0], True), _reduce(kl_terms.sum(-1), m[..., 0], True)
        else:  # one mean over the batch's nodes (the expressions as they were: default runs unchanged)
            n = m.sum().clamp_min(1.0)
            rec_x, kl = (sq * m).sum() / n, (kl_terms * m).sum() / n
        rec_a = edge_bce(net.vgae.edge_logits(z), adj, mask, config.neg_ratio, per_graph)
        return rec_x + rec_a + config.kl_weight * kl

    return loss_fn


def encode(net: nn.Module, x: Tensor, adj: Tensor, mask: Tensor, *, sample: bool = True) -> Tensor:
    """The frozen encoder's node latents ``z0 = μ + σ ⊙ τ`` (``μ`` when ``sample`` is False), no gradient."""
    with torch.no_grad():
        mu, log_sigma = net.vgae.encode(x, adj, mask)
        z = mu + log_sigma.exp() * streams.randn(mu.shape, device=mu.device, dtype=mu.dtype) if sample else mu
    return z * mask.unsqueeze(-1).to(z.dtype)


def joint_loss(config, process: Diffusion, terms: dict | None = None) -> Callable[[nn.Module, Tensor], Tensor]:
    """Stage 2 loss ``L_cls + λ·L_diff`` (module docstring); the last terms go into ``terms``."""
    from scigen.graphs.agdiff.sampling import pseudo_graphs, pseudo_latents

    def loss_fn(net: nn.Module, batch: Tensor) -> Tensor:
        x, adj, mask = unpack(batch, net.n_features)
        z0 = encode(net, x, adj, mask)
        c = net.condition(z0)
        node_mask = mask.unsqueeze(-1).expand_as(z0)
        if config.pseudo == "diffusion":
            l_diff = process.loss(z0, mask=node_mask, network=net.denoiser, c=c, nodes=mask)
        else:
            l_diff = torch.zeros((), device=z0.device)
        z_fake = pseudo_latents(net, process, z0, c, mask, config, grad=config.generator_grad)
        if not config.generator_grad:
            z_fake = z_fake.detach()
        xf, af = pseudo_graphs(net, z_fake, z0, x, adj, mask, config, hard=True)
        real = net.detector(x, adj, mask)
        fake = net.detector(xf, af, mask)
        l_fake = F.binary_cross_entropy_with_logits(fake, torch.zeros_like(fake))
        l_cls = 0.5 * (F.binary_cross_entropy_with_logits(real, torch.ones_like(real)) + l_fake)
        if terms is not None:
            terms.update(cls=float(l_cls.detach()), diff=float(l_diff.detach()))
        return l_cls + config.diffusion_weight * l_diff

    return loss_fn
