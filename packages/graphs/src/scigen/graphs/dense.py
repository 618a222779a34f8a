"""Dense padded graph batches, shared by the graph systems that pack graphs as tensors (AGDiff, SBGD).

A batch of graphs padded to ``N`` nodes carries a node mask ``[B, N]`` (True for real nodes).
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["pair_mask"]


def pair_mask(node_mask: Tensor) -> Tensor:
    """``[B, N, N]`` True for the node pairs ``i ≠ j`` of real nodes (the entries an adjacency may hold)."""
    m = node_mask.unsqueeze(-1) & node_mask.unsqueeze(-2)
    return m & ~torch.eye(node_mask.shape[-1], dtype=torch.bool, device=node_mask.device)
