"""The collapse guard: Inverse Flow's objective is also minimised by a trivial map (e.g. every output 0 or
the data mean; noted by the ICLR 2025 reviewers and the authors), so each denoising run is checked.

``collapse_report(noisy, denoised, ratio)``: ``var_out`` / ``var_in`` are the variances over all
observations and entries (images: over pixels too); the output is *collapsed* when it is constant
(``var_out = 0`` or non-finite), or ``var_out < ratio · var_in`` (default ratio 0.1: the research
note's "output variance > 0.1 × data variance"). Denoising removes only the noise's share of the
variance, so a working model stays well above the threshold unless the noise dominates the signal."""

from __future__ import annotations

import warnings

import torch
from torch import Tensor

from scigen.core.errors import ScigenError

__all__ = ["CollapseError", "CollapseStats", "CollapseWarning", "check_collapse", "collapse_report"]


class CollapseWarning(UserWarning):
    """The denoised output looks like the trivial (constant / all-zero) solution."""


class CollapseError(ScigenError, RuntimeError):
    """Raised instead of :class:`CollapseWarning` with ``on_collapse="raise"``."""


class _Moments:
    """Count, mean and sum of squared deviations of every value seen, merged block by block (Chan, Golub
    & LeVeque 1983), so a data set denoised in row blocks gets the variance of the whole."""

    def __init__(self) -> None:
        self.n, self.mean, self.m2 = 0, 0.0, 0.0

    def add(self, v: Tensor) -> None:
        nb = v.numel()
        if nb == 0:
            return
        mb = float(v.mean())
        m2b = float(((v - mb) ** 2).sum())
        n = self.n + nb
        delta = mb - self.mean
        self.m2 += m2b + delta**2 * self.n * nb / n
        self.mean += delta * nb / n
        self.n = n

    @property
    def var(self) -> float:
        """The unbiased variance (``torch.var``'s), 0 for fewer than two values."""
        return self.m2 / (self.n - 1) if self.n > 1 else 0.0


class CollapseStats:
    """What :func:`collapse_report` needs, accumulated over blocks of ``(noisy, denoised)`` rows."""

    def __init__(self) -> None:
        self._in, self._out = _Moments(), _Moments()
        self.all_zero, self.finite, self.first = True, True, None

    def add(self, noisy: Tensor, denoised: Tensor) -> None:
        x, y = noisy.double(), denoised.double()
        self._in.add(x)
        if y.numel() and self.first is None:
            self.first = float(y.flatten()[0])
        if not bool(torch.isfinite(y).all()):
            self.finite = False
            return
        self._out.add(y)
        self.all_zero = self.all_zero and bool((y == 0).all())

    def report(self, ratio: float = 0.1) -> dict:
        """JSON-able ``{"collapsed", "reason", "var_in", "var_out", "ratio", "all_zero"}``."""
        var_in, var_out = self._in.var, (self._out.var if self.finite else float("nan"))
        all_zero = self.finite and self.all_zero
        reason = ""
        if not self.finite:
            reason = "the output has NaN/inf values"
        elif all_zero:
            reason = "every output value is 0"
        elif var_out == 0.0:
            reason = f"every output value is {self.first:.4g}"
        elif var_in > 0 and var_out < ratio * var_in:
            reason = f"output variance {var_out:.3g} is below {ratio:g} x the input variance {var_in:.3g}"
        return {"collapsed": bool(reason), "reason": reason, "var_in": var_in, "var_out": var_out,
                "ratio": float(ratio), "all_zero": all_zero}


def collapse_report(noisy: Tensor, denoised: Tensor, ratio: float = 0.1) -> dict:
    """JSON-able ``{"collapsed", "reason", "var_in", "var_out", "ratio", "all_zero"}``."""
    stats = CollapseStats()
    stats.add(noisy, denoised)
    return stats.report(ratio)


def check_collapse(report: dict, on_collapse: str = "warn", what: str = "Inverse Flow") -> None:
    """Act on a :func:`collapse_report`: ``"warn"`` (a :class:`CollapseWarning`), ``"raise"`` or ``"ignore"``."""
    if on_collapse not in ("warn", "raise", "ignore"):
        raise ValueError(f"on_collapse must be 'warn', 'raise' or 'ignore', got {on_collapse!r}")
    if not report["collapsed"] or on_collapse == "ignore":
        return
    msg = (f"{what} collapsed to a trivial solution: {report['reason']} (the objective's known trivial "
           "minimum; retrain with another seed, a smaller lr or t_max, or check the noise model)")
    if on_collapse == "raise":
        raise CollapseError(msg)
    warnings.warn(msg, CollapseWarning, stacklevel=3)
