"""NsDiff's location-scale diffusion (Ye et al. 2025, "Non-stationary Diffusion", Eq. 5-9), discrete steps.

Steps ``k = 1 … T`` (continuous time ``t = k/T``: ``k = 0`` data, ``k = T`` the prior). With
``α_k = 1 − β_k`` and ``ᾱ_k = Π_{j≤k} α_j``, the forward kernel around the conditional mean ``f`` is

    q(Y_k | Y_{k−1}) = N(√α_k Y_{k−1} + (1 − √α_k) f,  Σ1_k),      Σ1_k = β_k² g + α_k β_k σ,

where ``g = g(X)`` is the predicted variance and ``σ = σ_{Y0}`` the true local variance. Unrolling,
``Σ2_k = α_k Σ2_{k−1} + Σ1_k`` gives the marginal (paper Eq. 7)

    q(Y_k | Y_0) = N(√ᾱ_k Y_0 + (1 − √ᾱ_k) f,  Σ2_k),   Σ2_k = G_k g + β̃_k σ,
    β̃_k = Σ_{s≤k} β_s Π_{j=s}^{k} α_j,     G_k = Σ_{s≤k} β_s² Π_{j=s+1}^{k} α_j,

both **computed as these sums** (:func:`scigen.core.paths.sum_of_products`); the reference code's
difference ``β̄ − β̃`` for ``G`` cancels catastrophically and goes negative (their issue #10). Since
``G_k + β̃_k = 1 − ᾱ_k``, ``g = σ = 1`` gives ``Σ2_k = 1 − ᾱ_k``: the TMDM / CARD forward process.

**Reaching the prior.** Sampling starts from ``N(f, g)``. The chain ends at ``N(√ᾱ_T Y0 +
(1 − √ᾱ_T) f, G_T g + β̃_T σ)``, which equals ``N(f, g)`` up to ``O(√ᾱ_T)`` when ``ᾱ_T → 0`` and
``σ = g`` (``g`` is trained to predict ``σ``). The reference defaults (``T = 20``, ``β ≤ 0.01``) give
``ᾱ_T ≈ 0.90`` — far from the prior — so :class:`NsDiffSchedule` reports ``alpha_bar_T`` and the
config rejects schedules with ``ᾱ_T`` above a tolerance.

**Posterior** ``q(Y_{k−1} | Y_k, Y_0)`` (product of the two Gaussians above, our derivation):
with ``D = α_k Σ2_{k−1} + Σ1_k``,

    variance  σ̃_k = Σ1_k Σ2_{k−1} / D,
    mean      γ0 Y_0 + γ1 Y_k + γ2 f,
    γ0 = √ᾱ_{k−1} Σ1_k / D,    γ1 = √α_k Σ2_{k−1} / D,
    γ2 = [(1 − √ᾱ_{k−1}) Σ1_k + √α_k (√α_k − 1) Σ2_{k−1}] / D.

The ``γ2`` term comes from ``(Y_k − (1 − √α_k) f)·√α_k Σ2_{k−1}/D``; the released code writes
``√α_k (α_k − 1) Σ2_{k−1}``, which breaks ``γ0 + γ1 + γ2 = 1`` (a constant series ``Y_0 = Y_k = f``
must stay at ``f``); we use ``(√α_k − 1)``. Tested against joint-Gaussian conditioning.

**Recovering σ from a predicted posterior variance** (NsDiff sampling): ``σ̃_k(s)`` is increasing in
``s``; :meth:`NsDiffSchedule.sigma_from_posterior_var` solves ``σ̃_k(s) = v`` — the quadratic
``b1 b2 s² + (a1 b2 + a2 b1 − v(α b2 + b1)) s + a1 a2 − v(α a2 + a1) = 0`` with ``Σ1 = a1 + b1 s``,
``Σ2_{k−1} = a2 + b2 s`` — for its positive root (clamped to ``s_min`` when ``v ≤ σ̃_k(0)``).
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core.paths import DiscreteSchedule, sum_of_products

__all__ = ["NsDiffSchedule"]


class NsDiffSchedule:
    """Schedule tensors indexed ``0 … T`` (index 0 = data level: ``ᾱ_0 = 1``, ``β̃_0 = G_0 = 0``).

    All per-step tensors are float64; methods accept an integer step ``k`` (int or ``[B]`` tensor,
    broadcast over the trailing dims of the other arguments) and return the dtype of ``like``.
    """

    def __init__(self, betas: Tensor):
        base = DiscreteSchedule(betas)
        self.T = base.T
        one, zero = torch.ones(1, dtype=torch.float64), torch.zeros(1, dtype=torch.float64)
        self.betas = torch.cat([zero, base.betas])
        self.alphas = torch.cat([one, base.alphas])
        self.alpha_bar = torch.cat([one, base.alphas_cumprod])
        self.btilde = torch.cat([zero, sum_of_products(base.betas, base.alphas, inclusive=True)])
        self.G = torch.cat([zero, sum_of_products(base.betas**2, base.alphas, inclusive=False)])

    @classmethod
    def linear(cls, T: int, beta_start: float, beta_end: float) -> NsDiffSchedule:
        return cls(DiscreteSchedule.linear(T, beta_start, beta_end).betas)

    @property
    def alpha_bar_T(self) -> float:
        """``ᾱ_T``: the weight of the data left at the end of the chain (0 = the prior is reached)."""
        return float(self.alpha_bar[-1])

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _at(arr: Tensor, k, like: Tensor) -> Tensor:
        k = torch.as_tensor(k, dtype=torch.long)
        v = arr.to(like.device)[k.to(like.device)]
        if v.ndim:
            v = v.reshape(v.shape + (1,) * (like.ndim - v.ndim))
        return v.to(like.dtype)

    # ------------------------------------------------------------------ forward
    def step_var(self, k, g: Tensor, s: Tensor) -> Tensor:
        """``Σ1_k = β_k² g + α_k β_k s``."""
        b, a = self._at(self.betas, k, g), self._at(self.alphas, k, g)
        return b * b * g + a * b * s

    def marginal_var(self, k, g: Tensor, s: Tensor) -> Tensor:
        """``Σ2_k = G_k g + β̃_k s``."""
        return self._at(self.G, k, g) * g + self._at(self.btilde, k, g) * s

    def marginal_mean(self, k, y0: Tensor, f: Tensor) -> Tensor:
        """``√ᾱ_k y0 + (1 − √ᾱ_k) f``."""
        r = self._at(self.alpha_bar, k, y0).sqrt()
        return r * y0 + (1 - r) * f

    def q_sample(self, k, y0: Tensor, f: Tensor, g: Tensor, s: Tensor, noise: Tensor) -> Tensor:
        """A draw of ``Y_k | Y_0`` with the given standard-normal ``noise``."""
        return self.marginal_mean(k, y0, f) + self.marginal_var(k, g, s).sqrt() * noise

    # ------------------------------------------------------------------ posterior
    def posterior(self, k, g: Tensor, s: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """``(γ0, γ1, γ2, σ̃_k)`` of ``q(Y_{k−1} | Y_k, Y_0)`` for ``k ≥ 1`` (see module docstring)."""
        k = torch.as_tensor(k, dtype=torch.long)
        s1 = self.step_var(k, g, s)
        s2 = self.marginal_var(k - 1, g, s)
        a = self._at(self.alphas, k, g)
        ra = a.sqrt()
        rab = self._at(self.alpha_bar, k - 1, g).sqrt()
        D = a * s2 + s1
        g0 = rab * s1 / D
        g1 = ra * s2 / D
        g2 = ((1 - rab) * s1 + ra * (ra - 1) * s2) / D
        return g0, g1, g2, s1 * s2 / D

    def sigma_from_posterior_var(self, k, g: Tensor, v: Tensor, s_min: float = 1e-6) -> Tensor:
        """The ``s ≥ s_min`` with ``σ̃_k(s) = v`` (``k ≥ 2``; see module docstring)."""
        a = self._at(self.alphas, k, g)
        b = self._at(self.betas, k, g)
        a1, b1 = b * b * g, a * b
        a2, b2 = self._at(self.G, torch.as_tensor(k) - 1, g) * g, self._at(self.btilde, torch.as_tensor(k) - 1, g)
        qa = b1 * b2
        qb = a1 * b2 + a2 * b1 - v * (a * b2 + b1)
        qc = a1 * a2 - v * (a * a2 + a1)
        disc = (qb * qb - 4 * qa * qc).clamp_min(0).sqrt()
        # numerically stable positive root of qa s² + qb s + qc (qa > 0)
        root = torch.where(qb >= 0, -2 * qc / (qb + disc).clamp_min(1e-300), (-qb + disc) / (2 * qa))
        return root.clamp_min(s_min)
