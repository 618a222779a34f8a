"""MMSFM networks: a drift ``v(x, t)`` and a score ``s(x, t)`` MLP on ``[x, t]`` (reference ``mmsfm/models``).

``Linear(d+1, w) -> SELU -> depth x [Linear(w, w) -> SELU] -> Linear(w, d)``, the reference's MLP
(two hidden layers of width 64, SELU, per the paper's description).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

__all__ = ["DriftScore", "TimeMLP"]


class TimeMLP(nn.Module):
    """``(x [B, d], t [B]) -> [B, d]`` on the concatenation ``[x, t]``."""

    def __init__(self, dim: int, width: int = 64, depth: int = 2) -> None:
        super().__init__()
        layers: list[nn.Module] = [nn.Linear(dim + 1, width), nn.SELU()]
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.SELU()]
        layers.append(nn.Linear(width, dim))
        self.net = nn.Sequential(*layers)

    def forward(self, x: Tensor, t: Tensor) -> Tensor:
        t = torch.as_tensor(t, dtype=x.dtype, device=x.device)
        if t.ndim == 0:
            t = t.expand(x.shape[0])
        return self.net(torch.cat([x, t.reshape(-1, 1)], dim=1))


class DriftScore(nn.Module):
    """The drift network and (optionally) the score network, trained together."""

    def __init__(self, dim: int, width: int = 64, depth: int = 2, score: bool = True) -> None:
        super().__init__()
        self.drift = TimeMLP(dim, width, depth)
        self.score = TimeMLP(dim, width, depth) if score else None
