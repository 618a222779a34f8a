"""CSGMM: a Gaussian mixture over sparse dictionary coefficients, fitted by EM on compressed observations.

Böck et al., ICML 2025, Sec. 3.1 (and the BSD-3 predecessor, Böck et al., NeurIPS 2024, Alg. 1):
``k ~ Cat(π)``, ``s | k ~ CN(0, diag γ_k)``, ``y | s ~ CN(Φ s, ζ_i I)`` with ``Φ = A D`` and a noise
variance ``ζ_i`` per observation. EM on ``{y_i}`` only (no channel is ever seen):

* E-step: ``r_ik ∝ π_k CN(y_i; 0, Φ diag(γ_k) Φᴴ + ζ_i I)``, and per ``(i, k)`` the posterior mean
  ``μ_ik`` and variances ``c_ik`` of ``s`` (:func:`scigen.wireless.gaussian.diag_prior_posterior`);
* M-step: ``γ_k = Σ_i r_ik (|μ_ik|² + c_ik) / Σ_i r_ik`` (floored at ``gamma_floor``), ``π_k = Σ_i r_ik / n``.

The Kronecker variant (paper Sec. 3.1, "2-D grids") constrains ``γ_k = γ_k^(1) ⊗ γ_k^(2) ⊗ …`` over the
non-trivial grid axes; its M-step is coordinate ascent on the same expected complete log-likelihood,
``γ^(f)[a] = mean_{j ∈ a} E_kj / Π_{g≠f} γ^(g)(j)`` (a generalised EM: each update raises the bound).

Why this loop lives here and not in the engine. :func:`scigen.core.train.fit` is the engine's one
trainer, and it is a *gradient* trainer: a ``loss_fn(module, batch)``, an optimiser, mini-batches, EMA,
clipping, Lightning checkpoints. EM fits none of that: every iteration is a full-batch closed-form
M-step (``γ_k`` is *set* to a posterior second moment, not stepped along a gradient), specific to this
model's conjugate prior. The engine has no closed-form / EM fitting verb (``docs/engine-api.md``,
"Training"), and no other scigen system needs one: GIM's "MAP/EM" mode (scigen.singlecell) is joint
gradient ascent through ``fit``, and the other EM in this package, per-observation SBL
(:func:`scigen.wireless.baselines.sbl_estimate`), is an estimator, not a trained model. A generic
"EM verb" with a single user would be an abstraction without a second case, so the iteration stays
here, with what it does share taken from the engine: seeding (``System.generator``), the training
history (``TrainingHistory.extend`` of an :class:`EMResult` shaped like ``FitResult``), saving
(``System.save``, atomic with checksums), and the option validation of ``TrainingOptions.fit_kwargs``
— options that only a gradient trainer can honour (``lr``, ``checkpoint_dir``, ``resume``, ...) are
refused (:data:`EM_OPTIONS`; ``resume=True`` too: there is no EM checkpoint to resume). Each EM iteration is one training step of the system's history (loss =
−mean log-likelihood per pilot before that iteration's update); an EM run is seconds to minutes, so it
has no mid-run checkpoints (a second ``fit`` continues from the saved mixture).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from scigen.wireless.gaussian import diag_prior_posterior

__all__ = ["EM_OPTIONS", "CSGMMNet", "EMResult", "em_step", "init_csgmm", "mixture_log_lik", "responsibilities"]

#: the per-call training options an EM fit takes (besides ``max_steps`` and ``val_data``); ``checkpoint_dir``
#: is accepted because ``scigen … train`` always passes one, but EM writes no mid-run checkpoint there
#: (the run is saved whole by ``save``); any other option passes only as ``None`` / ``False`` (``logger=None``,
#: ``resume=False``: they ask for nothing)
EM_OPTIONS = frozenset({"seed", "val_every", "progress", "checkpoint_dir"})


class CSGMMNet(nn.Module):
    """Buffers ``log_pi [K]`` and ``gamma [K, S]`` (and, Kronecker, one ``factor{f} [K, G_f]`` per grid axis)."""

    def __init__(self, n_components: int, grid_shape: tuple[int, ...], kronecker: bool = False) -> None:
        super().__init__()
        self.grid_shape = tuple(int(g) for g in grid_shape)
        self.kronecker = bool(kronecker)
        S = math.prod(self.grid_shape)
        self.register_buffer("log_pi", torch.full((n_components,), -math.log(n_components), dtype=torch.float64))
        self.register_buffer("gamma", torch.ones(n_components, S, dtype=torch.float64))
        if self.kronecker:
            for f, g in enumerate(self.grid_shape):
                self.register_buffer(f"factor{f}", torch.ones(n_components, g, dtype=torch.float64))

    @property
    def n_components(self) -> int:
        return int(self.log_pi.shape[0])

    def factors(self) -> list[Tensor]:
        return [getattr(self, f"factor{f}") for f in range(len(self.grid_shape))]

    def set_factors(self, factors: list[Tensor]) -> None:
        K = self.n_components
        full = factors[0]
        for f, fac in enumerate(factors):
            getattr(self, f"factor{f}").copy_(fac)
            if f:
                full = (full[:, :, None] * fac[:, None, :]).reshape(K, -1)
        self.gamma.copy_(full)


def mixture_log_lik(log_lik: Tensor, log_pi: Tensor) -> Tensor:
    """``log Σ_k π_k p(y_i | k)`` per observation ``[B]`` from ``log_lik [B, K]``."""
    return torch.logsumexp(log_lik + log_pi[None], dim=1)


def responsibilities(log_lik: Tensor, log_pi: Tensor) -> Tensor:
    """``p(k | y_i) [B, K]``."""
    return torch.softmax(log_lik + log_pi[None], dim=1)


def init_csgmm(net: CSGMMNet, y: Tensor, zeta: Tensor, phi: Tensor, generator: torch.Generator) -> None:
    """π uniform; γ_k ~ U(0, 1) rescaled so that ``E‖Φ s‖² + M ζ`` matches the observed ``mean ‖y‖²``
    (the paper normalises rows of γ to sum S for unit-power channels; this is that, for any scale)."""
    K, S = net.gamma.shape
    signal = float((y.abs() ** 2).sum(1).mean() - y.shape[1] * zeta.mean())
    g0 = max(signal, 1e-3 * float((y.abs() ** 2).sum(1).mean())) / float((phi.abs() ** 2).sum())
    u = torch.rand(K, S, generator=generator, dtype=torch.float64, device=y.device) + 1e-3
    net.log_pi.fill_(-math.log(K))
    if net.kronecker:
        facs = [torch.rand(K, g, generator=generator, dtype=torch.float64, device=y.device) + 0.5
                for g in net.grid_shape]
        full = facs[0]
        for f in facs[1:]:
            full = (full[:, :, None] * f[:, None, :]).reshape(K, -1)
        facs[0] = facs[0] * (g0 / full.mean(1, keepdim=True))
        net.set_factors(facs)
    else:
        net.gamma.copy_(u / u.mean(1, keepdim=True) * g0)


def _kron_m_step(net: CSGMMNet, E: Tensor, floor: float, inner: int) -> None:
    """Coordinate ascent of ``Σ_j −log γ_j − E_j / γ_j`` over the Kronecker factors (module docstring)."""
    K = E.shape[0]
    shape = net.grid_shape
    Eg = E.reshape(K, *shape)
    facs = [f.clone() for f in net.factors()]
    axes = list(range(len(shape)))
    for _ in range(inner):
        for f in axes:
            others = torch.ones_like(Eg)
            for g in axes:
                if g != f:
                    view = [K] + [1] * len(shape)
                    view[1 + g] = shape[g]
                    others = others * facs[g].reshape(view)
            red = [1 + g for g in axes if g != f]
            q = Eg / others
            facs[f] = (q.mean(dim=red) if red else q).clamp_min(floor)
    net.set_factors(facs)


@dataclass
class EMResult:
    """What :func:`run_em` reports, shaped like the engine's ``FitResult`` for ``TrainingHistory.extend``."""

    losses: list[float] = field(default_factory=list)
    val_losses: list[tuple[int, float]] = field(default_factory=list)
    best_step: int | None = None
    stopped_step: int | None = None


