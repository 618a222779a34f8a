"""Location-scale path with a data-dependent endpoint ``N(mu(x), Sigma(x))`` and up to two variance sources.

``t = 0`` data, ``t = 1`` the prior. Around a base :class:`GaussianPath` ``(alpha, sigma)``:

    x_t = mu + alpha(t)·(x0 − mu) + sqrt(Sigma_t)·eps,     Sigma_t = A(t)·var + B(t)·var2,

``mu``, ``var`` and ``var2`` tensors broadcastable to ``x0`` (diagonal covariances). With one source
(the default: ``A = sigma²``, ``B = 0``, ``var2`` unused) ``Sigma_t = sigma(t)²·var`` and
standardised coordinates ``z = (x − mu)/sqrt(var)`` follow the base path exactly. **Two sources**
(NsDiff, Ye et al. ICML 2025, Eq. 5-7: the predicted variance ``g(X)`` and the true local variance
``σ_Y0``) come from a discrete chain (:meth:`LocationScalePath.discrete`) whose step ``k`` adds

    q(x_k | x_{k−1}) = N(mu + sqrt(α_k)(x_{k−1} − mu),  β_k·(c_k·var + (1 − c_k)·var2)),

so that, unrolled, ``A_k = Σ_{s≤k} β_s c_s Π_{j=s+1}^{k} α_j`` and ``B_k = Σ_{s≤k} β_s (1 − c_s)
Π_{j=s+1}^{k} α_j`` (both **as sums**, :func:`~scigen.core.paths.sum_of_products`: NsDiff's reference
code forms ``A`` as a difference that cancels and goes negative, their issue #10), with
``A_k + B_k = 1 − ᾱ_k``. NsDiff is ``c_k = β_k`` (:meth:`LocationScalePath.nsdiff`): ``β_k² g +
α_k β_k σ``, i.e. ``A = G_k``, ``B = β̃_k`` of the paper. ``var = var2`` gives back the one-source
path, and ``var = var2 = 1`` with ``mu`` the TMDM/CARD forward process (Li et al. 2024; Han et al. 2022).
Off the grid ``t = k/T`` a discrete chain's ``A, B`` are linear in ``t`` (the solvers use grid times).

**Conversions.** At a fixed ``t``, ``z = (x − mu)/sd_t`` with ``sd_t = sqrt(Sigma_t)/sigma(t)``
follows the base path, which gives ``eps``, ``x0``, ``v`` and ``score = −eps/sqrt(Sigma_t)`` exactly
(``eps``, ``v`` live in ``z``-space, ``x0`` and ``score`` in ``x``-space). ``velocity`` (``dx_t/dt``)
needs ``d sd_t/dt`` and is offered for one source only (``sd`` constant).

**Posterior** (:meth:`LocationScalePath.posterior`) of ``s < t`` on a Markov chain with these
marginals: ``x_t − mu = alpha_{t|s}(x_s − mu) + N(0, Sigma_{t|s})`` with ``alpha_{t|s} =
alpha_t/alpha_s`` and ``Sigma_{t|s} = Sigma_t − alpha_{t|s}² Sigma_s`` (coefficients formed in
float64 before ``var`` multiplies them), hence (product of Gaussians; Kingma et al. 2021, Eq. 26-28)

    q(x_s | x_t, x0) = N(mu + c0·(x0 − mu) + ct·(x_t − mu),  Sigma_{t|s}·Sigma_s/Sigma_t),
    c0 = alpha_s Sigma_{t|s}/Sigma_t,   ct = alpha_{t|s} Sigma_s/Sigma_t.

For adjacent NsDiff steps this is the paper's ``γ0 Y0 + γ1 Y_k + γ2 f`` with ``γ2 = 1 − γ0 − γ1``,
i.e. the ``(sqrt(α_k) − 1)`` form of the ``f`` coefficient (the released code's ``(α_k − 1)`` breaks
``γ0 + γ1 + γ2 = 1``). :meth:`LocationScalePath.var2_from_posterior_variance` inverts the posterior
variance for ``var2`` (NsDiff's sampler recovers ``σ_Y0`` from the denoiser's predicted variance).
"""

from __future__ import annotations

import torch
from torch import Tensor

from scigen.core import streams
from scigen.core.paths.gaussian import GaussianPath, check_kind
from scigen.core.paths.vp import VPLinear
from scigen.core.validation import as_tensor, broadcast_time, check_same_shape

__all__ = ["LocationScalePath"]


