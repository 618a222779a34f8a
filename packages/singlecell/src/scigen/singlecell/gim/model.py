"""GIM's networks: the causal model θ, the head g_φ(γ) and (MAP/EM mode) per-context latents.

Paper (Schneider et al., ICML 2025, §3 as summarised in ``shared/research/singlecell.md`` §1.2): a
generative model ``p_φ(I, ψ | γ)`` over latent targets ``I`` and intervention parameters ``ψ`` given
perturbation features ``γ``, learned jointly with the causal model ``p_θ(x | I, ψ)``.
Ours: the head is an MLP ``γ ↦ (target logits, μ_ψ, log s_ψ[, ψ_logscale])``; with ``hill=True`` the
shift follows a monotone Hill dose response ``ψ(c) = ψ_max · cⁿ/(EC50ⁿ + cⁿ)`` whose ``ψ_max, EC50, n``
(and the targets) come from the dose-free features, otherwise the dose enters as ``log1p(c)``.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

__all__ = ["CausalModel", "GIMHead", "GIMNetwork"]


class CausalModel(nn.Module):
    """θ: ``W`` (zero diagonal), intercept ``b``, noise ``log σ``; ``log_decay`` for the SDE backend."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.w_raw = nn.Parameter(torch.zeros(d, d))
        self.b = nn.Parameter(torch.zeros(d))
        self.log_sigma = nn.Parameter(torch.zeros(d))
        self.log_decay = nn.Parameter(torch.zeros(d))
        self.register_buffer("offdiag", 1.0 - torch.eye(d))

    @property
    def w(self) -> Tensor:
        return self.w_raw * self.offdiag


class GIMHead(nn.Module):
    """g_φ: features ``γ [K, p]`` and doses ``c [K]`` → ``(logits, μ_ψ, log s_ψ, ψ_logscale)``, each ``[K, d]``."""

    def __init__(self, p: int, d: int, width: int, depth: int, *, hill: bool, noise: bool) -> None:
        super().__init__()
        self.hill, self.noise, self.d = hill, noise, d
        n_out = d * (5 if hill else 3) + (d if noise else 0)
        layers: list[nn.Module] = []
        inp = p + (0 if hill else 1)
        for _ in range(depth):
            layers += [nn.Linear(inp, width), nn.SiLU()]
            inp = width
        layers.append(nn.Linear(inp, n_out))
        self.mlp = nn.Sequential(*layers)
        with torch.no_grad():  # start with few targets and near-zero shifts
            self.mlp[-1].weight.mul_(0.1)
            self.mlp[-1].bias.zero_()
            self.mlp[-1].bias[:d] = -2.0

    def forward(self, gamma: Tensor, dose: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        d = self.d
        if self.hill:
            out = self.mlp(gamma)
            logits, emax, log_ec50, log_n, log_s = out[..., :5 * d].split(d, dim=-1)
            c = dose.clamp_min(0)[..., None]
            n = torch.exp(log_n.clamp(-3, 3))
            safe = torch.where(c > 0, c, torch.ones_like(c))  # no NaN gradient through the c = 0 branch
            frac = torch.where(c > 0, torch.sigmoid(n * (torch.log(safe) - log_ec50.clamp(-8, 8))), torch.zeros_like(log_n))
            mu = emax * frac
            log_s = log_s - 2.0 + torch.log(frac.clamp_min(1e-3))
            rest = out[..., 5 * d:]
        else:
            out = self.mlp(torch.cat([gamma, torch.log1p(dose.clamp_min(0))[..., None]], dim=-1))
            logits, mu, log_s = out[..., :3 * d].split(d, dim=-1)
            log_s = log_s - 2.0
            rest = out[..., 3 * d:]
        logscale = rest if self.noise else torch.zeros_like(mu)
        return logits, mu, log_s.clamp(-10, 3), logscale


class GIMNetwork(nn.Module):
    """θ + φ (+ per-context MAP latents ``[K, d]`` when ``n_contexts > 0``)."""

    def __init__(self, d: int, p: int, *, width: int, depth: int, hill: bool, noise: bool,
                 n_contexts: int = 0, use_head: bool = True) -> None:
        super().__init__()
        self.causal = CausalModel(d)
        self.head = GIMHead(p, d, width, depth, hill=hill, noise=noise)
        self.use_head = use_head
        if n_contexts > 0:
            self.ctx_logits = nn.Parameter(torch.full((n_contexts, d), -2.0))
            self.ctx_shift = nn.Parameter(torch.zeros(n_contexts, d))
            self.ctx_logscale = nn.Parameter(torch.zeros(n_contexts, d))
