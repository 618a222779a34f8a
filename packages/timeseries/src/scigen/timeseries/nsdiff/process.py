"""NsDiff's networks bound to its path, and its training loss (Ye et al. 2025, Alg. 1), shared by TMDM mode.

**Path** (:func:`nsdiff_path`): the engine's two-source :meth:`scigen.core.paths.LocationScalePath.nsdiff`
on a linear :class:`~scigen.core.paths.DiscreteSchedule`: ``Y_k = f + √ᾱ_k (Y_0 − f) + √Σ2_k ε`` with
``Σ2_k = G_k g + β̃_k σ_Y0`` (``G``, ``β̃`` as sums), step ``k`` at ``t = k/T``. TMDM: ``g = σ_Y0 = 1``.

**Loss** for a batch of windows ``(X, Y)`` with antithetic steps ``k`` and ``ε ~ N(0, I)``:

    L = ‖ε − ε̂‖² + mean(σ̃/σ̂ − log(σ̃/σ̂) − 1) + ‖f(X) − Y‖² + ‖√g(X) − √σ_Y0‖²,

``σ̃`` the true posterior variance (the engine path's :meth:`~scigen.core.paths.LocationScalePath.posterior`
with the oracle ``σ_Y0``: trailing variance over ``rolling_length`` steps of ``concat(X, Y)`` at the
future positions) and ``σ̂`` the denoiser's. The ``ε`` term is the engine's
:func:`scigen.core.losses.denoising_loss` on that path. **Exception (stays here):** the other three
terms — the Gaussian KL in the learned posterior variance (the ``−1`` makes it 0 at the optimum;
skipped at ``k = 1`` where ``σ̃ = 0``) and the regressions of ``f`` and ``g`` on ``Y`` and ``σ_Y0`` —
have no engine counterpart: the engine's losses regress one prediction of a Gaussian path, not a
learned variance or the path's own location and scale. TMDM keeps only the ``ε`` and ``f`` terms.
Ours: ``f`` and ``g`` enter the diffusion terms detached (they learn from their own terms); all three
networks share one optimiser as in the reference.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from scigen.core import streams
from scigen.core.losses import denoising_loss
from scigen.core.paths import DiscreteSchedule, LocationScalePath
from scigen.timeseries.forecasters.nstransformer import NSTransformer
from scigen.timeseries.nsdiff.model import Denoiser, VarianceNet, rolling_variance

__all__ = ["NsDiffNet", "antithetic_steps", "estimate_eps_error", "nsdiff_loss", "nsdiff_path", "sigma_y0",
           "variance_terms"]


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
        #: Γ_k = E[(ε − ε̂_k)²] per step 0 … T (0 = the paper's reverse variance; see sampling.py)
        self.register_buffer("eps_error", torch.zeros(cfg.diffusion_steps + 1))

    def mean_var(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """``(f(X), g(X))``; ``g ≡ 1`` in TMDM mode."""
        f = self.f(x)
        g = torch.ones_like(f) if self.mode == "tmdm" else self.g(x)
        return f, g


def nsdiff_path(cfg) -> LocationScalePath:
    """The engine path of a config: NsDiff's two-source chain on the linear β schedule."""
    return LocationScalePath.nsdiff(DiscreteSchedule.linear(cfg.diffusion_steps, cfg.beta_start, cfg.beta_end))


def steps_of(path: LocationScalePath) -> int:
    """``T``, the number of diffusion steps of ``path``."""
    return int(path.tables[0].shape[0] - 1)


def sigma_y0(x: Tensor, y: Tensor, window: int) -> Tensor:
    """Oracle local variance: trailing variance (ddof 0, + 1e-7) of ``concat(X, Y)`` at the ``H`` future steps."""
    H = y.shape[1]
    return rolling_variance(torch.cat([x, y], dim=1), window)[:, -H:] + 1e-7