class LocationScalePath:
    """``x_t = mu + alpha(t)(x0 − mu) + sqrt(A(t)·var + B(t)·var2)·eps`` around a base Gaussian path."""

    def __init__(self, base: GaussianPath | None = None, *, tables: tuple[Tensor, Tensor] | None = None):
        """``base``: the Gaussian path of ``(alpha, sigma)``. ``tables``: ``(A_k, B_k)`` for ``k = 0 … T``
        of a discrete two-source chain (see :meth:`discrete`); ``None`` is the one-source path."""
        base = VPLinear() if base is None else base
        if not isinstance(base, GaussianPath):
            raise TypeError(f"base must be a GaussianPath, got {type(base).__name__}")
        self.base = base
        self.tables = None if tables is None else tuple(as_tensor(v, "tables").double() for v in tables)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def discrete(cls, schedule, step_share) -> LocationScalePath:
        """The two-source chain of a :class:`~scigen.core.paths.DiscreteSchedule`: step ``k`` adds variance
        ``β_k·(c_k·var + (1 − c_k)·var2)`` with ``c = step_share`` (``[T]``, in ``[0, 1]``); see module docstring.
        The base path is ``schedule.as_path()`` (``alpha(k/T) = sqrt(ᾱ_k)``)."""
        from scigen.core.paths.discrete import sum_of_products

        c = as_tensor(step_share, "step_share").double()
        if c.shape != schedule.betas.shape or bool((c < 0).any()) or bool((c > 1).any()):
            raise ValueError(f"step_share must be a [T={schedule.T}] tensor in [0, 1], got shape {tuple(c.shape)}")
        zero = torch.zeros(1, dtype=torch.float64)
        A = torch.cat([zero, sum_of_products(schedule.betas * c, schedule.alphas, inclusive=False)])
        B = torch.cat([zero, sum_of_products(schedule.betas * (1 - c), schedule.alphas, inclusive=False)])
        return cls(schedule.as_path(), tables=(A, B))

    @classmethod
    def nsdiff(cls, schedule) -> LocationScalePath:
        """NsDiff's forward chain (Ye et al. 2025, Eq. 5): ``Σ1_k = β_k² var + α_k β_k var2`` (``c_k = β_k``),
        ``var = g(X)`` the predicted and ``var2 = σ_Y0`` the true local variance."""
        return cls.discrete(schedule, schedule.betas)

    @property
    def two_sources(self) -> bool:
        return self.tables is not None

    # ------------------------------------------------------------------ schedule quantities
    def variance_coefficients(self, t: Tensor) -> tuple[Tensor, Tensor]:
        """``(A(t), B(t))`` in float64, elementwise in ``t`` (one source: ``(sigma(t)², 0)``)."""
        t = as_tensor(t, "t").double()
        if self.tables is None:
            s = self.base.sigma(t).double()
            return s * s, torch.zeros_like(s)
        A, B = (v.to(t.device) for v in self.tables)
        T = A.shape[0] - 1
        u = t.clamp(0.0, 1.0) * T
        j = u.floor().clamp(0, T - 1).long()
        w = u - j
        return A[j] + w * (A[j + 1] - A[j]), B[j] + w * (B[j + 1] - B[j])

    def _combine(self, A: Tensor, B: Tensor, var: Tensor, var2: Tensor | None) -> Tensor:
        if self.tables is not None and var2 is None:
            raise ValueError("this path has two variance sources: pass var2 (the second variance)")
        out = A.to(var.dtype) * var
        return out if self.tables is None else out + B.to(var.dtype) * var2

    def variance(self, t: Tensor, var: Tensor, var2: Tensor | None = None, *, check: bool = True) -> Tensor:
        """``Sigma_t = A(t)·var + B(t)·var2`` (``t`` scalar or ``[B]``, broadcast over ``var``).

        ``check=False`` skips the scan of ``var``/``var2`` (finite, > 0) for a caller that validated them
        once, e.g. a sampler calling this at every step on the same variances."""
        if check:
            var, var2 = self._check_vars(var, var, var2)
        A, B = self.variance_coefficients(broadcast_time(t, var))
        return self._combine(A, B, var, var2)

    @staticmethod
    def _check_broadcast(v, x: Tensor, name: str) -> None:
        if not isinstance(v, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(v).__name__}")
        try:
            torch.broadcast_shapes(v.shape, x.shape)
        except RuntimeError:
            raise ValueError(f"{name} of shape {tuple(v.shape)} does not broadcast to x of shape {tuple(x.shape)}") from None

    def _check_vars(self, x: Tensor, var: Tensor, var2: Tensor | None) -> tuple[Tensor, Tensor | None]:
        for v, n in ((var, "var"), (var2, "var2")):
            if v is None:
                continue
            self._check_broadcast(v, x, n)
            if bool((v <= 0).any()) or not bool(torch.isfinite(v).all()):
                raise ValueError(f"{n} must be finite and strictly positive")
        return var, var2

    def _loc_scale(self, x: Tensor, t: Tensor, mu: Tensor, var: Tensor, var2: Tensor | None) -> tuple[Tensor, Tensor]:
        """``(mu, sd_t)``: ``sd_t = sqrt(Sigma_t)/sigma(t)`` (one source: ``sqrt(var)``, any ``t``)."""
        self._check_broadcast(mu, x, "mu")
        var, var2 = self._check_vars(x, var, var2)
        if self.tables is None:
            return mu, torch.sqrt(var)
        tb = broadcast_time(t, x).double()
        A, B = self.variance_coefficients(tb)
        s2 = (self.base.sigma(tb).double() ** 2).clamp_min(1e-300)
        return mu, torch.sqrt(self._combine(A / s2, B / s2, var, var2))

    # ------------------------------------------------------------------ the path
    def marginal(self, x0: Tensor, t: Tensor, mu: Tensor, var: Tensor, noise: Tensor | None = None, *,
                 var2: Tensor | None = None, generator=None) -> Tensor:
        """Sample ``x_t`` (``t`` scalar or ``[B]``; ``noise`` defaults to a standard normal draw)."""
        mu, sd = self._loc_scale(x0, t, mu, var, var2)
        if noise is None:
            noise = streams.randn(x0.shape, generator=generator, device=x0.device, dtype=x0.dtype)
        check_same_shape(x0, noise, "x0", "noise")
        return mu + sd * self.base.marginal((x0 - mu) / sd, t, noise)

    def _check_kind(self, kind: str, name: str = "kind") -> None:
        check_kind(kind, name)
        if kind == "velocity" and self.tables is not None:
            raise ValueError("velocity is defined for a one-source location-scale path only (it needs d sd_t/dt)")

    def target(self, x0: Tensor, noise: Tensor, t: Tensor, kind: str, mu: Tensor, var: Tensor, *,
               var2: Tensor | None = None) -> Tensor:
        """Regression target of ``kind`` (see module docstring for which space each kind lives in)."""
        self._check_kind(kind)
        mu, sd = self._loc_scale(x0, t, mu, var, var2)
        z = self.base.target((x0 - mu) / sd, noise, t, kind)
        return self._from_z(z, kind, mu, sd)

    def convert(self, pred: Tensor, x_t: Tensor, t: Tensor, src: str, dst: str, mu: Tensor, var: Tensor, *,
                var2: Tensor | None = None) -> Tensor:
        """Exact conversion between prediction kinds, via standardised coordinates."""
        self._check_kind(src, "src")
        self._check_kind(dst, "dst")
        check_same_shape(x_t, pred, "x_t", "pred")
        mu, sd = self._loc_scale(x_t, t, mu, var, var2)
        z_pred = self._to_z(pred, src, mu, sd)
        z = self.base.convert(z_pred, (x_t - mu) / sd, t, src, dst)
        return self._from_z(z, dst, mu, sd)

    @staticmethod
    def _to_z(pred: Tensor, kind: str, mu: Tensor, sd: Tensor) -> Tensor:
        if kind == "x0":
            return (pred - mu) / sd
        if kind == "velocity":
            return pred / sd
        if kind == "score":
            return pred * sd
        return pred  # eps, v

    @staticmethod
    def _from_z(z: Tensor, kind: str, mu: Tensor, sd: Tensor) -> Tensor:
        if kind == "x0":
            return mu + sd * z
        if kind == "velocity":
            return sd * z
        if kind == "score":
            return z / sd
        return z

    # ------------------------------------------------------------------ posterior
    def _posterior_tables(self, t: Tensor, s: Tensor, like: Tensor, check: bool = True):
        """float64 ``(alpha_s, alpha_{t|s}, (A, B) at t, at s, of the transition)``, broadcast over ``like``."""
        tb, sb = broadcast_time(t, like, "t").double(), broadcast_time(s, like, "s").double()
        if check and bool((sb >= tb).any()):
            raise ValueError("the posterior q(x_s | x_t, x0) needs s < t")
        a_t, a_s = self.base.alpha(tb).double(), self.base.alpha(sb).double()
        a_ts = a_t / a_s
        (At, Bt), (As, Bs) = self.variance_coefficients(tb), self.variance_coefficients(sb)
        return a_s, a_ts, (At, Bt), (As, Bs), ((At - a_ts**2 * As).clamp_min(0), (Bt - a_ts**2 * Bs).clamp_min(0))

    def posterior(self, t: Tensor, s: Tensor, var: Tensor, var2: Tensor | None = None, *,
                  check: bool = True) -> tuple[Tensor, Tensor, Tensor]:
        """``(c0, ct, variance)`` of ``q(x_s | x_t, x0) = N(mu + c0 (x0 − mu) + ct (x_t − mu), variance)``, ``s < t``
        (module docstring). ``t``, ``s``: scalars or ``[B]``; the results broadcast like ``var``. ``check=False``:
        as in :meth:`variance` (also skips the ``s < t`` check)."""
        if check:
            var, var2 = self._check_vars(var, var, var2)
        a_s, a_ts, (At, Bt), (As, Bs), (Ats, Bts) = self._posterior_tables(t, s, var, check)
        S_t, S_s, S_ts = (self._combine(a, b, var, var2) for a, b in ((At, Bt), (As, Bs), (Ats, Bts)))
        c0 = a_s.to(var.dtype) * S_ts / S_t
        ct = a_ts.to(var.dtype) * S_s / S_t
        return c0, ct, S_ts * S_s / S_t

    def var2_from_posterior_variance(self, t: Tensor, s: Tensor, v: Tensor, var: Tensor, *,
                                     floor: float = 1e-6, check: bool = True) -> Tensor:
        """The ``var2 ≥ floor`` whose posterior variance (:meth:`posterior`) is ``v``, for a two-source path.

        With ``Sigma = a + b·var2`` at ``t|s``, ``s`` and ``t`` the equation ``Sigma_{t|s} Sigma_s = v Sigma_t``
        is the quadratic ``b1 b2 x² + (a1 b2 + a2 b1 − v b3) x + a1 a2 − v a3 = 0`` (``1 = t|s, 2 = s, 3 = t``);
        the posterior variance increases in ``var2``, so its positive root (stable form) is the one.
        ``v`` at or below the ``var2 = 0`` value gives ``floor``. ``check=False``: as in :meth:`posterior`.
        """
        if self.tables is None:
            raise ValueError("var2_from_posterior_variance needs a two-source path (LocationScalePath.discrete)")
        if check:
            var, _ = self._check_vars(v, var, None)
        _, _, (At, Bt), (As, Bs), (Ats, Bts) = self._posterior_tables(t, s, v, check)
        dt = v.dtype
        a1, b1 = Ats.to(dt) * var, Bts.to(dt)
        a2, b2 = As.to(dt) * var, Bs.to(dt)
        a3, b3 = At.to(dt) * var, Bt.to(dt)
        qa = b1 * b2
        qb = a1 * b2 + a2 * b1 - v * b3
        qc = a1 * a2 - v * a3
        disc = (qb * qb - 4 * qa * qc).clamp_min(0).sqrt()
        tiny = torch.finfo(dt).tiny
        root = torch.where(qb >= 0, -2 * qc / (qb + disc).clamp_min(tiny), (-qb + disc) / (2 * qa).clamp_min(tiny))
        return root.clamp_min(floor)

    # ------------------------------------------------------------------ prior
    def prior_sample(self, mu: Tensor, var: Tensor, *, var2: Tensor | None = None, generator=None) -> Tensor:
        """A draw from the ``t = 1`` end ``N(mu, Sigma_1)`` (``alpha(1) ≈ 0`` assumed; one source: ``sigma(1)² var``)."""
        one = torch.ones((), device=mu.device, dtype=torch.float64)
        shape = torch.broadcast_shapes(mu.shape, var.shape)
        probe = torch.empty(shape, device=mu.device, dtype=mu.dtype)
        mu, sd = self._loc_scale(probe, one, mu, var, var2)
        eps = streams.randn(shape, generator=generator, device=mu.device, dtype=mu.dtype)
        return mu + sd * self.base.sigma(one).to(mu.dtype) * eps

    def __repr__(self) -> str:
        kind = "two sources" if self.tables is not None else "one source"
        return f"LocationScalePath(base={self.base!r}, {kind})"
