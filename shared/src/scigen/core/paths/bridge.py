"""Brownian bridge between coupled points over a time window ``[t_a, t_b]`` (SF2M, MMSFM).

Here ``t`` is trajectory time inside a window, not the data/noise time of a denoising path: the
bridge pins ``x_a`` at ``t_a`` and ``x_b`` at ``t_b``. With ``tau = (t − t_a)/(t_b − t_a)``:

* mean ``mu_t``: linear interpolation ``(1 − tau)·x_a + tau·x_b`` unless a mean is given (MMSFM
  passes a spline: ``mu`` and ``dmu`` as callables of the broadcast time ``t`` or as tensors);
* std ``sigma_t = sigma·sqrt(tau(1 − tau))`` (Tong et al. 2024, SF2M, Eq. 8), or the constant
  ``sigma`` with ``fixed_sigma=True`` (OT-CFM with ``sigma > 0``). As in SF2M and MMSFM the std
  uses the window-relative ``tau``; a Brownian motion with diffusion ``sigma`` pinned over a window
  of length ``L = t_b − t_a`` has std ``sigma·sqrt(L·tau(1 − tau))`` — pass ``sigma·sqrt(L)`` for that;
* sample ``x_t = mu_t + sigma_t·eps``;
* conditional drift ``u_t = (sigma_t'/sigma_t)(x − mu_t) + mu_t'`` (SF2M Eq. 9), with
  ``sigma_t'/sigma_t = (1 − 2 tau) / (2 tau (1 − tau) (t_b − t_a))``; along a fixed ``eps`` it equals
  ``dx_t/dt = sigma_t'·eps + mu_t'`` (:meth:`BrownianBridge.velocity`);
* conditional score ``−eps/sigma_t`` and the SF2M weight ``lambda_t = 2·sigma_t/sigma²``
  (:meth:`BrownianBridge.score_weight`), so that ``lambda_t · (sigma²/2)·score = −eps``.

The window may be per sample: ``t_a`` and ``t_b`` as ``[B]`` tensors (one window per row of the
batch, e.g. MMSFM mixing every window of consecutive snapshots in one minibatch, Lee et al. 2025,
§3); every formula above then uses each row's own window.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from scigen.core import streams
from scigen.core.validation import as_tensor, broadcast_time, check_finite_positive, check_same_shape

__all__ = ["BrownianBridge"]

MeanArg = Tensor | Callable[[Tensor], Tensor] | None


class BrownianBridge:
    """Brownian bridge with diffusion ``sigma`` on the window ``[t_a, t_b]``."""

    def __init__(self, sigma: float = 1.0, t_a: float | Tensor = 0.0, t_b: float | Tensor = 1.0,
                 fixed_sigma: bool = False):
        self.sigma = check_finite_positive(sigma, "sigma", allow_zero=fixed_sigma)
        self.per_sample = isinstance(t_a, Tensor) or isinstance(t_b, Tensor)
        if self.per_sample:
            self.t_a, self.t_b = self._window_tensors(t_a, t_b)
        else:
            self.t_a, self.t_b = float(t_a), float(t_b)
            if not (math.isfinite(self.t_a) and math.isfinite(self.t_b) and self.t_b > self.t_a):
                raise ValueError(f"the window needs finite t_b > t_a, got t_a={t_a}, t_b={t_b}")
        self.fixed_sigma = bool(fixed_sigma)

    @staticmethod
    def _window_tensors(t_a, t_b) -> tuple[Tensor, Tensor]:
        like = t_a if isinstance(t_a, Tensor) else t_b
        ta, tb = (torch.as_tensor(v, dtype=like.dtype, device=like.device) for v in (t_a, t_b))
        ta, tb = torch.broadcast_tensors(ta, tb)
        if ta.ndim != 1:
            raise ValueError(f"per-sample windows need t_a and t_b of shape [B] (or a float), got {tuple(ta.shape)}")
        if not bool(torch.isfinite(ta).all() & torch.isfinite(tb).all()):
            raise ValueError("per-sample windows t_a, t_b must be finite")
        bad = (tb <= ta).nonzero().flatten()
        if bad.numel():
            i = int(bad[0])
            raise ValueError(f"every window needs t_b > t_a; row {i} has t_a={float(ta[i])}, t_b={float(tb[i])} "
                             f"({bad.numel()} bad rows)")
        return ta, tb

    def _window(self, t: Tensor):
        """``(t_a, t_b)`` shaped to broadcast against ``t`` (``[B, 1, ..., 1]`` for per-sample windows)."""
        if not self.per_sample:
            return self.t_a, self.t_b
        b = self.t_a.shape[0]
        if t.ndim == 0 or t.shape[0] != b:
            raise ValueError(f"per-sample windows are [B] = [{b}]; t must have leading dimension {b}, "
                             f"got shape {tuple(t.shape)}")
        shape = (b,) + (1,) * (t.ndim - 1)
        return (self.t_a.to(t.dtype).reshape(shape), self.t_b.to(t.dtype).reshape(shape))

    def length(self, like: Tensor):
        """The window length ``t_b − t_a`` (a float, or ``[B, 1, ...]`` shaped like ``like``)."""
        ta, tb = self._window(like)
        return tb - ta

    # ------------------------------------------------------------------ schedule
    def tau(self, t: Tensor) -> Tensor:
        """Window-relative time ``(t − t_a)/(t_b − t_a)``; raises if ``t`` leaves the window."""
        t = as_tensor(t, "t")
        ta, tb = self._window(t)
        if t.numel():
            out = (t < ta) | (t > tb)
            if bool(out.any()):
                if not self.per_sample:
                    raise ValueError(f"t must lie in the window [{self.t_a}, {self.t_b}], got range "
                                     f"[{float(t.min())}, {float(t.max())}]")
                i = int(out.reshape(out.shape[0], -1).any(1).nonzero()[0])
                raise ValueError(f"t must lie in each row's window; row {i} has t outside "
                                 f"[{float(self.t_a[i])}, {float(self.t_b[i])}]")
        return (t - ta) / (tb - ta)

    def std(self, t: Tensor) -> Tensor:
        """``sigma·sqrt(tau(1 − tau))`` (or ``sigma`` when ``fixed_sigma``)."""
        tau = self.tau(t)
        if self.fixed_sigma:
            return torch.full_like(tau, self.sigma)
        return self.sigma * torch.sqrt(tau * (1 - tau))

    def d_std(self, t: Tensor) -> Tensor:
        """``d std/dt = sigma (1 − 2 tau) / (2 sqrt(tau(1 − tau)) (t_b − t_a))``; 0 when fixed."""
        tau = self.tau(t)
        if self.fixed_sigma:
            return torch.zeros_like(tau)
        return self.sigma * (1 - 2 * tau) / (2 * torch.sqrt(tau * (1 - tau)) * self.length(tau))

    def log_std_derivative(self, t: Tensor) -> Tensor:
        """``std'/std = (1 − 2 tau) / (2 tau (1 − tau)(t_b − t_a))`` (0 when fixed); infinite at the ends."""
        tau = self.tau(t)
        if self.fixed_sigma:
            return torch.zeros_like(tau)
        return (1 - 2 * tau) / (2 * tau * (1 - tau) * self.length(tau))

    # ------------------------------------------------------------------ mean
    def mean(self, t: Tensor, x_a: Tensor, x_b: Tensor, mu: MeanArg = None) -> Tensor:
        """``mu_t``: linear interpolation of ``x_a, x_b`` or the given mean (callable of ``t`` broadcast to ``x``)."""
        check_same_shape(x_a, x_b, "x_a", "x_b")
        tb = broadcast_time(t, x_a).to(x_a.dtype)
        if mu is None:
            tau = self.tau(tb)
            return (1 - tau) * x_a + tau * x_b
        self.tau(tb)  # window check
        return self._resolve(mu, tb, x_a, "mu")

    def d_mean(self, t: Tensor, x_a: Tensor, x_b: Tensor, dmu: MeanArg = None) -> Tensor:
        """``mu_t'``: ``(x_b − x_a)/(t_b − t_a)`` for the linear mean, else the given derivative."""
        check_same_shape(x_a, x_b, "x_a", "x_b")
        tb = broadcast_time(t, x_a).to(x_a.dtype)
        self.tau(tb)
        if dmu is None:
            return (x_b - x_a) / self.length(tb) + torch.zeros_like(tb)
        return self._resolve(dmu, tb, x_a, "dmu")

    @staticmethod
    def _resolve(m, tb: Tensor, like: Tensor, name: str) -> Tensor:
        out = m(tb) if callable(m) else m
        if not isinstance(out, Tensor) or out.shape != like.shape:
            got = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
            raise ValueError(f"{name} must be (or return) a tensor of shape {tuple(like.shape)}, got {got}")
        return out

    # ------------------------------------------------------------------ samples and targets
    def sample(self, t, x_a, x_b, noise=None, mu: MeanArg = None, *, generator=None) -> Tensor:
        """``x_t = mu_t + std(t)·noise`` (``noise`` defaults to a standard normal draw)."""
        m = self.mean(t, x_a, x_b, mu)
        if noise is None:
            noise = streams.randn(x_a.shape, generator=generator, device=x_a.device, dtype=x_a.dtype)
        check_same_shape(x_a, noise, "x_a", "noise")
        return m + self.std(broadcast_time(t, x_a).to(x_a.dtype)) * noise

    def drift_target(self, t, x_t, x_a, x_b, mu: MeanArg = None, dmu: MeanArg = None) -> Tensor:
        """SF2M conditional drift ``(std'/std)(x_t − mu_t) + mu_t'`` (needs ``t`` strictly inside the window
        unless ``fixed_sigma``)."""
        check_same_shape(x_a, x_t, "x_a", "x_t")
        tb = broadcast_time(t, x_a).to(x_a.dtype)
        drift = self.d_mean(t, x_a, x_b, dmu)
        if self.fixed_sigma:
            return drift
        return self.log_std_derivative(tb) * (x_t - self.mean(t, x_a, x_b, mu)) + drift

    def velocity(self, t, noise, x_a, x_b, dmu: MeanArg = None) -> Tensor:
        """``dx_t/dt`` along a fixed ``noise`` draw: ``std'(t)·noise + mu_t'`` (equals :meth:`drift_target`)."""
        check_same_shape(x_a, noise, "x_a", "noise")
        tb = broadcast_time(t, x_a).to(x_a.dtype)
        return self.d_std(tb) * noise + self.d_mean(t, x_a, x_b, dmu)

    def score_weight(self, t: Tensor) -> Tensor:
        """SF2M ``lambda_t = 2·std(t)/sigma²`` (Tong et al. 2024, Eq. 10)."""
        if self.sigma == 0:
            raise ValueError("score_weight needs sigma > 0")
        return 2.0 * self.std(t) / self.sigma**2

    def __repr__(self) -> str:
        win = f"per-sample windows [{self.t_a.shape[0]}]" if self.per_sample else f"t_a={self.t_a}, t_b={self.t_b}"
        return f"BrownianBridge(sigma={self.sigma}, {win}, fixed_sigma={self.fixed_sigma})"
