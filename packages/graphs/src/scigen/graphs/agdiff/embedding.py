"""AGDiff's graph embedding: where its pseudo-anomalies sit relative to the normal graphs.

:func:`latent_embedding` is the trained VGAE encoder's graph-level summary, the mean over real nodes of the
node latent means ``μ`` (the latent space the diffusion model of Eq. 5 generates in). The held-out claims of
the test suite and the seed sweep compare pseudo-anomalies with normal graphs in it.
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx
import numpy as np
import torch

from scigen.graphs.agdiff.graphs import pack, unpack

__all__ = ["latent_embedding"]


def latent_embedding(model, graphs: Sequence[nx.Graph]) -> np.ndarray:
    """``[G, latent]``: the mean node latent ``μ`` of each graph under ``model``'s (frozen) VGAE encoder."""
    model.require_trained("embedding graphs")
    net = model.network
    x, adj, mask = unpack(pack(graphs, model.vocab), net.n_features)
    with torch.no_grad():
        mu, _ = net.vgae.encode(x.to(model.device), adj.to(model.device), mask.to(model.device))
    m = mask.to(mu.device).unsqueeze(-1).to(mu.dtype)
    return ((mu * m).sum(1) / m.sum(1)).cpu().numpy()
