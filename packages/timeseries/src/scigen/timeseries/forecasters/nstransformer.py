"""The Non-stationary Transformer point forecaster (Liu et al., NeurIPS 2022), shared by NsDiff (its ``f``) and D3U.

``NSTransformer(X [B, C, N]) -> [B, H, N]``: series stationarisation (per-window mean/std),
de-stationary attention ``softmax((τ·QKᵀ + 1Δᵀ)/√d)V`` with ``log τ`` and ``Δ`` learned from the
raw window and its statistics (Liu et al. 2022, Eq. 5-6), encoder-decoder with a ``label_len``
start token, output de-normalised. The value embedding is linear and positions sinusoidal; with
``time_features=F > 0`` the reference's calendar ("timeF") embedding is added too, a bias-free
``Linear(F → d_model)`` of the marks (:func:`~scigen.timeseries.data.time_features`), and the call is
``NSTransformer(X, marks)`` with ``marks [B, C + H, F]`` for the context and horizon steps (the decoder
reads the last ``label_len`` context marks and the horizon's). It mixes the variables in every token,
so it exposes no per-variable tokens (D3U conditions on its forecast).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

__all__ = ["NSTransformer", "sinusoidal_positions"]


class _DSAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, dropout: float):
        super().__init__()
        self.h = n_heads
        self.q, self.k, self.v = (nn.Linear(d_model, d_model) for _ in range(3))
        self.o = nn.Linear(d_model, d_model)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: Tensor, mem: Tensor, tau: Tensor, delta: Tensor | None, causal: bool = False) -> Tensor:
        B, Lq, D = x.shape
        Lk, dh = mem.shape[1], D // self.h
        q = self.q(x).view(B, Lq, self.h, dh).transpose(1, 2)
        k = self.k(mem).view(B, Lk, self.h, dh).transpose(1, 2)
        v = self.v(mem).view(B, Lk, self.h, dh).transpose(1, 2)
        scores = (q @ k.transpose(-1, -2)) * tau.view(B, 1, 1, 1)
        if delta is not None:
            scores = scores + delta.view(B, 1, 1, Lk)
        scores = scores / math.sqrt(dh)
        if causal:
            mask = torch.ones(Lq, Lk, dtype=torch.bool, device=x.device).triu(1)
            scores = scores.masked_fill(mask, float("-inf"))
        out = self.drop(scores.softmax(-1)) @ v
        return self.o(out.transpose(1, 2).reshape(B, Lq, D))


class _Layer(nn.Module):
    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float, cross: bool):
        super().__init__()
        self.self_attn = _DSAttention(d_model, n_heads, dropout)
        self.cross_attn = _DSAttention(d_model, n_heads, dropout) if cross else None
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Dropout(dropout), nn.Linear(d_ff, d_model))
        self.norms = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(3 if cross else 2))
        self.drop = nn.Dropout(dropout)

    def forward(self, x: Tensor, tau: Tensor, delta: Tensor, mem: Tensor | None = None) -> Tensor:
        if self.cross_attn is None:  # encoder: self-attention with tau and delta
            x = self.norms[0](x + self.drop(self.self_attn(x, x, tau, delta)))
        else:  # decoder: causal self-attention with tau only, cross-attention with tau and delta
            x = self.norms[0](x + self.drop(self.self_attn(x, x, tau, None, causal=True)))
            x = self.norms[1](x + self.drop(self.cross_attn(x, mem, tau, delta)))
        return self.norms[-1](x + self.drop(self.ff(x)))


class _Projector(nn.Module):
    """MLP over ``[conv(raw window), statistic]`` -> ``out`` (the τ / Δ learners of Liu et al. 2022)."""

    def __init__(self, n_vars: int, seq_len: int, hidden: int, out: int):
        super().__init__()
        self.conv = nn.Conv1d(seq_len, 1, kernel_size=3, padding=1, padding_mode="circular", bias=False)
        self.mlp = nn.Sequential(nn.Linear(2 * n_vars, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, out, bias=False))

    def forward(self, x: Tensor, stat: Tensor) -> Tensor:
        z = torch.cat([self.conv(x), stat], dim=1)  # [B, 2, N]
        return self.mlp(z.flatten(1))


def sinusoidal_positions(length: int, d: int) -> Tensor:
    pos = torch.arange(length, dtype=torch.float32)[:, None]
    div = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
    pe = torch.zeros(length, d)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)[:, : d // 2]
    return pe


class NSTransformer(nn.Module):
    """``f(X [B, C, N]) -> [B, H, N]``: Non-stationary Transformer point forecaster."""

    def __init__(self, n_vars: int, context: int, horizon: int, *, label_len: int, d_model: int, n_heads: int,
                 e_layers: int, d_layers: int, d_ff: int, dropout: float, projector_hidden: int,
                 time_features: int = 0):
        super().__init__()
        self.C, self.H, self.label = context, horizon, label_len
        self.time_features = int(time_features)
        self.embed = nn.Linear(n_vars, d_model)
        self.mark_embed = nn.Linear(self.time_features, d_model, bias=False) if self.time_features else None
        self.register_buffer("pe", sinusoidal_positions(context + horizon + label_len, d_model), persistent=False)
        self.encoder = nn.ModuleList(_Layer(d_model, n_heads, d_ff, dropout, cross=False) for _ in range(e_layers))
        self.decoder = nn.ModuleList(_Layer(d_model, n_heads, d_ff, dropout, cross=True) for _ in range(d_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_vars)
        self.tau = _Projector(n_vars, context, projector_hidden, 1)
        self.delta = _Projector(n_vars, context, projector_hidden, context)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: Tensor, marks: Tensor | None = None) -> Tensor:
        if self.mark_embed is not None:
            want = (x.shape[0], self.C + self.H, self.time_features)
            if marks is None or tuple(marks.shape) != want:
                got = None if marks is None else tuple(marks.shape)
                raise ValueError(f"this NSTransformer embeds {self.time_features} time features: call it with "
                                 f"marks of shape (batch, context + horizon, features) = {want}, got {got}")
        mu = x.mean(1, keepdim=True)
        sd = torch.sqrt(x.var(1, keepdim=True, unbiased=False) + 1e-5)
        xn = (x - mu) / sd
        tau = self.tau(x, sd).exp()
        delta = self.delta(x, mu)
        h = self.embed(xn) + self.pe[: self.C]
        if self.mark_embed is not None:
            h = h + self.mark_embed(marks[:, : self.C].to(xn.dtype))
        h = self.drop(h)
        for layer in self.encoder:
            h = layer(h, tau, delta)
        dec = torch.cat([xn[:, self.C - self.label :], torch.zeros_like(xn[:, : self.H])], dim=1)
        d = self.embed(dec) + self.pe[: self.label + self.H]
        if self.mark_embed is not None:
            d = d + self.mark_embed(marks[:, self.C - self.label :].to(xn.dtype))
        d = self.drop(d)
        for layer in self.decoder:
            d = layer(d, tau, delta, h)
        out = self.head(self.norm(d))[:, -self.H :]
        return out * sd + mu
