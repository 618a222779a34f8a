"""AGDiff's networks (Cai et al., ICML 2025, Sec. 4) on dense padded graphs.

* :class:`GIN`: K layers of PyG's ``DenseGINConv`` (Xu et al. 2019, eq. 4.1:
  ``h' = MLP((1 + ε)·h + A·h)``), masked to the real nodes; the node states of every layer are
  concatenated (jumping knowledge, ours).
* :class:`VGAE` (eq. 7): the GIN gives ``μ`` and ``log σ`` per node (two linear heads on one shared
  stack, ours); ``Â = sigmoid(Z Zᵀ)``; ``X̂ = MLP(Z)``. The buffer ``edge_offset`` (0 until set) is the
  negative-sampling prior correction ``log r`` (``objective.sampling_log_rate``) that
  :meth:`VGAE.calibrated_edge_logits` adds (ours, used by ``edge_decode="source_count"``).
* :class:`Denoiser` (eqs. 9–11): ``ε_θ(z_t, t, c)`` per node, an engine ``ResidualMLP`` on
  ``[z_t ‖ mean over the graph of z_t]`` with the time embedding and the condition ``c`` added (the
  graph mean is ours). :class:`Condition` is eq. 10's ``c = sigmoid(W(z0 + η) + b)``.
* :class:`Detector` (eq. 13): a GIN + sum pooling + MLP → the logit of P(normal).

The adjacency the GIN sees may be soft (``[0, 1]`` entries): pseudo-anomalies pass through it with
straight-through binarisation so the detector's loss reaches the diffusion model (``sampling``).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch_geometric.nn import DenseGINConv

from scigen.core import streams
from scigen.core.nn import ResidualMLP

__all__ = ["AGDiffNet", "Condition", "Denoiser", "Detector", "GIN", "VGAE"]


def _mlp(i: int, h: int, o: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(i, h), nn.ReLU(), nn.Linear(h, o))


class GIN(nn.Module):
    """``(x [B, N, F], adj [B, N, N], mask [B, N]) -> [B, N, layers·hidden]`` (masked)."""

    def __init__(self, in_dim: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.convs = nn.ModuleList(DenseGINConv(_mlp(in_dim if i == 0 else hidden, hidden, hidden), train_eps=True)
                                   for i in range(layers))
        self.out_dim = hidden * layers

    def forward(self, x: Tensor, adj: Tensor, mask: Tensor) -> Tensor:
        hs, h = [], x
        for conv in self.convs:
            h = torch.relu(conv(h, adj, mask))
            hs.append(h)
        return torch.cat(hs, dim=-1)


class VGAE(nn.Module):
    """Variational graph auto-encoder on node latents (Kipf & Welling 2016; AGDiff eq. 7)."""

    def __init__(self, n_features: int, hidden: int, layers: int, latent: int) -> None:
        super().__init__()
        self.gin = GIN(n_features, hidden, layers)
        self.mu = nn.Linear(self.gin.out_dim, latent)
        self.log_sigma = nn.Linear(self.gin.out_dim, latent)
        self.features = _mlp(latent, hidden, n_features)
        self.register_buffer("edge_offset", torch.zeros(()))

    def encode(self, x: Tensor, adj: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        h = self.gin(x, adj, mask)
        m = mask.unsqueeze(-1).to(x.dtype)
        return self.mu(h) * m, self.log_sigma(h).clamp(-8.0, 4.0) * m

    @staticmethod
    def edge_logits(z: Tensor) -> Tensor:
        """``Z Zᵀ`` (the inner-product decoder before the sigmoid)."""
        return z @ z.transpose(-1, -2)

    def calibrated_edge_logits(self, z: Tensor) -> Tensor:
        """``Z Zᵀ + log r``: edge logits for the true edge rate of the training graphs, not the
        balanced rate the negative sampling trained them on (ours; ``objective.sampling_log_rate``)."""
        return self.edge_logits(z) + self.edge_offset

    def decode_features(self, z: Tensor) -> Tensor:
        return self.features(z)


class Condition(nn.Module):
    """``c = sigmoid(W (z0 + η) + b)``, ``η ~ N(0, noise² I)`` (AGDiff eq. 10)."""

    def __init__(self, latent: int, noise: float) -> None:
        super().__init__()
        self.linear = nn.Linear(latent, latent)
        self.noise = float(noise)

    def forward(self, z0: Tensor, generator: torch.Generator | None = None, noise: float | None = None) -> Tensor:
        """``noise`` overrides the standard deviation of ``η`` for this call (``None``: the trained one)."""
        eta = streams.randn(z0.shape, generator=generator, device=z0.device, dtype=z0.dtype)
        return torch.sigmoid(self.linear(z0 + (self.noise if noise is None else float(noise)) * eta))


class Denoiser(nn.Module):
    """``ε_θ(z_t [B, N, d], t [B], c [B, N, d], nodes [B, N]) -> [B, N, d]`` (padding rows are 0)."""

    def __init__(self, latent: int, hidden: int, layers: int, time_dim: int) -> None:
        super().__init__()
        self.net = ResidualMLP(2 * latent, latent, width=hidden, depth=layers, time_dim=time_dim, cond_dim=latent)

    def forward(self, z: Tensor, t: Tensor, *, c: Tensor, nodes: Tensor) -> Tensor:
        b, n, d = z.shape
        m = nodes.unsqueeze(-1).to(z.dtype)
        pooled = (z * m).sum(1, keepdim=True) / m.sum(1, keepdim=True).clamp_min(1.0)
        inp = torch.cat([z, pooled.expand(b, n, d)], dim=-1).reshape(b * n, 2 * d)
        tt = t.reshape(-1, 1).expand(b, n).reshape(-1) if t.ndim else t.expand(b * n)
        return self.net(inp, tt, c.reshape(b * n, d)).reshape(b, n, d) * m


class Detector(nn.Module):
    """``h_φ``: GIN → sum over nodes → MLP → logit of P(normal) ``[B]`` (AGDiff eq. 13)."""

    def __init__(self, n_features: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.gin = GIN(n_features, hidden, layers)
        self.head = _mlp(self.gin.out_dim, hidden, 1)

    def forward(self, x: Tensor, adj: Tensor, mask: Tensor) -> Tensor:
        h = self.gin(x, adj, mask).sum(1)
        return self.head(h).squeeze(-1)


class AGDiffNet(nn.Module):
    """The three trained parts: ``vgae`` (stage 1, then frozen), ``condition`` + ``denoiser`` + ``detector``."""

    def __init__(self, n_features: int, *, hidden: int, gin_layers: int, latent: int, denoiser_hidden: int,
                 denoiser_layers: int, time_dim: int, condition_noise: float, detector_layers: int) -> None:
        super().__init__()
        self.n_features = n_features
        self.vgae = VGAE(n_features, hidden, gin_layers, latent)
        self.condition = Condition(latent, condition_noise)
        self.denoiser = Denoiser(latent, denoiser_hidden, denoiser_layers, time_dim)
        self.detector = Detector(n_features, hidden, detector_layers)