def antithetic_steps(batch: int, T: int, generator: torch.Generator | None, device) -> Tensor:
    """Steps in ``1 … T``: the first half uniform, the second half ``T + 1 − k`` (antithetic). Under per-sample
    streams (``fit(rng="per_sample")``) samples ``2m`` and ``2m + 1`` form the pairs by key (batch-independent)."""
    keyed = streams.as_streams(generator)
    if keyed is not None:
        u, odd = keyed.paired_rand(device=device, dtype=torch.float64)
        k = (1 + torch.floor(u * T)).to(torch.int64).clamp_(max=T)
        return torch.where(odd, T + 1 - k, k)
    k = torch.randint(1, T + 1, ((batch + 1) // 2,), generator=generator, device=device)
    return torch.cat([k, T + 1 - k])[:batch]


def _oracle(net: NsDiffNet, x: Tensor, y: Tensor, window: int) -> Tensor:
    return torch.ones_like(y) if net.mode == "tmdm" else sigma_y0(x, y, window)


def nsdiff_loss(net: NsDiffNet, path: LocationScalePath, x: Tensor, y: Tensor, window: int,
                generator: torch.Generator | None = None, *, reduce: bool = True):
    """The four-term loss (two in TMDM mode) and its parts (see module docstring).

    Returns ``(loss, {term: float})``, or with ``reduce=False`` the dict of term tensors
    ``eps, f`` (+ ``var, g`` in NsDiff mode)."""
    f, g = net.mean_var(x)
    s = _oracle(net, x, y, window)
    T = steps_of(path)
    k = antithetic_steps(x.shape[0], T, generator, x.device)
    eps = streams.randn(y.shape, generator=generator, device=y.device, dtype=y.dtype)
    fd, gd = f.detach(), g.detach()
    out: dict[str, Tensor] = {}

    def eps_model(y_k: Tensor, t: Tensor) -> Tensor:  # the denoiser embeds the integer step k
        out["eps"], out["var"] = net.denoiser(y_k, k, fd, gd)
        return out["eps"]

    tk = k.double() / T
    parts = {"eps": denoising_loss(eps_model, y, path, "eps", t=tk.to(y.dtype), noise=eps, mu=fd, var=gd, var2=s),
             "f": ((f - y) ** 2).mean()}
    if net.mode != "tmdm":
        var_true = path.posterior(tk, (k - 1).double() / T, gd, s)[2]
        parts.update(variance_terms(var_true, out["var"], k >= 2, g, s))
    if not reduce:
        return parts
    return sum(parts.values()), {name: float(v.detach()) for name, v in parts.items()}


def variance_terms(var_true: Tensor, var_hat: Tensor, keep: Tensor, g: Tensor, s: Tensor) -> dict[str, Tensor]:
    """NsDiff's own terms (module docstring): ``var``, the Gaussian KL ``mean(r − log r − 1)`` of the learned
    posterior variance (``r = σ̃/σ̂``, windows with ``keep``, i.e. ``k ≥ 2``), and ``g``, ``‖√g − √σ_Y0‖²``."""
    ratio = var_true[keep] / var_hat[keep]
    kl = (ratio - torch.log(ratio) - 1).mean() if bool(keep.any()) else var_hat.new_zeros(())
    return {"var": kl, "g": ((g.sqrt() - s.sqrt()) ** 2).mean()}


@torch.no_grad()
def estimate_eps_error(net: NsDiffNet, path: LocationScalePath, x: Tensor, y: Tensor, window: int, *,
                       draws: int = 2, generator: torch.Generator | None = None) -> Tensor:
    """``Γ_k = E[(ε − ε̂_k)²]`` for ``k = 0 … T`` (``Γ_0 = 0``) on windows ``(x, y)``: ``[T + 1]`` float64.

    ``Y_k`` is drawn from the training forward process (oracle ``σ_Y0``; TMDM: ``g = σ = 1``) with
    ``draws`` noises per window; the mean is over windows, draws, horizon and variables.
    """
    was = net.training
    net.eval()
    try:
        f, g = net.mean_var(x)
        s = _oracle(net, x, y, window)
        T = steps_of(path)
        out = torch.zeros(T + 1, dtype=torch.float64)
        for step in range(1, T + 1):
            k = torch.full((x.shape[0],), step, dtype=torch.long, device=x.device)
            tot = 0.0
            for _ in range(draws):
                eps = torch.randn(y.shape, generator=generator, device=y.device, dtype=y.dtype)
                y_k = path.marginal(y, torch.tensor(step / T, dtype=torch.float64), f, g, eps, var2=s)
                eps_hat, _ = net.denoiser(y_k, k, f, g)
                tot += float(((eps_hat - eps) ** 2).mean())
            out[step] = tot / draws
        return out
    finally:
        net.train(was)
