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

How one iteration is computed (issue 36.2; the equations above, reorganised, not approximated). Per
component one eigendecomposition ``Φ diag(γ_k) Φᴴ = U_k Λ_k U_kᴴ`` (:class:`Factorisation`, ``K`` batched
``[M, M]`` problems, cached on the network while ``γ`` and ``Φ`` are unchanged) gives every
``C_ik = U_k (Λ_k + ζ_i I) U_kᴴ`` at the cost of a diagonal, so the E-step needs only ``u_ik = U_kᴴ y_i``
(one ``[B, M] @ [M, K·M]`` product) and never a per-(i, k) ``[S]`` posterior. The M-step needs
``Σ_i r_ik (|μ_ik|² + c_ik)``, and with ``μ_ik = γ_k ⊙ Φᴴ C_ik⁻¹ y_i`` and ``c_ik = γ_k − γ_k² ⊙ diag(Φᴴ
C_ik⁻¹ Φ)`` that is ``N_k γ_k + γ_k² ⊙ diag(Φᴴ G_k Φ)`` with the ``[M, M]`` statistic

    G_k = Σ_i r_ik (C_ik⁻¹ y_i y_iᴴ C_ik⁻¹ − C_ik⁻¹),   N_k = Σ_i r_ik,

so an iteration costs ``O(B K M² + K M² S)`` instead of ``O(B K M S)``. ``(n, Σ_i log p(y_i), N_k, G_k)``
(:class:`EMStats`) are plain sums over observations in the original coordinates: they are accumulated over
chunks of observations (``chunk_size``; chunked EM is full-batch EM up to the order of the sums) and, when
``torch.distributed`` is initialised, summed over the processes with one ``all_reduce`` (each process
passing its own shard of observations; nothing here starts a process group).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from scigen.wireless.gaussian import BLOCK_ENTRIES

__all__ = ["EM_OPTIONS", "CSGMMNet", "EMResult", "EMStats", "Factorisation", "TensorChunks", "e_step_stats", "em_step",
           "factorise", "init_csgmm", "m_step", "mixture_log_lik", "responsibilities"]

#: the per-call training options an EM fit takes (besides ``max_steps`` and ``val_data``); ``checkpoint_dir``
#: is accepted because ``scigen … train`` always passes one, but EM writes no mid-run checkpoint there
#: (the run is saved whole by ``save``); any other option passes only as ``None`` / ``False`` (``logger=None``,
#: ``resume=False``: they ask for nothing)
EM_OPTIONS = frozenset({"seed", "val_every", "progress", "checkpoint_dir"})


class CSGMMNet(nn.Module):
    """Buffers ``log_pi [K]`` and ``gamma [K, S]`` (and, Kronecker, one ``factor{f} [K, G_f]`` per grid axis).

    :meth:`factorisation` keeps the last :class:`Factorisation` (not saved; rebuilt when ``gamma`` or ``Φ``
    differ from the ones it was made for), so that EM chunks, validation and repeated estimates reuse it."""

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
        self._fact: Factorisation | None = None

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

    @torch.no_grad()
    def factorisation(self, phi: Tensor) -> Factorisation:
        """:func:`factorise` of ``(Φ, γ)``, reused while both are unchanged (compared by value: ``[M, S]`` and
        ``[K, S]`` comparisons, against ``K`` eigendecompositions and ``[K, M, S]`` products)."""
        f = self._fact
        if (f is None or f.phi.shape != phi.shape or f.gamma.shape != self.gamma.shape or f.phi.device != phi.device
                or not torch.equal(f.gamma, self.gamma) or not torch.equal(f.phi, phi)):
            f = self._fact = factorise(phi, self.gamma)
        return f

    def _apply(self, fn, *args, **kwargs):  # .to(device) / .double(): the cached factorisation is rebuilt
        self._fact = None
        return super()._apply(fn, *args, **kwargs)


