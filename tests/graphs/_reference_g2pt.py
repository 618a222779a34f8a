"""Reference copy of G2PT's training glue and sampler as they were on ``main`` before issue 13
(commit b6cf7fa, ``g2pt/system.py`` ``G2PT.fit`` and ``g2pt/sampling.py`` ``generate``).

The equivalence tests in ``test_g2pt_engine.py`` compare the migrated system with these: the same
weights and per-step losses after ``fit`` (one call and a second call continuing the data seed) and
the same samples from the same seed. Kept verbatim (modulo names) so the tests keep testing
something after the old code was deleted from the package.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from scigen.core.errors import InvalidInputError
from scigen.core.train import fit
from scigen.graphs.g2pt.data import SequenceDataset
from scigen.graphs.g2pt.grammar import GrammarMask
from scigen.graphs.g2pt.model import G2PTNet, next_token_loss
from scigen.graphs.g2pt.tokenizer import Vocab


def reference_optimizer(lr: float, wd: float, betas):
    def make(params):
        params = [p for p in params if p.requires_grad]
        decay = [p for p in params if p.ndim >= 2]
        rest = [p for p in params if p.ndim < 2]
        return torch.optim.AdamW([{"params": decay, "weight_decay": wd}, {"params": rest, "weight_decay": 0.0}],
                                 lr=lr, betas=betas)
    return make


def reference_fit(network, graphs, vocab, *, ordering, copies, seed, trained_steps, max_steps, lr, batch_size,
                  grad_clip, warmup_steps, weight_decay, betas, **options):
    """The body of the old ``G2PT.fit`` after the vocabulary was set up (config values as arguments)."""
    steps = int(max_steps)
    ds = SequenceDataset(graphs, vocab, ordering=ordering, copies=copies, seed=seed + int(trained_steps),
                         length=network.block_size)
    pad = vocab.pad
    options.setdefault("batch_size", batch_size)
    options.setdefault("seed", seed)
    options.setdefault("grad_clip", grad_clip or None)
    options.setdefault("lr_schedule", "cosine")
    options.setdefault("warmup_steps", min(warmup_steps, steps // 10))
    options.setdefault("optimizer", reference_optimizer(lr, weight_decay, tuple(betas)))
    options.setdefault("logger", None)
    return fit(network, lambda net, batch: next_token_loss(net, batch, pad), ds, max_steps=steps, lr=lr, **options)


@torch.no_grad()
def reference_generate(net: G2PTNet, vocab: Vocab, n: int, *, temperature: float = 1.0, top_k: int | None = None,
             grammar: bool = True, prompt: Sequence[int] | None = None, generator: torch.Generator | None = None,
             batch_size: int = 128) -> list[list[int]]:
    """``n`` token sequences (each a list of ids, without padding)."""
    if n < 1:
        raise InvalidInputError(f"n: expected a positive number of samples, got {n}")
    if temperature < 0:
        raise InvalidInputError(f"temperature: expected >= 0 (0 = greedy), got {temperature}")
    if top_k is not None and top_k < 1:
        raise InvalidInputError(f"top_k: expected >= 1 or None, got {top_k}")
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
            done = torch.zeros(b, dtype=torch.bool)
            logits, _, cache = net(ids)
            last = logits[:, -1]
            while ids.shape[1] < net.block_size:
                z = last.float().cpu()
                if gm is not None:
                    z = z.masked_fill(~gm.mask(), float("-inf"))
                if top_k is not None and top_k < z.shape[1]:
                    kth = z.topk(top_k, dim=1).values[:, -1:]
                    z = z.masked_fill(z < kth, float("-inf"))
                if temperature == 0:
                    nxt = z.argmax(1)
                else:
                    nxt = torch.multinomial(torch.softmax(z / temperature, 1), 1, generator=generator).squeeze(1)
                nxt = torch.where(done, torch.full_like(nxt, vocab.pad), nxt)
                if gm is not None:
                    gm.step(nxt)
                done |= nxt == vocab.eog
                ids = torch.cat([ids, nxt.to(device)[:, None]], 1)
                if bool(done.all()) or ids.shape[1] >= net.block_size:
                    break
                logits, _, cache = net(nxt.to(device)[:, None], cache, start=ids.shape[1] - 1)
                last = logits[:, -1]
            for row in ids.tolist():
                end = row.index(vocab.eog) + 1 if vocab.eog in row else len(row)
                out.append(row[:end])
    finally:
        net.train(was_training)
    return out
