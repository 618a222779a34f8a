"""NsDiff's training loss and ancestral sampler (Ye et al. 2025, Alg. 1-2), shared by TMDM mode.

Loss for a batch of windows ``(X, Y)`` with antithetic steps ``k`` and ``ε ~ N(0, I)``:

    L = ‖ε − ε̂‖² + mean(σ̃/σ̂ − log(σ̃/σ̂) − 1) + ‖f(X) − Y‖² + ‖√g(X) − √σ_Y0‖²,

``σ̃`` the true posterior variance (schedule, with the oracle ``σ_Y0``: trailing variance over
``rolling_length`` steps of ``concat(X, Y)`` at the future positions) and ``σ̂`` the denoiser's. The
variance term is the Gaussian KL in the variance (the ``−1`` makes it 0 at the optimum) and is
skipped at ``k = 1`` where ``σ̃ = 0``. TMDM mode sets ``g = σ_Y0 = 1`` and keeps only the ε and
``f`` terms. Ours: ``f`` and ``g`` enter the diffusion terms detached (they learn from their own
terms), all three networks share one optimiser as in the reference.

Sampling: ``Y_T = f + √g·z``; for ``k = T … 2``: ``(ε̂, σ̂) = denoiser``; ``s`` = the σ_Y0 whose
posterior variance is ``σ̂`` (``sigma_source="denoiser"``) or ``g`` (``"g"``); ``Ŷ0 = (Y_k − (1 −
√ᾱ_k) f − √Σ2_k(s) ε̂)/√ᾱ_k``; ``Y_{k−1} = γ0 Ŷ0 + γ1 Y_k + γ2 f + √v z``. The last step returns ``Ŷ0``.

**Reverse variance (ours; Analytic-DPM, Bao et al. ICLR 2022, Thm. 1).** The paper uses
``v = σ̂ ≈ σ̃_k``, the variance of ``q(Y_{k−1} | Y_k, Y_0)`` — correct only if ``Y_0`` were known.
The exact reverse kernel is ``p(Y_{k−1} | Y_k) = ∫ q(Y_{k−1} | Y_k, Y_0) p(Y_0 | Y_k) dY_0``, whose
variance is ``σ̃_k + γ0² Var(Y_0 | Y_k)`` (law of total variance; ``γ0`` multiplies ``Y_0`` in the
posterior mean). From the forward marginal ``Y_0 = (Y_k − (1 − √ᾱ_k) f − √Σ2_k ε)/√ᾱ_k``, so
``Var(Y_0 | Y_k) = Σ2_k/ᾱ_k · Var(ε | Y_k)``, and ``E[(ε − ε̂)²] = E Var(ε | Y_k)`` for the
MSE-optimal ``ε̂``. We therefore sample with

    v = σ̃_k + γ0² · Σ2_k(s)/ᾱ_k · Γ_k,     Γ_k = E[(ε − ε̂_k)²]

(``σ̂`` in place of ``σ̃_k`` for ``sigma_source="denoiser"``), ``Γ_k`` measured per step on the
training windows after fitting (:func:`estimate_eps_error`, stored in ``NsDiffNet.eps_error``).
Dropping the ``γ0²`` term under-disperses: with the *exact* ε̂ on Gaussian data ``N(f, 2.5)``
the plain chain ends at variance 2.17 (``T = 50``, β → 0.3) or 1.90 (``T = 20``, β → 0.5); with
it, 2.50 (tested). ``eps_error = 0`` (``reverse_variance="posterior"``) is the paper's sampler.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from scigen.timeseries.nsdiff.model import Denoiser, NSTransformer, VarianceNet, rolling_variance
from scigen.timeseries.nsdiff.schedule import NsDiffSchedule

__all__ = ["NsDiffNet", "estimate_eps_error", "nsdiff_loss", "reverse_step", "sample_windows", "sigma_y0"]


class NsDiffNet(nn.Module):
    """``f`` (NS-Transformer), ``g`` (variance net; unused in TMDM mode) and the denoiser."""

    def __init__(self, cfg, n_vars: int):
        super().__init__()
        self.mode = cfg.mode
        self.f = NSTransformer(n_vars, cfg.context_length, cfg.horizon, label_len=cfg.label, d_model=cfg.d_model,
                               n_heads=cfg.n_heads, e_layers=cfg.e_layers, d_layers=cfg.d_layers, d_ff=cfg.d_ff,
                               dropout=cfg.dropout, projector_hidden=cfg.projector_hidden)
        self.g = VarianceNet(cfg.context_length, cfg.horizon, cfg.rolling_length, cfg.g_hidden)
        self.denoiser = Denoiser(n_vars, cfg.diffusion_steps, cfg.denoiser_hidden)
        #: Γ_k = E[(ε − ε̂_k)²] per step 0 … T (0 = the paper's reverse variance; see module docstring)
        self.register_buffer("eps_error", torch.zeros(cfg.diffusion_steps + 1))

    def mean_var(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """``(f(X), g(X))``; ``g ≡ 1`` in TMDM mode."""
        f = self.f(x)
        g = torch.ones_like(f) if self.mode == "tmdm" else self.g(x)
        return f, g


def sigma_y0(x: Tensor, y: Tensor, window: int) -> Tensor:
    """Oracle local variance: trailing variance (ddof 0, + 1e-7) of ``concat(X, Y)`` at the ``H`` future steps."""
    H = y.shape[1]
    return rolling_variance(torch.cat([x, y], dim=1), window)[:, -H:] + 1e-7


def antithetic_steps(batch: int, T: int, generator: torch.Generator | None, device) -> Tensor:
    """Steps in ``1 … T``: the first half uniform, the second half ``T + 1 − k`` (antithetic)."""
    k = torch.randint(1, T + 1, ((batch + 1) // 2,), generator=generator)
    return torch.cat([k, T + 1 - k])[:batch].to(device)


def nsdiff_loss(net: NsDiffNet, sched: NsDiffSchedule, x: Tensor, y: Tensor, window: int,
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
def estimate_eps_error(net: NsDiffNet, sched: NsDiffSchedule, x: Tensor, y: Tensor, window: int, *,
                       draws: int = 2, generator: torch.Generator | None = None) -> Tensor:
    """``Γ_k = E[(ε − ε̂_k)²]`` for ``k = 0 … T`` (``Γ_0 = 0``) on windows ``(x, y)``: ``[T + 1]`` float64.

    ``Y_k`` is drawn from the training forward process (oracle ``σ_Y0``; TMDM: ``g = σ = 1``) with
    ``draws`` noises per window; the mean is over windows, draws, horizon and variables.
    """
    was = net.training
    net.eval()
    try:
        f, g = net.mean_var(x)
        s = torch.ones_like(y) if net.mode == "tmdm" else sigma_y0(x, y, window)
        out = torch.zeros(sched.T + 1, dtype=torch.float64)
        for step in range(1, sched.T + 1):
            k = torch.full((x.shape[0],), step, dtype=torch.long, device=x.device)
            tot = 0.0
            for _ in range(draws):
                eps = torch.randn(y.shape, generator=generator).to(y)
                eps_hat, _ = net.denoiser(sched.q_sample(k, y, f, g, s, eps), k, f, g)
                tot += float(((eps_hat - eps) ** 2).mean())
            out[step] = tot / draws
        return out
    finally:
        net.train(was)


@torch.no_grad()
def sample_windows(net: NsDiffNet, sched: NsDiffSchedule, x: Tensor, n: int, *, sigma_source: str = "denoiser",
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


def _loop(net: NsDiffNet, sched: NsDiffSchedule, f: Tensor, g: Tensor, sigma_source: str,
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
