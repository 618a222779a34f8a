"""Discrete-time DDPM schedules (Ho et al. 2020) and a stable "sum of products" helper.

Indexing: steps ``k = 1 … T``; ``betas[k − 1] = beta_k``, ``alphas_cumprod[k − 1] = ᾱ_k``;
``alpha_bar(k)`` accepts ``k ∈ {0, …, T}`` with ``ᾱ_0`` the data level (``1``, or ``1 − s`` for the
polynomial schedule). Continuous time ``t = k / T`` (t = 0 data, t = 1 noise), so
``x_k = sqrt(ᾱ_k)·x0 + sqrt(1 − ᾱ_k)·eps``.

``ᾱ`` is computed in float64 as ``exp(cumsum(log1p(−beta)))`` and ``1 − ᾱ`` as
``−expm1(log ᾱ)``, never by differences, so both stay positive and accurate for ``T = 1000``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from scigen.core.validation import as_tensor, check_num_steps

__all__ = ["DiscreteSchedule", "sum_of_products"]


def sum_of_products(weights: Tensor, factors: Tensor, inclusive: bool = False) -> Tensor:
    """``S_t = Σ_{s ≤ t} w_s · Π_{j = s + 1}^{t} f_j`` (``Π_{j = s}^{t}`` when ``inclusive``), all ``t``.

    Computes the linear recursion ``S_t = f_t S_{t−1} + w_t`` (exclusive form) without dividing by
    running products: ``Π_{j=s+1}^{t} f_j = exp(L_t − L_s)`` with ``L`` the cumulative sum of
    ``log f``, masked to ``s ≤ t`` (an O(T²) matrix, fine for T ≤ a few thousand). Used by NsDiff's
    ``β̃_t = Σ_s β_s Π_{j=s}^{t} α_j`` and ``G_t = Σ_s β_s² Π_{j=s+1}^{t} α_j`` (Ye et al. 2025, Eq. 7).

    Args:
        weights: ``[T]`` (``w_1 … w_T``). factors: ``[T]``, strictly positive.
    Returns:
        ``[T]`` tensor ``S_1 … S_T`` in the dtype of ``weights``.
    """
    w = as_tensor(weights, "weights")
    f = as_tensor(factors, "factors")
    if w.ndim != 1 or f.shape != w.shape:
        raise ValueError(
            f"weights and factors must be 1-D of equal length, got {tuple(w.shape)} and {tuple(f.shape)}"
        )
    if bool((f <= 0).any()):
        raise ValueError("factors must be strictly positive (their logs are summed)")
    logf = torch.log(f.double())
    L = torch.cumsum(logf, 0)
    Ls = L - logf if inclusive else L  # product starts at j = s (inclusive) or j = s + 1
    expo = L[:, None] - Ls[None, :]  # [t, s]
    mask = torch.ones_like(expo, dtype=torch.bool).tril()
    mat = torch.where(
        mask, torch.exp(torch.where(mask, expo, torch.zeros_like(expo))), torch.zeros_like(expo)
    )
    return (mat @ w.double()).to(w.dtype)


class DiscreteSchedule:
    """A ``T``-step DDPM noise schedule; build it with :meth:`linear`, :meth:`cosine`, :meth:`polynomial`
    or from explicit ``betas``."""

    def __init__(self, betas: Tensor, alpha_bar_0: float = 1.0, _log_alphas_cumprod: Tensor | None = None):
        b = as_tensor(betas, "betas").double()
        if b.ndim != 1 or b.numel() < 1:
            raise ValueError(f"betas must be a non-empty 1-D tensor, got shape {tuple(b.shape)}")
        if not bool(torch.isfinite(b).all()) or bool((b <= 0).any()) or bool((b >= 1).any()):
            raise ValueError("betas must be finite and lie in the open interval (0, 1)")
        if not 0.0 < alpha_bar_0 <= 1.0:
            raise ValueError(f"alpha_bar_0 must lie in (0, 1], got {alpha_bar_0}")
        self.T = int(b.numel())
        self.betas = b
        self.alphas = 1.0 - b
        self.alpha_bar_0 = float(alpha_bar_0)
        if _log_alphas_cumprod is None:
            _log_alphas_cumprod = math.log(alpha_bar_0) + torch.cumsum(torch.log1p(-b), 0)
        self.log_alphas_cumprod = _log_alphas_cumprod.double()
        self.alphas_cumprod = torch.exp(self.log_alphas_cumprod)
        self.one_minus_alphas_cumprod = -torch.expm1(self.log_alphas_cumprod)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def linear(cls, T: int = 1000, beta_start: float = 1e-4, beta_end: float = 0.02) -> DiscreteSchedule:
        """Ho et al. 2020: ``beta_k`` linear from ``beta_start`` (k = 1) to ``beta_end`` (k = T)."""
        T = check_num_steps(T)
        return cls(torch.linspace(beta_start, beta_end, T, dtype=torch.float64))

    @classmethod
    def cosine(cls, T: int = 1000, s: float = 0.008, max_beta: float = 0.999) -> DiscreteSchedule:
        """Nichol & Dhariwal 2021, Eq. 17: ``beta_k = 1 − ᾱ(k/T)/ᾱ((k−1)/T)`` clipped at ``max_beta``."""
        T = check_num_steps(T)
        k = torch.arange(T + 1, dtype=torch.float64)
        log_f = 2 * torch.log(torch.cos((k / T + s) / (1 + s) * math.pi / 2).clamp_min(1e-300))
        betas = -torch.expm1(log_f[1:] - log_f[:-1])  # ratio, not difference
        return cls(betas.clamp(max=max_beta))

    @classmethod
    def polynomial(
        cls, T: int = 1000, power: float = 2.0, precision: float = 1e-5, clip_value: float = 1e-3
    ) -> DiscreteSchedule:
        """Hoogeboom et al. 2022 "polynomial_<power>" (UniGEM: ``power = 2, precision = 1e-5``).

        ``a²_k = (1 − (k/T)^power)²`` for ``k = 0 … T``; step ratios ``a²_k / a²_{k−1}`` clipped to
        ``[clip_value, 1]`` and re-accumulated; finally ``ᾱ_k = (1 − 2·precision)·a²_k + precision``.
        So ``ᾱ_0 = 1 − precision`` and ``betas`` are derived as ``1 − ᾱ_k / ᾱ_{k−1}``.
        """
        T = check_num_steps(T)
        k = torch.arange(T + 1, dtype=torch.float64)
        a2 = (1 - (k / T) ** power) ** 2
        ratio = torch.ones_like(a2)
        ratio[1:] = (a2[1:] / a2[:-1]).nan_to_num(nan=0.0)
        a2 = torch.cumprod(ratio.clamp(clip_value, 1.0), 0)
        abar = (1 - 2 * precision) * a2 + precision
        log_abar = torch.log(abar)
        betas = -torch.expm1(log_abar[1:] - log_abar[:-1])
        return cls(betas, alpha_bar_0=float(abar[0]), _log_alphas_cumprod=log_abar[1:])

    # ------------------------------------------------------------------ lookups
    def _k(self, k) -> Tensor:
        k = torch.as_tensor(k)
        if k.is_floating_point() or k.dtype == torch.bool:
            raise TypeError(f"k must be an integer tensor of steps, got dtype {k.dtype}")
        if k.numel() and (int(k.min()) < 0 or int(k.max()) > self.T):
            raise ValueError(f"k must lie in [0, T={self.T}], got range [{int(k.min())}, {int(k.max())}]")
        return k.long()

    def alpha_bar(self, k) -> Tensor:
        """``ᾱ_k`` for integer ``k ∈ {0, …, T}`` (float64)."""
        full = torch.cat([torch.tensor([self.alpha_bar_0], dtype=torch.float64), self.alphas_cumprod])
        return full[self._k(k)]

    def signal(self, k) -> Tensor:
        """``sqrt(ᾱ_k)``, the ``alpha`` of the Gaussian path at ``t = k/T``."""
        return torch.sqrt(self.alpha_bar(k))

    def noise(self, k) -> Tensor:
        """``sqrt(1 − ᾱ_k)``, the ``sigma`` of the Gaussian path at ``t = k/T`` (no cancellation)."""
        full = torch.cat(
            [torch.tensor([1.0 - self.alpha_bar_0], dtype=torch.float64), self.one_minus_alphas_cumprod]
        )
        return torch.sqrt(full[self._k(k)])

    def log_snr(self, k) -> Tensor:
        """``log(ᾱ_k / (1 − ᾱ_k))`` (``+inf`` at ``k = 0`` when ``ᾱ_0 = 1``)."""
        return torch.log(self.alpha_bar(k)) - 2 * torch.log(self.noise(k))

    def times(self) -> Tensor:
        """``t_k = k / T`` for ``k = 0 … T`` (float64)."""
        return torch.arange(self.T + 1, dtype=torch.float64) / self.T

    def steps(self, n_steps: int | None = None) -> Tensor:
        """Decreasing integer steps ``T → 0`` for sampling with ``n_steps`` steps: all ``T + 1`` steps
        when ``n_steps`` is ``None`` or ``>= T``, else ``round(linspace(T, 0, n_steps + 1))`` with
        repeats removed (int64)."""
        if n_steps is None or (not isinstance(n_steps, bool) and isinstance(n_steps, int) and n_steps >= self.T):
            return torch.arange(self.T, -1, -1)
        n_steps = check_num_steps(n_steps, "n_steps")
        return torch.linspace(self.T, 0, n_steps + 1).round().long().unique_consecutive()

    def time_grid(self, n_steps: int | None = None, *, dtype: torch.dtype = torch.float64, device=None) -> Tensor:
        """The times ``k / T`` of :meth:`steps` (float64 by default, so they hit the grid exactly):
        ``times`` for ``scigen.core.samplers.sample(..., path=self.as_path())``."""
        return (self.steps(n_steps).double() / self.T).to(dtype=dtype, device=device)

    def as_path(self):
        """This schedule as a continuous Gaussian path (:class:`~scigen.core.paths.DiscreteSchedulePath`)."""
        from scigen.core.paths.discrete_path import DiscreteSchedulePath

        return DiscreteSchedulePath(self)

    def posterior(self, k) -> tuple[Tensor, Tensor, Tensor]:
        """Coefficients of ``q(x_{k−1} | x_k, x0) = N(c0·x0 + ck·x_k, var)`` for ``k ∈ {1, …, T}``
        (Ho et al. 2020, Eq. 6–7): ``c0 = sqrt(ᾱ_{k−1}) β_k / (1 − ᾱ_k)``,
        ``ck = sqrt(α_k)(1 − ᾱ_{k−1}) / (1 − ᾱ_k)``, ``var = β_k (1 − ᾱ_{k−1}) / (1 − ᾱ_k)``.
        Returns ``(c0, ck, var)`` in float64."""
        k = self._k(k)
        if k.numel() and int(k.min()) < 1:
            raise ValueError("posterior is defined for k in [1, T]")
        beta = self.betas[k - 1]
        one_m_prev = self.noise(k - 1) ** 2
        one_m = self.noise(k) ** 2
        c0 = torch.sqrt(self.alpha_bar(k - 1)) * beta / one_m
        ck = torch.sqrt(self.alphas[k - 1]) * one_m_prev / one_m
        return c0, ck, beta * one_m_prev / one_m

    def __repr__(self) -> str:
        return f"DiscreteSchedule(T={self.T}, alpha_bar_0={self.alpha_bar_0}, alpha_bar_T={float(self.alphas_cumprod[-1]):.3e})"
