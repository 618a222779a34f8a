"""PatchDN, D3U's residual denoiser (Li et al., ICLR 2025, §3.3): a channel-independent DiT over horizon patches.

For every variable separately (weights shared across variables, so permuting variables permutes
outputs): the noisy residual ``r_t [H]`` is cut into patches (``patch_len`` 16, ``stride`` 8, end
replication padding, :func:`~scigen.timeseries.forecasters.patching.patchify`), embedded by
``Linear(patch_len → D, no bias)`` plus sinusoidal positions. The condition vector is
``c = t_emb(t) + Linear(cond)`` with ``t_emb`` = sinusoidal(``t_embed_dim``) of the step ``t·T`` →
``Linear → SiLU → Linear`` (DiT, Peebles & Xie 2023, §3.2) and ``cond`` the variable's flattened
forecaster tokens (or its forecast ``Ŷ``; the input width is derived, not hard-coded). ``depth``
adaLN-zero blocks (LayerNorm without affine → ``(1 + scale)``/``shift`` → multi-head self-attention
× gate, then the same around an MLP of ratio ``mlp_ratio`` with GELU-tanh; the six modulations come
from ``SiLU → Linear(D → 6D)``, zero-initialised so each block starts as the identity), a final
adaLN (``2D``, zero-init) and ``Linear(n_patches·D → H)``, zero-initialised — so an untrained
PatchDN predicts exactly 0.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from scigen.timeseries.forecasters.nstransformer import sinusoidal_positions
from scigen.timeseries.forecasters.patching import n_patches, patchify

__all__ = ["PatchDN", "timestep_embedding"]


def timestep_embedding(t: Tensor, dim: int, max_period: float = 10000.0) -> Tensor:
    """``[cos(t·ω_i), sin(t·ω_i)]`` with ``ω_i = max_period^(−i/half)`` (DiT / ADM), ``t [B]`` -> ``[B, dim]``."""
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    args = t.float()[:, None] * freqs[None]
    emb = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    return F.pad(emb, (0, dim % 2))


def _modulate(x: Tensor, shift: Tensor, scale: Tensor) -> Tensor:
    return x * (1 + scale[:, None]) + shift[:, None]


class _Block(nn.Module):
    """One adaLN-zero DiT block."""

    def __init__(self, d: int, heads: int, mlp_ratio: float):
        super().__init__()
        self.norm1 = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        hidden = max(1, int(d * mlp_ratio))
        self.mlp = nn.Sequential(nn.Linear(d, hidden), nn.GELU(approximate="tanh"), nn.Linear(hidden, d))
        self.ada = nn.Sequential(nn.SiLU(), nn.Linear(d, 6 * d))
        nn.init.zeros_(self.ada[1].weight)
        nn.init.zeros_(self.ada[1].bias)

    def forward(self, x: Tensor, c: Tensor) -> Tensor:
        sh1, sc1, g1, sh2, sc2, g2 = self.ada(c).chunk(6, dim=-1)
        h = _modulate(self.norm1(x), sh1, sc1)
        x = x + g1[:, None] * self.attn(h, h, h, need_weights=False)[0]
        return x + g2[:, None] * self.mlp(_modulate(self.norm2(x), sh2, sc2))


class PatchDN(nn.Module):
    """``(r_t [B, H, N], t [B], cond [B, N, cond_dim]) -> [B, H, N]`` (the x0 or eps prediction)."""

    def __init__(self, horizon: int, cond_dim: int, steps: int, *, patch_len: int = 16, stride: int = 8,
                 d_model: int = 128, n_heads: int = 8, depth: int = 1, mlp_ratio: float = 1.0, t_embed_dim: int = 256):
        super().__init__()
        self.H, self.T, self.patch_len, self.stride, self.t_dim = horizon, steps, patch_len, stride, t_embed_dim
        self.cond_dim = cond_dim
        P = n_patches(horizon, patch_len, stride)
        self.embed = nn.Linear(patch_len, d_model, bias=False)
        self.register_buffer("pos", sinusoidal_positions(P, d_model), persistent=False)
        self.t_mlp = nn.Sequential(nn.Linear(t_embed_dim, d_model), nn.SiLU(), nn.Linear(d_model, d_model))
        self.c_embed = nn.Linear(cond_dim, d_model)
        self.blocks = nn.ModuleList(_Block(d_model, n_heads, mlp_ratio) for _ in range(depth))
        self.norm = nn.LayerNorm(d_model, elementwise_affine=False, eps=1e-6)
        self.final_ada = nn.Sequential(nn.SiLU(), nn.Linear(d_model, 2 * d_model))
        self.out = nn.Linear(P * d_model, horizon)
        self._init()

    def _init(self) -> None:
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
        for lin in (self.embed, self.c_embed, self.t_mlp[0], self.t_mlp[2]):
            nn.init.normal_(lin.weight, std=0.02)
        for blk in self.blocks:
            nn.init.zeros_(blk.ada[1].weight)
            nn.init.zeros_(blk.ada[1].bias)
        for lin in (self.final_ada[1], self.out):
            nn.init.zeros_(lin.weight)
            nn.init.zeros_(lin.bias)

    def forward(self, r: Tensor, t: Tensor, *, cond: Tensor) -> Tensor:
        B, H, N = r.shape
        if H != self.H or cond.shape[:2] != (B, N) or cond.shape[-1] != self.cond_dim:
            raise ValueError(f"PatchDN expects r [B, {self.H}, N] and cond [B, N, {self.cond_dim}], "
                             f"got {tuple(r.shape)} and {tuple(cond.shape)}")
        x = patchify(r.transpose(1, 2).reshape(B * N, H), self.patch_len, self.stride)  # [B·N, P, patch_len]
        x = self.embed(x) + self.pos
        tt = (t.reshape(-1).expand(B) if t.numel() == 1 else t.reshape(B)) * self.T
        temb = self.t_mlp(timestep_embedding(tt, self.t_dim))  # [B, D]
        c = temb.repeat_interleave(N, dim=0) + self.c_embed(cond.reshape(B * N, -1))
        for blk in self.blocks:
            x = blk(x, c)
        shift, scale = self.final_ada(c).chunk(2, dim=-1)
        x = _modulate(self.norm(x), shift, scale)
        return self.out(x.flatten(1)).view(B, N, H).transpose(1, 2)
