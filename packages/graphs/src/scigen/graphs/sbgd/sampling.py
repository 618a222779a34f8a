"""Generation in block space: plan the blocks, denoise them with the engine's sampler, draw the
edges between them from the stochastic block model, reassemble.

1. For each requested graph of ``N`` nodes, :func:`~scigen.graphs.sbgd.sizes.block_plan` gives the
   block sizes (``N`` larger than any training graph simply means more blocks: size generalisation);
2. all blocks of all graphs are denoised together by :meth:`scigen.core.generative.Diffusion.sample`
   from the prior projected onto the block subspace (``project=``: symmetric, zero-diagonal, padding
   held at 0), conditioned on their size and ``1 / k``; ``A = [A_0 > 0]``, types ``argmax X_0``;
3. each block pair gets ``p_ij`` from the inter-block model on the generated blocks' statistics and
   ``Bernoulli(p_ij)`` edges per node pair; with ``k_range`` (``inter_block_scaling="per_block_count"``,
   ours) a graph of ``k`` blocks outside the training block counts uses ``k_ref = clip(k, *k_range)``
   in its statistics and ``p_ij · (k_ref − 1) / (k − 1)``, so the expected number of inter-block edges
   per node, ``Σ_{j≠i} p_ij n_j`` (``≈ p (k − 1) n`` for equal blocks of ``n`` nodes), stays at its
   ``k_ref`` value instead of growing with ``k``;
4. :func:`~scigen.graphs.sbgd.blocks.reassemble` joins the parts; nodes are ``0..N-1`` block by block.

Keyed draws (``SBGD.sample``, issue 33.3): ``generator`` may be a :class:`~scigen.core.streams.SampleStreams` with
one key per *block* in :func:`generate_blocks` (a block's prior and sampler noise from its own stream, whatever the
chunking) and a list of one-key streams, one per *graph*, in :func:`assemble_graphs` (a graph's inter-block edges
from its own stream, one draw per block pair in order), so a graph depends on its own keys only.
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx
import torch

from scigen.core import streams
from scigen.graphs.sbgd.blocks import Decomposition, reassemble
from scigen.graphs.sbgd.model import INV_K_COLUMN, block_stats, pair_mask, project


@torch.no_grad()
def generate_blocks(process, plans: Sequence[Sequence[int]], width: int, n_features: int, *,
                    generator: torch.Generator | streams.SampleStreams, steps: int, method: str, chunk: int = 512):
    """Denoised blocks of every plan: ``adj01 [K, W, W]``, ``types [K, W]`` (indices), ``node_mask``, ``inv_k``.
    ``generator``: a ``torch.Generator``, or streams with one key per block (in plan order; module docstring)."""
    device = process.device
    sizes = [s for plan in plans for s in plan]
    inv_k = torch.tensor([1.0 / len(plan) for plan in plans for _ in plan], device=device)
    mask = torch.zeros(len(sizes), width, dtype=torch.bool, device=device)
    for r, s in enumerate(sizes):
        mask[r, :s] = True
    context = torch.stack([mask.sum(1).float() / width, inv_k], dim=-1)
    outs = []
    for lo in range(0, len(sizes), chunk):
        m, c = mask[lo:lo + chunk], context[lo:lo + chunk]
        gen = (streams.SampleStreams(generator.seed, generator.keys[lo:lo + chunk])  # each block from its own key
               if isinstance(generator, streams.SampleStreams) else generator)
        x0 = project(process.prior((m.shape[0], width, width + n_features), generator=gen, device=device), m)
        outs.append(process.sample(x0, steps=steps, method=method, generator=gen,
                                   project=lambda x, m=m: project(x, m), node_mask=m, context=c))
    x = torch.cat(outs)
    adj01 = ((x[..., :width] > 0) & pair_mask(mask)).float()
    types = x[..., width:].argmax(-1) if n_features > 0 else torch.zeros_like(mask, dtype=torch.long)
    return adj01, types, mask, inv_k


def inter_block_scale(k: int, k_range: tuple[int, int] | None) -> tuple[int, float]:
    """``(k_ref, factor)`` of module docstring step 3: ``k_ref = clip(k, *k_range)`` and
    ``(k_ref − 1) / (k − 1)`` (``(k, 1.0)`` without ``k_range`` or for ``k = 1``)."""
    if k_range is None or k <= 1:
        return k, 1.0
    k_ref = min(max(k, int(k_range[0])), int(k_range[1]))
    return k_ref, (k_ref - 1) / (k - 1)


@torch.no_grad()
def assemble_graphs(inter_net, plans, adj01, types, mask, inv_k, node_types: Sequence[str], *, typed: bool,
                    generator: torch.Generator | Sequence[streams.SampleStreams],
                    k_range: tuple[int, int] | None = None) -> list[nx.Graph]:
    """Inter-block edges from the SBM (module docstring, step 3) and the reassembled graphs. ``generator``: a
    ``torch.Generator``, or one single-key stream per plan (module docstring)."""
    f = len(node_types)
    types01 = torch.nn.functional.one_hot(types, f).float() if f else types[..., None].float()
    stats = block_stats(adj01, types01, mask, inv_k)
    out, row = [], 0
    for g_index, plan in enumerate(plans):
        gen = generator if isinstance(generator, torch.Generator) else generator[g_index]
        k = len(plan)
        k_ref, factor = inter_block_scale(k, k_range)
        if k_ref != k:
            stats[row:row + k, INV_K_COLUMN] = 1.0 / k_ref
        rows = list(range(row, row + k))
        starts = [0]
        for s in plan[:-1]:
            starts.append(starts[-1] + s)
        blocks = [list(range(st, st + s)) for st, s in zip(starts, plan, strict=True)]
        subs = []
        for r, blk in zip(rows, blocks, strict=True):
            g = nx.Graph()
            for a, v in enumerate(blk):
                g.add_node(v, **({"type": node_types[int(types[r, a])]} if typed else {}))
            iu = torch.nonzero(torch.triu(adj01[r], 1)).tolist()
            g.add_edges_from((blk[a], blk[b]) for a, b in iu)
            subs.append(g)
        inter: dict = {}
        if k > 1:
            ii, jj = torch.triu_indices(k, k, 1, device=adj01.device)
            p = (torch.sigmoid(inter_net.logits(stats, ii + row, jj + row)) * factor).clamp_max(1.0)
            for q, (a, b) in enumerate(zip(ii.tolist(), jj.tolist(), strict=True)):
                draw = streams.rand((1, plan[a], plan[b]), generator=gen, device=adj01.device)[0] < p[q]
                edges = [(blocks[a][u], blocks[b][v]) for u, v in torch.nonzero(draw).tolist()]
                if edges:
                    inter[(a, b)] = edges
        out.append(reassemble(Decomposition(blocks, subs, inter)))
        row += k
    return out
