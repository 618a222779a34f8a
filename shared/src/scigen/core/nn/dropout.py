"""Dropout whose masks are keyed by sample under per-sample random streams (issue 33: DDP equals one process).

Inverted dropout (Srivastava et al., "Dropout: a simple way to prevent neural networks from overfitting",
JMLR 2014, §10: keep with probability ``1 − p`` and scale by ``1 / (1 − p)`` at training time). Outside a
:func:`scigen.core.streams.sample_streams` block this is :func:`torch.nn.functional.dropout` (same numbers as
``nn.Dropout``); inside one (``fit(rng="per_sample")``) the mask of each sample's rows comes from that
sample's :class:`~scigen.core.streams.SampleStreams` key, so a network with dropout trains the same weights on
two DDP ranks as one process on their union batch.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from scigen.core.errors import InvalidInputError
from scigen.core.streams import SampleStreams, current_streams

__all__ = ["KeyedDropout", "keyed_dropout", "sample_rows"]


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
