"""GIM's training objectives over a minibatch of contexts (the loss that the engine's ``fit`` minimises).

Paper (Schneider et al., ICML 2025): maximise the marginal likelihood of every context
``Σ_k log ∫ p_θ(D_k | I, ψ) p_φ(I, ψ | γ_k) dI dψ`` jointly in θ and φ; prediction uses a MAP
approximation. How the integral is approximated could not be read; both variants below are **ours**
(``shared/research/singlecell.md`` §1.2, blueprint step 4):

* ``"mc"``: ``S`` reparameterised draws ``I ~ RelaxedBernoulli(σ(logits), τ)`` (Maddison et al. 2017;
  or a Gumbel-softmax one-hot for single-target priors, Jang et al. 2017) and ``ψ = μ + s·ε``; the
  context term is ``log (1/S) Σ_s exp ℓ_k(I_s, ψ_s)`` (an importance-weighted lower bound, Burda et al.
  2016).
* ``"map"`` with the linear-Gaussian SCM: EM with an exact, closed-form E-step over every context's
  ``(I, ψ)`` and one optimiser step on the expected complete-data log joint per E-step
  (:mod:`scigen.singlecell.gim.em`); ``use_head=False`` is the "per-context intervention estimation"
  baseline (a fixed prior instead of g_φ).
* ``"map"`` with the SDE backend (KDS is no likelihood, so no E-step): joint ascent over per-context
  latents ``(Î_k, ψ̂_k)`` (``Î_k = σ(ℓ̂_k)`` relaxed); the loss is ``−ℓ_k(Î_k, ψ̂_k) − log p_φ(Î_k | γ_k) −
  Σ_j Î_kj log N(ψ̂_kj; μ_φ, s²)`` with a fixed prior scale ``s`` (``map_prior_scale``: a learned one
  collapses to zero at the MAP). E- and M-steps are taken simultaneously by one optimiser.

With the SDE backend ``ℓ_k`` is replaced by ``−kds_weight · n_k · KDS_k`` and Monte Carlo draws are
averaged instead of log-mean-exp'd (KDS is no likelihood). Every mode adds
``l1·‖W‖₁ + acyclic·(h + h²/2)`` (NOTEARS ``h``) and ``target_l1 · mean P(target)``; the sum is divided
by the number of cells in the batch. The control context (``I = 0``) is added to every batch.
"""

from __future__ import annotations

import dataclasses
import math

import torch
from torch import Tensor

from scigen.core import streams
from scigen.core.errors import InvalidInputError
from scigen.singlecell.gim.em import em_terms, head_fit
from scigen.singlecell.gim.scm import gaussian_loglik, kds, notears_h, sde_drift_matrix

__all__ = ["GIMTensors", "em_prior", "gim_loss", "relaxed_targets"]


@dataclasses.dataclass
class GIMTensors:
    """Training contexts as tensors (standardised data). ``cells``/``mask`` only for the SDE backend."""

    n: Tensor            # [K]
    s1: Tensor           # [K, d]
    s2: Tensor           # [K, d, d]
    gamma: Tensor        # [K, p]
    dose: Tensor         # [K]
    control: Tensor      # [K] bool
    cells: Tensor | None = None   # [K, n_max, d]
    mask: Tensor | None = None    # [K, n_max]

    def to(self, device) -> GIMTensors:
        return GIMTensors(**{f.name: (None if getattr(self, f.name) is None else getattr(self, f.name).to(device))
                             for f in dataclasses.fields(self)})


def relaxed_targets(logits: Tensor, samples: int, tau: float, prior: str, generator=None, *,
                    keyed: bool = False) -> Tensor:
    """``[S, ..., d]`` relaxed draws: Bernoulli (binary concrete) or a Gumbel-softmax one-hot. ``keyed``: row ``i``
    of ``logits [B, d]`` draws its ``S`` uniforms from sample ``i`` of the active per-sample streams
    (:mod:`scigen.core.streams`)."""
    shape = (samples, *logits.shape)
    if keyed:
        u = streams.rand((logits.shape[0], samples, *logits.shape[1:]), dtype=logits.dtype,
                         device=logits.device).transpose(0, 1)
    else:
        u = torch.rand(shape, dtype=logits.dtype, device=logits.device, generator=generator)
    u = u.clamp(1e-6, 1 - 1e-6)
    if prior == "categorical":
        g = -torch.log(-torch.log(u))
        return torch.softmax((logits + g) / tau, dim=-1)
    return torch.sigmoid((logits + torch.log(u) - torch.log1p(-u)) / tau)


