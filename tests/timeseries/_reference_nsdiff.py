"""Frozen copy of NsDiff's own schedule, loss and sampler as they were before the move onto the engine
(``scigen.timeseries.nsdiff`` at commit b6cf7fa: ``schedule.py`` and ``process.py``).

Kept only as the reference of ``test_nsdiff_engine_equivalence.py`` (issue 13, item 4): the engine
path/loss/sampler must give the same loss on the same batch and noise and the same samples from the same
generator. Not used by the package.
"""
# ruff: noqa
from __future__ import annotations

import torch
from torch import Tensor

from scigen.core.paths import DiscreteSchedule, sum_of_products
from scigen.timeseries.nsdiff.model import rolling_variance
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

def sigma_y0(x: Tensor, y: Tensor, window: int) -> Tensor:
    """Oracle local variance: trailing variance (ddof 0, + 1e-7) of ``concat(X, Y)`` at the ``H`` future steps."""
    H = y.shape[1]
    return rolling_variance(torch.cat([x, y], dim=1), window)[:, -H:] + 1e-7


def antithetic_steps(batch: int, T: int, generator: torch.Generator | None, device) -> Tensor:
    """Steps in ``1 … T``: the first half uniform, the second half ``T + 1 − k`` (antithetic)."""
    k = torch.randint(1, T + 1, ((batch + 1) // 2,), generator=generator)
    return torch.cat([k, T + 1 - k])[:batch].to(device)


def nsdiff_loss(net, sched: NsDiffSchedule, x: Tensor, y: Tensor, window: int,
                generator: torch.Generator | None = None, *, reduce: bool = True):
    """The four-term loss (two in TMDM mode) and its parts (see module docstring).

    Returns ``(loss, {term: float})``, or with ``reduce=False`` the dict of term tensors
    ``eps, f`` (+ ``var, g`` in NsDiff mode)."""
    f, g = net.mean_var(x)
    tmdm = net.mode == "tmdm"
    s = torch.ones_like(y) if tmdm else sigma_y0(x, y, window)
    k = antithetic_steps(x.shape[0], sched.T, generator, x.device)
    eps = torch.randn(y.shape, generator=generator).to(y)
    fd, gd = f.detach(), g.detach()
    yk = sched.q_sample(k, y, fd, gd, s, eps)
    eps_hat, var_hat = net.denoiser(yk, k, fd, gd)
    parts = {"eps": ((eps_hat - eps) ** 2).mean(), "f": ((f - y) ** 2).mean()}
    if not tmdm:
        var_true = sched.posterior(k, gd, s)[3]
        keep = (k >= 2)
        r = var_true[keep] / var_hat[keep]
        parts["var"] = (r - torch.log(r) - 1).mean() if bool(keep.any()) else eps.new_zeros(())
        parts["g"] = ((g.sqrt() - s.sqrt()) ** 2).mean()
    if not reduce:
        return parts
    loss = sum(parts.values())
    return loss, {k_: float(v.detach()) for k_, v in parts.items()}


@torch.no_grad()
def sample_windows(net, sched: NsDiffSchedule, x: Tensor, n: int, *, sigma_source: str = "denoiser",
                   generator: torch.Generator | None = None, chunk: int = 4096, use_eps_error: bool = True) -> Tensor:
    """``n`` forecasts for each window of ``x [W, C, N]`` -> ``[n, W, H, N]`` (standardised units).

    ``use_eps_error=False`` samples with the paper's reverse variance (no ``Γ_k`` term)."""
    W = x.shape[0]
    f, g = net.mean_var(x)  # [W, H, N]
    f = f.repeat(n, 1, 1)
    g = g.repeat(n, 1, 1)
    outs = [_loop(net, sched, f[i : i + chunk], g[i : i + chunk], sigma_source, generator, use_eps_error)
            for i in range(0, f.shape[0], chunk)]
    return torch.cat(outs).view(n, W, *f.shape[1:])


def reverse_step(sched: NsDiffSchedule, step: int, y: Tensor, f: Tensor, g: Tensor, eps_hat: Tensor,
                 var_hat: Tensor | None, *, sigma_source: str = "denoiser", tmdm: bool = False,
                 eps_error: float = 0.0) -> tuple[Tensor, Tensor, Tensor]:
    """One reverse step from ``Y_step``: ``(mean, variance, Ŷ0)`` of ``Y_{step−1}`` (see module docstring).

    ``var_hat`` (the denoiser's posterior variance) is used when ``sigma_source="denoiser"`` and not
    ``tmdm``. ``eps_error`` is ``Γ_step``: the variance gains ``γ0² Σ2_step(s)/ᾱ_step · Γ_step``.
    At ``step = 1`` the mean is ``Ŷ0`` and the variance 0.
    """
    if tmdm:
        s = torch.ones_like(g)
    elif sigma_source == "g" or step == 1:
        s = g
    else:
        s = sched.sigma_from_posterior_var(step, g, var_hat)
    rab = sched._at(sched.alpha_bar, step, f).sqrt()
    s2 = sched.marginal_var(step, g, s)
    y0 = (y - (1 - rab) * f - s2.sqrt() * eps_hat) / rab
    if step == 1:
        return y0, torch.zeros_like(y0), y0
    g0, g1, g2, var = sched.posterior(step, g, s)
    if not tmdm and sigma_source == "denoiser":
        var = var_hat
    if eps_error:
        var = var + g0 * g0 * s2 / (rab * rab) * float(eps_error)
    return g0 * y0 + g1 * y + g2 * f, var, y0


def _loop(net, sched: NsDiffSchedule, f: Tensor, g: Tensor, sigma_source: str,
          generator: torch.Generator | None, use_eps_error: bool) -> Tensor:
    tmdm = net.mode == "tmdm"
    err = net.eps_error.detach().cpu().tolist() if use_eps_error else [0.0] * (sched.T + 1)
    y = f + g.sqrt() * torch.randn(f.shape, generator=generator).to(f)
    B = f.shape[0]
    for step in range(sched.T, 0, -1):
        k = torch.full((B,), step, dtype=torch.long, device=f.device)
        eps_hat, var_hat = net.denoiser(y, k, f, g)
        mean, var, _ = reverse_step(sched, step, y, f, g, eps_hat, var_hat, sigma_source=sigma_source, tmdm=tmdm,
                                    eps_error=err[step])
        y = mean if step == 1 else mean + var.sqrt() * torch.randn(f.shape, generator=generator).to(f)
    return y