def _real_matrix(Z: Tensor) -> Tensor:
    """``[[Re Z, Im Z], [−Im Z, Re Z]]`` ``[2a, 2b]``: ``[Re x, Im x] @ it = [Re(x Z), Im(x Z)]`` for a row ``x``
    (complex products as one real GEMM: several times faster than a complex one on CPU)."""
    return torch.cat([torch.cat([Z.real, Z.imag], 1), torch.cat([-Z.imag, Z.real], 1)], 0).contiguous()


def _realify(y: Tensor) -> Tensor:
    """``[Re y, Im y]`` along the last axis."""
    return torch.cat([y.real, y.imag], -1)


@dataclass
class Factorisation:
    """``Φ diag(γ_k) Φᴴ = U_k diag(λ_k) U_kᴴ`` for every component: ``lam [K, M]`` (clamped at 0: PSD up to
    round-off), ``U [K, M, M]``; ``proj [2M, 2K·M]`` maps ``[Re y, Im y]`` to ``[Re, Im]`` of ``U_kᴴ y`` for all
    ``k`` in one real product (:func:`_real_matrix`). ``phi`` and ``gamma`` are the inputs (copies), for the
    cache and the estimator."""

    phi: Tensor
    gamma: Tensor
    lam: Tensor
    U: Tensor
    proj: Tensor
    _est: Tensor | None = None

    @property
    def estimator(self) -> Tensor:
        """The real form (:func:`_real_matrix`) of the ``[K·M, S]`` rows ``γ_k ⊙ conj(U_kᴴ Φ)_m``: ``ŝ_i =
        Σ_{k,m} r_ik (U_kᴴ y_i / (λ_k + ζ_i))_m · row(k, m)`` is the mixture's conditional mean (made on first use)."""
        if self._est is None:
            K, M, _ = self.U.shape
            V = self.U.transpose(1, 2) @ self.phi.conj()  # conj(U_kᴴ Φ) [K, M, S]
            self._est = _real_matrix((self.gamma[:, None, :].to(V.dtype) * V).reshape(K * M, -1))
        return self._est

    def project(self, y: Tensor, zeta: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """``(Re u, Im u, 1/d, ll)`` ``[b, K, M]`` (``ll [b, K]``) for a chunk: ``u_ik = U_kᴴ y_i``, ``d_ik = λ_k
        + ζ_i`` (the eigenvalues of ``C_ik``) and ``ll_ik = log CN(y_i; 0, C_ik)``."""
        B, M = y.shape
        K = self.lam.shape[0]
        u = (_realify(y) @ self.proj).reshape(B, 2, K, M)
        d = self.lam[None] + zeta[:, None, None]
        inv = 1.0 / d
        ll = -M * math.log(math.pi) - torch.log(d).sum(-1) - ((u[:, 0] ** 2 + u[:, 1] ** 2) * inv).sum(-1)
        return u[:, 0], u[:, 1], inv, ll


@torch.no_grad()
def factorise(phi: Tensor, gamma: Tensor) -> Factorisation:
    """The per-component eigendecompositions of ``Φ diag(γ_k) Φᴴ`` (``K`` batched ``[M, M]`` ``eigh``)."""
    K = gamma.shape[0]
    M = phi.shape[0]
    P = (phi[None] * gamma[:, None, :].to(phi.dtype)) @ phi.mH  # Φ diag γ_k Φᴴ [K, M, M]
    lam, U = torch.linalg.eigh(0.5 * (P + P.mH))
    proj = _real_matrix(U.conj().permute(1, 0, 2).reshape(M, K * M))  # y @ (this complex) = [U_kᴴ y]_{k·M + m}
    return Factorisation(phi.clone(), gamma.clone(), lam.clamp_min(0.0), U, proj)


def mixture_log_lik(log_lik: Tensor, log_pi: Tensor) -> Tensor:
    """``log Σ_k π_k p(y_i | k)`` per observation ``[B]`` from ``log_lik [B, K]``."""
    return torch.logsumexp(log_lik + log_pi[None], dim=1)


def responsibilities(log_lik: Tensor, log_pi: Tensor) -> Tensor:
    """``p(k | y_i) [B, K]``."""
    return torch.softmax(log_lik + log_pi[None], dim=1)


# ------------------------------------------------------------------------------------------- chunks
#: what the EM functions iterate: a re-iterable of ``(y [b, M], ζ [b])`` chunks (a list, :class:`TensorChunks`,
#: or any object whose ``__iter__`` reads the chunks again, e.g. from a file)
Chunks = Iterable[tuple[Tensor, Tensor]]


def default_chunk_size(n_components: int, n_pilots: int) -> int:
    """Observations per chunk such that the ``[b, K, M]`` intermediates stay within :data:`BLOCK_ENTRIES`."""
    return max(1, BLOCK_ENTRIES // max(1, n_components * n_pilots))


class TensorChunks:
    """``(y, ζ)`` in row chunks of ``chunk_size`` (``None``: :func:`default_chunk_size` for ``n_components``)."""

    def __init__(self, y: Tensor, zeta: Tensor, chunk_size: int | None = None, n_components: int = 1) -> None:
        if y.ndim != 2 or zeta.shape != y.shape[:1]:
            raise ValueError(f"y must be [B, M] and zeta [B]; got {tuple(y.shape)} and {tuple(zeta.shape)}")
        self.y, self.zeta = y, zeta
        self.chunk_size = int(chunk_size) if chunk_size else default_chunk_size(n_components, y.shape[1])
        if self.chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")

    def __iter__(self) -> Iterator[tuple[Tensor, Tensor]]:
        for lo in range(0, self.y.shape[0], self.chunk_size):
            yield self.y[lo : lo + self.chunk_size], self.zeta[lo : lo + self.chunk_size]


def _as_chunks(y: Tensor | Chunks, zeta: Tensor | None, chunk_size: int | None, n_components: int) -> Chunks:
    if isinstance(y, Tensor):
        if zeta is None:
            raise ValueError("zeta (the noise variances [B]) is needed beside a tensor y")
        return TensorChunks(y, zeta, chunk_size, n_components)
    if zeta is not None:
        raise ValueError("pass zeta inside the chunks ((y, zeta) pairs), not beside them")
    return y


# ------------------------------------------------------------------------------------------- statistics
def distributed_sum(t: Tensor) -> Tensor:
    """``t`` summed over the processes of an initialised ``torch.distributed`` group (itself otherwise). A
    reduction only: this starts no process group (Lightning / ``torchrun`` does)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        t = t.clone()
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t


@dataclass
class EMStats:
    """The E-step's sufficient statistics, plain sums over observations (module docstring): ``count``
    (observations), ``log_lik`` (``Σ_i log p(y_i)``), ``weight [K]`` (``N_k = Σ_i r_ik``) and, unless
    ``G`` is ``None`` (a likelihood-only pass), ``G [K, M, M]`` (``Σ_i r_ik (C⁻¹ y yᴴ C⁻¹ − C⁻¹)``)."""

    count: Tensor
    log_lik: Tensor
    weight: Tensor
    G: Tensor | None

    def __add__(self, other: EMStats) -> EMStats:
        G = None if self.G is None or other.G is None else self.G + other.G
        return EMStats(self.count + other.count, self.log_lik + other.log_lik, self.weight + other.weight, G)

    def all_reduce(self) -> EMStats:
        """Summed over the processes of an initialised ``torch.distributed`` group, in one ``all_reduce``
        (unchanged without one)."""
        import torch.distributed as dist

        if not (dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1):
            return self
        K = self.weight.shape[0]
        parts = [self.count.reshape(1), self.log_lik.reshape(1), self.weight]
        if self.G is not None:
            parts.append(torch.view_as_real(self.G).reshape(-1))
        flat = distributed_sum(torch.cat(parts))
        G = None
        if self.G is not None:
            G = torch.view_as_complex(flat[2 + K :].clone().reshape(*self.G.shape, 2))
        return EMStats(flat[0], flat[1], flat[2 : 2 + K], G)


@torch.no_grad()
def e_step_stats(fact: Factorisation, log_pi: Tensor, y: Tensor, zeta: Tensor, *, moments: bool = True) -> EMStats:
    """:class:`EMStats` of one chunk ``y [b, M]``, ``ζ [b]`` under the mixture ``(log π, γ)`` of ``fact``."""
    B, M = y.shape
    ur, ui, inv, ll = fact.project(y, zeta)
    lp = ll + log_pi[None]
    lse = torch.logsumexp(lp, dim=1)
    r = torch.exp(lp - lse[:, None])  # p(k | y_i) [B, K]
    count = torch.tensor(float(B), dtype=torch.float64, device=y.device)
    if not moments:
        return EMStats(count, lse.sum(), r.sum(0), None)
    scale = torch.sqrt(r)[:, :, None] * inv  # x_ik = √r_ik C_ik⁻¹ y_i in the eigenbasis: u_ik √r_ik / d_ik
    Z = torch.cat([ur * scale, ui * scale], -1).permute(1, 0, 2)  # [K, B, 2M] = [Re x, Im x]
    ZZ = Z.transpose(1, 2) @ Z  # [K, 2M, 2M]
    W = torch.complex(ZZ[:, :M, :M] + ZZ[:, M:, M:], ZZ[:, M:, :M] - ZZ[:, :M, M:])  # Σ_i x xᴴ [K, M, M]
    R = (r[:, :, None] * inv).sum(0)  # diag Σ_i r_ik Λ_ik⁻¹ [K, M]
    G = fact.U @ (W - torch.diag_embed(R.to(W.dtype))) @ fact.U.mH  # back to the original coordinates
    return EMStats(count, lse.sum(), r.sum(0), G)


def collect_stats(net: CSGMMNet, chunks: Chunks, phi: Tensor, *, moments: bool = True) -> EMStats:
    """:func:`e_step_stats` summed over ``chunks`` (and over processes, :meth:`EMStats.all_reduce`)."""
    fact = net.factorisation(phi)
    total: EMStats | None = None
    for y, zeta in chunks:
        st = e_step_stats(fact, net.log_pi, y, zeta, moments=moments)
        total = st if total is None else total + st
    if total is None:
        raise ValueError("no observations: the chunks are empty")
    return total.all_reduce()


@torch.no_grad()
def m_step(net: CSGMMNet, stats: EMStats, phi: Tensor, *, floor: float = 1e-7, inner: int = 20) -> None:
    """``π_k = N_k / n``, ``γ_k = (N_k γ_k + γ_k² ⊙ diag(Φᴴ G_k Φ)) / N_k`` floored (Kronecker: coordinate
    ascent on the factors); in place."""
    Nk, gamma = stats.weight, net.gamma
    q = (phi.conj()[None] * (stats.G @ phi)).sum(1).real  # diag(Φᴴ G_k Φ) [K, S]
    E = (Nk[:, None] * gamma + gamma**2 * q) / Nk.clamp_min(1e-300)[:, None]
    net.log_pi.copy_(torch.log((Nk / Nk.sum()).clamp_min(1e-300)))
    if net.kronecker:
        _kron_m_step(net, E, floor, inner)
    else:
        net.gamma.copy_(E.clamp_min(floor))


def init_csgmm(net: CSGMMNet, y: Tensor | Chunks, zeta: Tensor | None, phi: Tensor,
               generator: torch.Generator, *, chunk_size: int | None = None) -> None:
    """π uniform; γ_k ~ U(0, 1) rescaled so that ``E‖Φ s‖² + M ζ`` matches the observed ``mean ‖y‖²``
    (the paper normalises rows of γ to sum S for unit-power channels; this is that, for any scale).
    ``y`` a tensor ``[B, M]`` beside ``zeta [B]``, or re-iterable ``(y, ζ)`` chunks with ``zeta=None``;
    the means are sums over chunks (and processes)."""
    K, S = net.gamma.shape
    dev = phi.device
    sums = torch.zeros(3, dtype=torch.float64, device=dev)  # Σ‖y‖², Σ ζ, n
    M = phi.shape[0]
    for yc, zc in _as_chunks(y, zeta, chunk_size, K):
        sums += torch.stack([(yc.abs() ** 2).sum().double(), zc.sum().double(),
                             torch.tensor(float(yc.shape[0]), dtype=torch.float64, device=dev)])
    sums = distributed_sum(sums)
    power = float(sums[0] / sums[2])
    signal = power - M * float(sums[1] / sums[2])
    g0 = max(signal, 1e-3 * power) / float((phi.abs() ** 2).sum())
    u = torch.rand(K, S, generator=generator, dtype=torch.float64, device=dev) + 1e-3
    net.log_pi.fill_(-math.log(K))
    if net.kronecker:
        facs = [torch.rand(K, g, generator=generator, dtype=torch.float64, device=dev) + 0.5
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
def em_step(net: CSGMMNet, y: Tensor | Chunks, zeta: Tensor | None, phi: Tensor, *, floor: float = 1e-7,
            inner: int = 20, chunk_size: int | None = None) -> float:
    """One EM iteration in place; returns the mean log-likelihood ``(1/n) Σ_i log p(y_i)`` at the
    parameters *before* the update (so successive returns never decrease, up to the floor). ``y``: a
    tensor ``[B, M]`` (with ``zeta [B]``, taken in chunks of ``chunk_size`` rows) or re-iterable
    ``(y, ζ)`` chunks (``zeta=None``)."""
    stats = collect_stats(net, _as_chunks(y, zeta, chunk_size, net.n_components), phi)
    m_step(net, stats, phi, floor=floor, inner=inner)
    return float(stats.log_lik / stats.count)


@torch.no_grad()
def mean_log_lik(net: CSGMMNet, y: Tensor | Chunks, zeta: Tensor | None, phi: Tensor, *,
                 chunk_size: int | None = None) -> float:
    """``(1/n) Σ_i log p(y_i)`` under the current mixture."""
    stats = collect_stats(net, _as_chunks(y, zeta, chunk_size, net.n_components), phi, moments=False)
    return float(stats.log_lik / stats.count)


def run_em(net: CSGMMNet, y: Tensor | Chunks, zeta: Tensor | None, phi: Tensor, *, max_steps: int, tol: float,
           floor: float, inner: int, val: tuple | None = None, val_every: int = 10, progress: bool | None = None,
           chunk_size: int | None = None) -> EMResult:
    """Up to ``max_steps`` EM iterations; stop once the mean log-likelihood gain is below ``tol`` (paper: 1e-3).
    Losses are ``−mean log-likelihood / M`` (nats per pilot). ``progress``: a bar over the iterations
    (``None``: only on a terminal), the engine's :func:`~scigen.core.samplers.progress_bar`. ``y`` / ``val``:
    tensors (``val = (y, ζ, Φ)``) or re-iterable ``(y, ζ)`` chunks (``zeta=None``; ``val = (chunks, None,
    Φ)``); ``chunk_size``: rows per chunk of a tensor (``None``: bounded by memory)."""
    from scigen.core.samplers import progress_bar

    M = phi.shape[0]
    data = _as_chunks(y, zeta, chunk_size, net.n_components)
    res = EMResult()
    prev = -math.inf
    bar = progress_bar(max_steps, "CSGMM EM", progress)
    try:
        for step in range(max_steps):
            bar.advance()
            ll = em_step(net, data, None, phi, floor=floor, inner=inner)
            res.losses.append(-ll / M)
            if val is not None and (step + 1) % val_every == 0:
                yv, zv, pv = val
                res.val_losses.append((step, -mean_log_lik(net, yv, zv, pv, chunk_size=chunk_size) / pv.shape[0]))
            if ll - prev < tol and step > 0:
                res.stopped_step = step
                break
            prev = ll
    finally:
        bar.close()
    return res