def _targets_from_logits(logits: Tensor, prior: str) -> Tensor:
    return torch.softmax(logits, -1) if prior == "categorical" else torch.sigmoid(logits)


def _context_fit(net, t: GIMTensors, idx: Tensor, shift: Tensor, logscale: Tensor, backend: str,
                 kds_weight: float, bandwidth: float) -> Tensor:
    """``ℓ_k`` for the contexts ``idx`` (``[..., B]``): exact log-likelihood, or ``−w·n·KDS``."""
    cm = net.causal
    if backend == "linear_gaussian":
        return gaussian_loglik(cm.w, cm.b, cm.log_sigma, t.n[idx], t.s1[idx], t.s2[idx], shift, logscale)
    m = sde_drift_matrix(cm.w, cm.log_decay)
    sig2 = torch.exp(2 * (cm.log_sigma + logscale))
    return -kds_weight * t.n[idx] * kds(t.cells[idx], t.mask[idx], m, cm.b + shift, sig2, bandwidth)


def em_prior(net, t: GIMTensors, idx: Tensor, per_context_prior: tuple[float, float], fixed: bool = False):
    """The EM prior ``(logits, μ, log s, ψ_logscale) [B, d]``: the head's, or (``use_head=False`` or
    ``fixed``) the fixed per-context prior ``(target probability, shift scale)`` with zero mean."""
    if net.use_head and not fixed:
        return net.head(t.gamma[idx], t.dose[idx])
    p0, scale = per_context_prior
    shape = (len(idx), t.s1.shape[-1])
    z = torch.zeros(shape, dtype=t.s1.dtype, device=t.s1.device)
    return z + math.log(p0 / (1 - p0)), z, z + math.log(scale), z


