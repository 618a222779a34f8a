"""G2PT property prediction (G2PT §4.2): the last token's hidden state -> MLP, the upper half of the
decoder unfrozen, trained on standardised targets with the engine's training loop; and how the
head is saved with the model (tensors ``property.*``)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import networkx as nx
import numpy as np
import torch

from scigen.core.errors import InvalidInputError
from scigen.core.system import TrainingOptions
from scigen.core.system.config import make_config
from scigen.core.validation import check_count
from scigen.graphs.g2pt.data import SequenceDataset, pad
from scigen.graphs.g2pt.model import G2PTNet, PropertyHead
from scigen.graphs.g2pt.tokenizer import Vocab, encode


def check_targets(targets: Any, n_graphs: int) -> torch.Tensor:
    """``targets`` as finite ``float32 [n_graphs, k]`` (a 1-D input becomes one column)."""
    try:
        y = torch.as_tensor(np.asarray(targets, dtype=np.float32))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"targets: expected numbers, got {type(targets).__name__} ({exc})") from None
    y = y[:, None] if y.ndim == 1 else y
    if y.ndim != 2 or y.shape[0] != n_graphs or not torch.isfinite(y).all():
        raise InvalidInputError(f"targets: expected {n_graphs} finite rows, got shape {tuple(y.shape)}")
    return y


def new_head(network: G2PTNet, n_targets: int, hidden: int) -> PropertyHead:
    """A head on a copy of ``network`` with only the upper half of the blocks and the final norm trainable."""
    head = PropertyHead(copy.deepcopy(network), n_targets, hidden)
    for p in head.net.parameters():
        p.requires_grad_(False)
    for blk in head.net.blocks[len(head.net.blocks) // 2:]:
        for p in blk.parameters():
            p.requires_grad_(True)
    for p in head.net.ln_f.parameters():
        p.requires_grad_(True)
    return head


def fit_head(network: G2PTNet, vocab: Vocab, graphs: list[nx.Graph], y: torch.Tensor, *, ordering: str, copies: int,
             seed: int, max_steps: int, lr: float, batch_size: int, hidden: int, node_ids: str = "random",
             **options: Any):
    """Train a new head on ``(graphs, y)``; returns ``(head, metadata)`` (targets' mean/std for predictions)."""
    from scigen.core.train import fit

    check_count(hidden, "hidden")
    opts = make_config(TrainingOptions, {"max_steps": max_steps, "lr": lr, "batch_size": batch_size, "seed": seed})
    mean = y.mean(0)
    std = y.std(0).clamp_min(1e-8) if len(y) > 1 else torch.ones(y.shape[1])
    head = new_head(network, y.shape[1], hidden)
    ds = SequenceDataset(graphs, vocab, ordering=ordering, copies=copies, seed=seed, length=network.block_size,
                         node_ids=node_ids,
                         targets=((y - mean) / std).to(next(network.parameters()).device))

    def loss_fn(module, batch):
        ids, t = batch
        return torch.nn.functional.mse_loss(module(ids, vocab.pad), t)

    kwargs = opts.fit_kwargs(**options)
    head = fit(head, loss_fn, ds, **kwargs).module
    meta = {"mean": mean.tolist(), "std": std.tolist(), "hidden": hidden, "n_targets": int(y.shape[1])}
    return head.eval(), meta


@torch.no_grad()
def predict(head: PropertyHead, vocab: Vocab, graphs: Sequence[nx.Graph], meta: dict, *, ordering: str,
            node_ids: str = "random") -> np.ndarray:
    """Predictions ``[N, k]`` in the targets' units (one fixed permutation per graph)."""
    device = next(head.parameters()).device
    ids = pad([torch.tensor(encode(g, vocab, ordering=ordering, rng=np.random.default_rng(i), node_ids=node_ids,
                                  what=f"data[{i}]"))
               for i, g in enumerate(graphs)], vocab.pad).to(device)
    head.eval()
    out = head(ids, vocab.pad) * torch.tensor(meta["std"], device=device) + torch.tensor(meta["mean"], device=device)
    return out.cpu().numpy()


# ------------------------------------------------------------------ persistence
# The LM head is tied to the token embedding: safetensors refuses shared storage, so it is stored once
# (as the embedding) and re-tied on load.
def untie(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``tensors`` without the tied ``lm_head.weight`` copies."""
    return {k: v for k, v in tensors.items() if not k.endswith("lm_head.weight")}


def retie(tensors: dict[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    """Inverse of :func:`untie` for the network under ``prefix`` (``"network."`` or ``"net."``)."""
    if f"{prefix}wte.weight" in tensors:
        tensors = tensors | {f"{prefix}lm_head.weight": tensors[f"{prefix}wte.weight"]}
    return tensors


def head_tensors(head: PropertyHead | None) -> dict[str, torch.Tensor]:
    """The head's tensors as ``property.*`` (empty without a head)."""
    if head is None:
        return {}
    return {f"property.{k}": v.clone() for k, v in untie(head.state_dict()).items()}


def load_head(tensors: dict[str, torch.Tensor], meta: dict | None,
              build_network: Callable[[], G2PTNet]) -> PropertyHead | None:
    """The saved head (``None`` when the run has none)."""
    prop = {k[len("property."):]: v for k, v in tensors.items() if k.startswith("property.")}
    if not prop or meta is None:
        return None
    head = PropertyHead(build_network(), int(meta["n_targets"]), int(meta["hidden"]))
    head.load_state_dict(retie(prop, "net."))
    return head.eval()
