"""Dropout whose masks are keyed by sample under per-sample random streams (issue 33: DDP equals one process).

Inverted dropout (Srivastava et al., "Dropout: a simple way to prevent neural networks from overfitting",
JMLR 2014, §10: keep with probability ``1 − p`` and scale by ``1 / (1 − p)`` at training time). Outside a
:func:`scigen.core.streams.sample_streams` block this is :func:`torch.nn.functional.dropout` (same numbers as
``nn.Dropout``); inside one (``fit(rng="per_sample")``) the mask of each sample's rows comes from that
sample's :class:`~scigen.core.streams.SampleStreams` key, so a network with dropout trains the same weights on
two DDP ranks as one process on their union batch.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from scigen.core.errors import InvalidInputError
from scigen.core.streams import SampleStreams, current_streams

__all__ = ["KeyedDropout", "KeyedMultiheadAttention", "keyed_dropout", "keyed_layers", "sample_rows"]


def sample_rows(n_rows: int, streams: SampleStreams, device=None) -> Tensor | None:
    """The sample of each of ``n_rows`` leading rows: ``None`` when there is one row per sample, else for a
    sample-major fold ``[B · k, ...]`` (e.g. a channel-independent forecaster's ``[B, C, ...] → [B·C, ...]``)
    row ``r`` belongs to sample ``r // k``."""
    b = len(streams)
    if n_rows == b:
        return None
    if b == 0 or n_rows % b:
        raise InvalidInputError(
            f"keyed dropout: the input has {n_rows} leading rows, which is neither the {b} samples of the "
            "per-sample streams nor a sample-major multiple of them")
    return torch.arange(b, device=device).repeat_interleave(n_rows // b)


def keyed_dropout(x: Tensor, p: float, training: bool = True) -> Tensor:
    """``F.dropout(x, p, training)``, with the mask drawn from the active per-sample streams when there are
    any (module docstring). The leading dimension of ``x`` is the batch, or a sample-major fold of it."""
    streams = current_streams()
    if streams is None or not training or p == 0.0:
        return F.dropout(x, p, training)
    if p == 1.0:
        return torch.zeros_like(x)
    rows = sample_rows(x.shape[0], streams, x.device)
    keep = streams.rand(x.shape, rows=rows, device=x.device, dtype=torch.float64) >= p
    return x * keep.to(x.dtype) / (1.0 - p)


class KeyedDropout(nn.Dropout):
    """``nn.Dropout`` (same constructor, no state) whose mask follows the per-sample streams when active."""

    def forward(self, x: Tensor) -> Tensor:
        if self.inplace:
            raise InvalidInputError("KeyedDropout does not drop in place (inplace=True)")
        return keyed_dropout(x, self.p, self.training)


class KeyedMultiheadAttention(nn.MultiheadAttention):
    """``nn.MultiheadAttention`` (same parameters and state) whose dropout on the attention weights follows the
    per-sample streams when they are active (the attention is then computed explicitly from the same
    projections: ``softmax(Q Kᵀ / √d + M)`` with keyed dropout, times ``V``, then the output projection;
    Vaswani et al. 2017, Eq. 1); torch's own forward otherwise."""

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        if current_streams() is None or not self.training or self.dropout == 0.0:
            return super().forward(query, key, value, key_padding_mask=key_padding_mask, need_weights=need_weights,
                                   attn_mask=attn_mask, average_attn_weights=average_attn_weights,
                                   is_causal=is_causal)
        return self.explicit(query, key, value, key_padding_mask=key_padding_mask, need_weights=need_weights,
                             attn_mask=attn_mask, average_attn_weights=average_attn_weights, is_causal=is_causal,
                             p=self.dropout)

    def explicit(self, query, key, value, *, key_padding_mask=None, need_weights=True, attn_mask=None,
                 average_attn_weights=True, is_causal=False, p: float = 0.0):
        """The attention written out, with keyed dropout ``p`` on its weights (``p = 0``: torch's result)."""
        if not self._qkv_same_embed_dim or self.bias_k is not None or self.add_zero_attn:
            raise InvalidInputError("keyed attention dropout supports the plain layout only (kdim = vdim = "
                                    "embed_dim, no bias_k / add_zero_attn)")
        if not self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        B, L, E = query.shape
        S, H = key.shape[1], self.num_heads
        hd = E // H
        w, b = self.in_proj_weight, self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else b.chunk(3)
        wq, wk, wv = w.chunk(3)
        q = F.linear(query, wq, bq).reshape(B, L, H, hd).transpose(1, 2)
        k = F.linear(key, wk, bk).reshape(B, S, H, hd).transpose(1, 2)
        v = F.linear(value, wv, bv).reshape(B, S, H, hd).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(hd)  # [B, H, L, S]
        if attn_mask is None and is_causal:
            attn_mask = torch.ones(L, S, dtype=torch.bool, device=q.device).triu(1)
        if attn_mask is not None:
            m = attn_mask.reshape(B, H, L, S) if attn_mask.dim() == 3 else attn_mask
            scores = scores.masked_fill(m, float("-inf")) if m.dtype == torch.bool else scores + m
        if key_padding_mask is not None:
            pad = key_padding_mask[:, None, None, :]
            scores = scores.masked_fill(pad, float("-inf")) if pad.dtype == torch.bool else scores + pad
        weights = torch.softmax(scores, dim=-1)
        out = keyed_dropout(weights, p) @ v if p > 0 else weights @ v
        out = self.out_proj(out.transpose(1, 2).reshape(B, L, E))
        if not self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        return out, (weights.mean(1) if average_attn_weights else weights)


def keyed_layers(module: nn.Module) -> nn.Module:
    """``module`` with every ``nn.Dropout`` made a :class:`KeyedDropout` and every ``nn.MultiheadAttention`` a
    :class:`KeyedMultiheadAttention`, in place (the classes change, the parameters and state do not; outside
    per-sample streams every layer computes and draws exactly as before).
    :meth:`scigen.core.system.System.train_network` applies it to every system's network before training, so
    dropout inside torch's own layers
    (``nn.TransformerEncoderLayer``) is keyed by sample under ``fit(rng="per_sample")`` too."""
    for m in module.modules():
        if type(m) is nn.Dropout:
            m.__class__ = KeyedDropout
        elif type(m) is nn.MultiheadAttention:
            m.__class__ = KeyedMultiheadAttention
    return module