def gim_loss(net, t: GIMTensors, idx: Tensor, *, mode: str, backend: str, prior: str, samples: int, tau: float,
             l1: float, acyclic: float, target_l1: float, map_prior_scale: float, kds_weight: float = 1.0,
             bandwidth: float = 1.0, per_context_prior: tuple[float, float] = (0.1, 3.0), em_warmup: bool = False,
             generator=None, normaliser: str = "batch") -> Tensor:
    """The loss of the contexts ``idx`` (see the module docstring); ``idx`` indexes ``t``.

    ``normaliser="batch"`` (the default): the fit term of ``idx`` and the control divided by their cells.
    ``"dataset"``: ``−[(K/|idx|) Σ_{k∈idx, k≠c} ℓ_k + ℓ_c] / N`` with ``K`` contexts and ``N`` cells in ``t``, an
    unbiased minibatch estimate of the per-cell marginal likelihood ``Σ_k ℓ_k / N`` of every context (the paper's
    objective over the cell count) for a uniform batch; the control term ``ℓ_c`` (always present) enters once per
    batch, and the target-probability term is a mean over ``idx``. Every term is then a mean of per-context terms
    or a constant per batch, so two DDP ranks of ``B`` contexts train what one process does on the ``2B``."""
    if normaliser not in ("batch", "dataset"):
        raise InvalidInputError(f"normaliser must be 'batch' or 'dataset', got {normaliser!r}")
    idx = idx.long().reshape(-1)
    ctrl = torch.nonzero(t.control, as_tuple=False).reshape(-1)
    wt = None
    if normaliser == "dataset":
        drawn = len(idx)
        idx = torch.cat([idx[~t.control[idx]], ctrl])
        wt = torch.where(t.control[idx], 1.0, len(t.n) / drawn).to(t.s1.dtype)
    elif ctrl.numel() and not bool(torch.isin(ctrl, idx).any()):
        idx = torch.cat([idx, ctrl])

    def agg(v: Tensor) -> Tensor:  # the sum over the contexts, weighted under normaliser="dataset"
        return v.sum() if wt is None else (v * wt).sum()

    is_ctrl = t.control[idx][:, None].to(t.s1.dtype)   # [B, 1]: intervention switched off
    off = 1.0 - is_ctrl
    total = t.n[idx].sum() if wt is None else t.n.sum()
    if mode == "mc":
        logits, mu, log_s, ls = net.head(t.gamma[idx], t.dose[idx])
        cur = streams.current_streams() if generator is None else None
        if cur is None:  # a torch generator or the global one: the draws as they always were
            i_s = relaxed_targets(logits, samples, tau, prior, generator) * off        # [S, B, d]
            eps = torch.randn((samples, *mu.shape), dtype=mu.dtype, device=mu.device, generator=generator)
        else:  # per-sample streams: context idx[i]'s S draws keyed by its index (its key: fit's data is arange(K))
            with streams.sample_streams(streams.SampleStreams(cur.seed, idx.to(cur.keys.device))):
                i_s = relaxed_targets(logits, samples, tau, prior, keyed=True) * off
                eps = streams.randn(mu.shape[:1] + (samples,) + mu.shape[1:], dtype=mu.dtype,
                                    device=mu.device).transpose(0, 1)
        psi = mu + torch.exp(log_s) * eps
        ell = _context_fit(net, t, idx, i_s * psi, i_s * ls, backend, kds_weight, bandwidth)   # [S, B]
        if backend == "linear_gaussian":
            fit_term = agg(torch.logsumexp(ell, 0) - math.log(samples))
        else:
            fit_term = agg(ell.mean(0))
        probs = _targets_from_logits(logits, prior) * off
    elif backend == "linear_gaussian":  # MAP/EM with the exact E-step (scigen.singlecell.gim.em)
        warm = em_warmup and net.use_head
        logits, mu, log_s, ls = em_prior(net, t, idx, per_context_prior, fixed=warm)
        cm = net.causal
        q_fn, post = em_terms(cm.w, cm.b, cm.log_sigma, t.n[idx], t.s1[idx], t.s2[idx], logits, mu, log_s, ls, off,
                              prior)
        fit_term = agg(q_fn)
        if warm:  # θ under the fixed prior; the head fitted to that E-step
            logits, mu, log_s, _ = net.head(t.gamma[idx], t.dose[idx])
            fit_term = fit_term + agg(head_fit(logits, mu, log_s, post, off, prior))
        probs = _targets_from_logits(logits, prior) * off if net.use_head else post["q"]
    else:
        i_hat = _targets_from_logits(net.ctx_logits[idx], prior) * off
        psi, lsc = net.ctx_shift[idx], net.ctx_logscale[idx] if net.head.noise else torch.zeros_like(net.ctx_shift[idx])
        ell = _context_fit(net, t, idx, i_hat * psi, i_hat * lsc, backend, kds_weight, bandwidth)
        fit_term = agg(ell)
        if net.use_head:
            logits, mu, _, ls = net.head(t.gamma[idx], t.dose[idx])
            if prior == "categorical":
                log_pi = (i_hat * torch.log_softmax(logits, -1)).sum(-1)
            else:
                log_pi = (i_hat * torch.nn.functional.logsigmoid(logits)
                          + (1 - i_hat) * torch.nn.functional.logsigmoid(-logits)).sum(-1)
            z = (psi - mu) / map_prior_scale
            log_psi = (i_hat * (-0.5 * z * z)).sum(-1)
            if net.head.noise:
                log_psi = log_psi - 0.5 * (i_hat * ((lsc - ls) / map_prior_scale) ** 2).sum(-1)
            fit_term = fit_term + agg((log_pi + log_psi) * off[:, 0])
        probs = i_hat
    cm = net.causal
    h = notears_h(cm.w)
    reg = l1 * cm.w.abs().sum() + acyclic * (h + 0.5 * h * h)
    n_treated = off.sum().clamp_min(1) if wt is None else torch.tensor(float(drawn), dtype=off.dtype)
    return -fit_term / total + reg + target_l1 * probs.sum() / (n_treated * probs.shape[-1])
