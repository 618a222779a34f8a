"""Autoregressive sampling for G2PT: temperature, top-k, the grammar mask and prompts.

``generate`` returns token sequences; with ``grammar=True`` every row ends with ``<eog>`` within the
network's ``block_size`` and decodes (see :mod:`scigen.graphs.g2pt.grammar`). Without the grammar
it samples freely (the released G2PT behaviour) and stops a row at ``<eog>`` or at ``block_size``.

This is G2PT's own sampler, not one of the engine's: tokens are drawn one at a time from the
decoder's categorical distribution (G2PT §3.3), shaped by ``temperature`` and ``top_k``; the
engine's ODE/SDE solvers (``method=``, ``steps=``) integrate continuous paths and do not apply.
The logits, the grammar mask and the draws live on the network's device, so ``generator`` is a
``torch.Generator`` on that device (``System.generator(seed)``) or a
:class:`~scigen.core.streams.SampleStreams` with one key per sequence (``G2PT.sample``): then the token of
sequence ``i`` at step ``t`` is the inverse-CDF image of the ``t``-th uniform of key ``i``'s stream
(one uniform per sequence per step, also for sequences already ended), so it depends on that sequence's key
and its own earlier tokens only, not on the other sequences of the batch, the batch size or the step at which
the batch's last sequence ends.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from scigen.core.errors import InvalidInputError
from scigen.core.streams import SampleStreams
from scigen.core.validation import check_count
from scigen.graphs.g2pt.grammar import GrammarMask
from scigen.graphs.g2pt.model import G2PTNet
from scigen.graphs.g2pt.tokenizer import Vocab


def node_prompt(vocab: Vocab, nodes: int | Sequence[str]) -> list[int]:
    """The fixed node block ``<boc> NODE_t IDX_0 <sepc> … <eoc>`` (``nodes``: a count of untyped
    nodes of the first node type, or a list of node types)."""
    types = [vocab.node_types[0]] * int(nodes) if isinstance(nodes, int) else list(nodes)
    if not 1 <= len(types) <= vocab.max_nodes:
        raise InvalidInputError(f"prompt nodes: expected 1..{vocab.max_nodes} nodes, got {len(types)}")
    ids = [vocab.boc]
    for i, t in enumerate(types):
        key = f"NODE_{t}"
        if key not in vocab.ids:
            raise InvalidInputError(f"prompt nodes: unknown node type {t!r}; known: {vocab.node_types}")
        ids += ([vocab.sepc] if i else []) + [vocab.ids[key], vocab.idx0 + i]
    return ids + [vocab.eoc]


@torch.no_grad()
def inverse_cdf(probs: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Categorical draws ``[B]`` from ``probs [B, V]`` (rows need not be normalised) and uniforms ``u [B]`` in
    [0, 1): the first index ``j`` with ``Σ_{i≤j} p_i > u · Σ_i p_i`` (inverse transform sampling; a
    zero-probability index is never chosen). The cumulative sums are taken in float64."""
    cdf = probs.to(torch.float64).cumsum(1)
    v = (u.to(torch.float64) * cdf[:, -1])[:, None]
    return torch.searchsorted(cdf, v, right=True).squeeze(1).clamp_(max=probs.shape[1] - 1)


def generate(net: G2PTNet, vocab: Vocab, n: int, *, temperature: float = 1.0, top_k: int | None = None,
             grammar: bool = True, prompt: Sequence[int] | None = None,
             generator: torch.Generator | SampleStreams | None = None, batch_size: int = 128) -> list[list[int]]:
    """``n`` token sequences (each a list of ids, without padding). With a :class:`SampleStreams`
    ``generator`` (``n`` keys), sequence ``i`` draws from key ``i``'s stream (module docstring)."""
    n = check_count(n, "n_samples")
    if isinstance(generator, SampleStreams) and len(generator) != n:
        raise InvalidInputError(f"generator: expected streams with one key per sequence ({n}), got {len(generator)}")
    batch_size = check_count(batch_size, "batch_size")
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 <= temperature < math.inf:
        raise InvalidInputError(f"temperature: expected a finite number >= 0 (0 = greedy), got {temperature!r}")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise InvalidInputError(f"top_k: expected an int >= 1 or None, got {top_k!r}")
    prompt = [vocab.boc] if prompt is None else [int(t) for t in prompt]
    if not prompt or prompt[0] != vocab.boc:
        raise InvalidInputError("prompt: must start with <boc>")
    if len(prompt) >= net.block_size:
        raise InvalidInputError(f"prompt of {len(prompt)} tokens does not fit block_size={net.block_size}")
    device = next(net.parameters()).device
    was_training = net.training
    net.eval()
    out: list[list[int]] = []
    try:
        for start in range(0, n, batch_size):
            b = min(batch_size, n - start)
            gm = GrammarMask(vocab, b, net.block_size) if grammar else None
            if gm is not None:
                for t in prompt:
                    gm.step([t] * b)  # validates the prompt
            ids = torch.tensor([prompt] * b, dtype=torch.long, device=device)
            done = torch.zeros(b, dtype=torch.bool, device=device)
            keyed = (SampleStreams(generator.seed, generator.keys[start:start + b])
                     if isinstance(generator, SampleStreams) else None)
            logits, _, cache = net(ids)
            last = logits[:, -1]
            while ids.shape[1] < net.block_size:
                z = last.float()
                if gm is not None:
                    z = z.masked_fill(~gm.mask().to(device), float("-inf"))
                if top_k is not None and top_k < z.shape[1]:
                    kth = z.topk(top_k, dim=1).values[:, -1:]
                    z = z.masked_fill(z < kth, float("-inf"))
                if temperature == 0:
                    nxt = z.argmax(1)
                elif keyed is not None:  # one uniform per sequence per step, from its own stream
                    u = keyed.rand((b,), device=device, dtype=torch.float64)
                    nxt = inverse_cdf(torch.softmax(z / temperature, 1), u)
                else:
                    nxt = torch.multinomial(torch.softmax(z / temperature, 1), 1, generator=generator).squeeze(1)
                nxt = torch.where(done, torch.full_like(nxt, vocab.pad), nxt)
                if gm is not None:
                    gm.step(nxt)
                done |= nxt == vocab.eog
                ids = torch.cat([ids, nxt[:, None]], 1)
                if bool(done.all()) or ids.shape[1] >= net.block_size:
                    break
                logits, _, cache = net(nxt[:, None], cache, start=ids.shape[1] - 1)
                last = logits[:, -1]
            for row in ids.tolist():
                end = row.index(vocab.eog) + 1 if vocab.eog in row else len(row)
                out.append(row[:end])
    finally:
        net.train(was_training)
    return out
