"""NsDiff's variance ``g`` and denoiser (its conditional mean ``f`` is the shared NS-Transformer).

* ``f(X)`` is the Non-stationary Transformer of :mod:`scigen.timeseries.forecasters.nstransformer`
  (Liu et al. 2022, NeurIPS), shared with D3U.
* :class:`VarianceNet` — ``g(X)``: trailing rolling variance of the context (window ``k``), then a
  per-channel MLP ``(C − k + 1) → h → h → H`` with softplus (NsDiff, "SigmaEstimation"); ours
  normalises by the context's mean rolling variance (scale-equivariant, see the class).
* :class:`Denoiser` — pointwise over horizon positions: ``cat((Y_k − f)/√g, f)`` (ours; the
  reference feeds ``cat(Y_k, f, g)``, see the class) → three linear layers
  whose outputs are scaled by a learned per-step gain (``nn.Embedding(T+1, h)``), softplus
  activations; heads ``ε̂`` and ``σ̂ = softplus(·)`` (the posterior variance).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["Denoiser", "VarianceNet", "rolling_variance"]


def rolling_variance(x: Tensor, window: int) -> Tensor:
    """Trailing population variance over ``window`` steps of ``x [B, L, N]`` -> ``[B, L − window + 1, N]``.

    Entry ``i`` is the variance (ddof = 0) of ``x[:, i : i + window]``.
    """
    if x.shape[1] < window:
        raise ValueError(f"rolling window {window} is longer than the series ({x.shape[1]} steps)")
    return x.unfold(1, window, 1).var(-1, unbiased=False)


class VarianceNet(nn.Module):
    """``g(X [B, C, N]) -> [B, H, N] > 0``: rolling variance of the context -> per-channel MLP -> softplus.

    Ours (scale-equivariant): the rolling variances are divided by their mean ``v̄`` over the context
    and the output is multiplied back, ``g = v̄·softplus(MLP(rv/v̄))`` — so ``g(c·X) = c²·g(X)`` and a
    volatility level outside the training range is extrapolated proportionally (the reference feeds
    the raw variances, and its MLP sees levels it never trained on when the variance drifts).
    """

    def __init__(self, context: int, horizon: int, window: int, hidden: int, floor: float = 1e-6):
        super().__init__()
        self.window, self.floor = window, floor
        self.mlp = nn.Sequential(nn.Linear(context - window + 1, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                 nn.ReLU(), nn.Linear(hidden, horizon))

    def forward(self, x: Tensor) -> Tensor:
        rv = rolling_variance(x, self.window) + 1e-7  # [B, C-k+1, N]
        level = rv.mean(1, keepdim=True)  # [B, 1, N]
        out = F.softplus(self.mlp((rv / level).transpose(1, 2))).transpose(1, 2)
        return level * out + self.floor


class Denoiser(nn.Module):
    """``(Y_k, f, g [B, H, N], k [B]) -> (ε̂, σ̂)``, pointwise over horizon positions.

    Ours (scale-equivariant in ``g``): the input is ``cat((Y_k − f)/√g, f)`` instead of the
    reference's ``cat(Y_k, f, g)``, and ``σ̂ = g·softplus(·)``. Under NsDiff's location-scale model
    ``Y = f + √g·ξ`` the map ``(Y_k − f)/√g ↦ ε̂`` is then the same at every volatility level, so a
    variance that drifts beyond the training range (where ``g`` extrapolates) rescales the samples
    instead of leaving them at the training spread; ``σ̃`` is homogeneous of degree 1 in ``(g, σ)``,
    hence the ``g`` factor. ``g`` itself is not an input: smooth series give rolling variances of
    1e-3 and less, whose raw or log values stalled training on macrodata. With ``g = 1`` (TMDM) the
    input is ``(Y_k − f, f)``, an invertible linear map of the reference's ``(Y_k, f)``.
    """

    def __init__(self, n_vars: int, steps: int, hidden: int):
        super().__init__()
        self.lins = nn.ModuleList([nn.Linear(2 * n_vars, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)])
        self.gains = nn.ModuleList(nn.Embedding(steps + 1, hidden) for _ in range(3))
        for e in self.gains:
            nn.init.uniform_(e.weight)
        self.eps_head = nn.Linear(hidden, n_vars)
        self.var_head = nn.Linear(hidden, n_vars)

    def forward(self, y: Tensor, k: Tensor, f: Tensor, g: Tensor) -> tuple[Tensor, Tensor]:
        h = torch.cat([(y - f) / g.sqrt(), f], dim=-1)
        for lin, gain in zip(self.lins, self.gains, strict=True):
            h = F.softplus(lin(h) * gain(k)[:, None, :])
        return self.eps_head(h), g * F.softplus(self.var_head(h)) + 1e-8
