"""SBGD's training objective: the engine's denoising loss on blocks + the inter-block SBM likelihood.

``L = L_block + λ · L_inter`` (``λ = config.inter_weight``; ours: the paper's objective is unknown).

* ``L_block``: :meth:`scigen.core.generative.Diffusion.loss` (eps-MSE, Ho et al. 2020 eq. 14) on the
  padded blocks, with the noise drawn inside the block subspace (``model.project``) and the mean
  over valid entries only (``mask``);
* ``L_inter``: the Bernoulli negative log-likelihood per node pair of the SBM between blocks,
  ``−Σ_pairs [m_ij log p_ij + (n_i n_j − m_ij) log(1 − p_ij)] / Σ_pairs n_i n_j`` (Holland et al. 1983),
  minimised by ``p = Σ m / Σ n_i n_j`` when ``p`` is one constant.

Both terms are means over the batch's blocks / block pairs (``loss_reduction="blocks"``, the default): a graph with
more blocks weighs more, and the loss of a batch is not the mean of its graphs' losses. ``loss_reduction="graphs"``
takes each graph's own ``L_block + λ · L_inter`` (its blocks' masked mean, its block pairs' NLL per node pair; 0
for a graph of one block) and then the mean over the graphs: a per-example loss, which is what data-parallel
training (the mean of the ranks' batch means) reproduces exactly; the block mean only in expectation.
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core import streams


def inter_block_nll(logits: Tensor, count: Tensor, possible: Tensor) -> Tensor:
    """Bernoulli NLL per node pair (module docstring); 0 when there are no block pairs."""
    if logits.numel() == 0:
        return logits.sum()  # a zero that keeps the graph
    nll = count * torch.nn.functional.softplus(-logits) + (possible - count) * torch.nn.functional.softplus(logits)
    return nll.sum() / possible.sum().clamp_min(1.0)


def block_streams(batch) -> streams.SampleStreams | None:
    """Under per-sample streams (``fit(rng="per_sample")``, keyed by graph), one stream per *block*: block ``b`` of
    the graph with key ``k`` gets key ``k · 2^20 + b``, so a block's noise and time depend on its graph's key and
    its place in that graph only. ``None`` (torch's global generator) otherwise."""
    cur = streams.current_streams()
    if cur is None or batch.graph is None:
        return None
    g = batch.graph.to(cur.keys.device)
    first = torch.searchsorted(g, g)  # blocks of one graph are consecutive: the first block's row
    return cur.children(g, torch.arange(len(g), device=g.device) - first)


def sbgd_loss(process, network, batch, inter_weight: float, reduction: str = "blocks") -> Tensor:
    """``L_block + inter_weight · L_inter`` of one :class:`~scigen.graphs.sbgd.data.BlockBatch`, averaged over its
    blocks (``reduction="blocks"``) or per graph and then over graphs (``"graphs"``; module docstring)."""
    from scigen.graphs.sbgd.model import loss_mask, project

    if reduction == "graphs" and batch.graph is not None:
        return _per_graph_loss(process, network, batch, inter_weight)
    f = batch.x.shape[-1] - batch.x.shape[1]
    with streams.sample_streams(block_streams(batch)):
        noise = project(streams.randn(batch.x.shape, device=batch.x.device, dtype=batch.x.dtype), batch.node_mask)
        block = process.loss(batch.x, mask=loss_mask(batch.node_mask, f), noise=noise, network=network,
                             node_mask=batch.node_mask, context=batch.context)
    if inter_weight == 0 or batch.i.numel() == 0:
        return block
    inter = inter_block_nll(network.inter.logits(batch.stats, batch.i, batch.j), batch.count, batch.possible)
    return block + inter_weight * inter


def _per_graph_loss(process, network, batch, inter_weight: float) -> Tensor:
    """The mean over the batch's graphs of each graph's ``L_block + inter_weight · L_inter`` (module docstring).
    Each graph's blocks go through the engine's loss on their own, with the noise and times of the whole-batch
    draw (a block's stream is keyed by its graph and its place in it, :func:`block_streams`)."""
    from scigen.graphs.sbgd.model import loss_mask, project

    f = batch.x.shape[-1] - batch.x.shape[1]
    keyed = block_streams(batch)
    n_graphs = int(batch.graph.max()) + 1 if batch.graph.numel() else 0
    total = batch.x.new_zeros(())
    with streams.sample_streams(keyed):
        noise = project(streams.randn(batch.x.shape, device=batch.x.device, dtype=batch.x.dtype), batch.node_mask)
    for g in range(n_graphs):
        rows = (batch.graph == g).nonzero().squeeze(1)
        if rows.numel() == 0:
            continue
        sub = None
        if keyed is not None:  # the graph's block streams, at the whole batch's draw count (times after noise)
            sub = streams.SampleStreams(keyed.seed, keyed.keys[rows.to(keyed.keys.device)])
            sub.draws = keyed.draws
        with streams.sample_streams(sub):
            total = total + process.loss(batch.x[rows], mask=loss_mask(batch.node_mask[rows], f), noise=noise[rows],
                                         network=network, node_mask=batch.node_mask[rows], context=batch.context[rows])
    if inter_weight != 0 and batch.i.numel() > 0:
        logits = network.inter.logits(batch.stats, batch.i, batch.j)
        nll = (batch.count * torch.nn.functional.softplus(-logits)
               + (batch.possible - batch.count) * torch.nn.functional.softplus(logits))
        pair_graph = batch.graph[batch.i]
        num = nll.new_zeros(n_graphs).index_add(0, pair_graph, nll)
        den = nll.new_zeros(n_graphs).index_add(0, pair_graph, batch.possible.to(nll.dtype))
        total = total + inter_weight * (num / den.clamp_min(1.0)).sum()
    return total / max(n_graphs, 1)