@torch.no_grad()
def em_step(net: CSGMMNet, y: Tensor, zeta: Tensor, phi: Tensor, *, floor: float = 1e-7, inner: int = 20) -> float:
    """One EM iteration in place; returns the mean log-likelihood ``(1/n) Σ_i log p(y_i)`` at the
    parameters *before* the update (so successive returns never decrease, up to the floor)."""
    post = diag_prior_posterior(y, phi, net.gamma, zeta)
    r = responsibilities(post.log_lik, net.log_pi)  # [B, K]
    ll = float(mixture_log_lik(post.log_lik, net.log_pi).mean())
    Nk = r.sum(0)  # [K]
    second = post.mean.abs() ** 2 + post.var  # E|s|² per (i, k) [B, K, S]
    E = torch.einsum("bk,bks->ks", r, second) / Nk.clamp_min(1e-300)[:, None]
    net.log_pi.copy_(torch.log((Nk / Nk.sum()).clamp_min(1e-300)))
    if net.kronecker:
        _kron_m_step(net, E, floor, inner)
    else:
        net.gamma.copy_(E.clamp_min(floor))
    return ll


@torch.no_grad()
def mean_log_lik(net: CSGMMNet, y: Tensor, zeta: Tensor, phi: Tensor) -> float:
    """``(1/n) Σ_i log p(y_i)`` under the current mixture."""
    post = diag_prior_posterior(y, phi, net.gamma, zeta, moments=False)
    return float(mixture_log_lik(post.log_lik, net.log_pi).mean())


def run_em(net: CSGMMNet, y: Tensor, zeta: Tensor, phi: Tensor, *, max_steps: int, tol: float, floor: float,
           inner: int, val: tuple[Tensor, Tensor, Tensor] | None = None, val_every: int = 10,
           progress: bool | None = None) -> EMResult:
    """Up to ``max_steps`` EM iterations; stop once the mean log-likelihood gain is below ``tol`` (paper: 1e-3).
    Losses are ``−mean log-likelihood / M`` (nats per pilot). ``progress``: a bar over the iterations
    (``None``: only on a terminal), the engine's :func:`~scigen.core.samplers.progress_bar`."""
    from scigen.core.samplers import progress_bar

    M = y.shape[1]
    res = EMResult()
    prev = -math.inf
    bar = progress_bar(max_steps, "CSGMM EM", progress)
    try:
        for step in range(max_steps):
            bar.advance()
            ll = em_step(net, y, zeta, phi, floor=floor, inner=inner)
            res.losses.append(-ll / M)
            if val is not None and (step + 1) % val_every == 0:
                res.val_losses.append((step, -mean_log_lik(net, *val) / val[0].shape[1]))
            if ll - prev < tol and step > 0:
                res.stopped_step = step
                break
            prev = ll
    finally:
        bar.close()
    return res
