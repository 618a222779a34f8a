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

__all__ = ["CollapseError", "CollapseWarning", "check_collapse", "collapse_report"]


class CollapseWarning(UserWarning):
    """The denoised output looks like the trivial (constant / all-zero) solution."""


class CollapseError(ScigenError, RuntimeError):
    """Raised instead of :class:`CollapseWarning` with ``on_collapse="raise"``."""


def collapse_report(noisy: Tensor, denoised: Tensor, ratio: float = 0.1) -> dict:
    """JSON-able ``{"collapsed", "reason", "var_in", "var_out", "ratio", "all_zero"}``."""
    x, y = noisy.double(), denoised.double()
    var_in, var_out = float(x.var()) if x.numel() > 1 else 0.0, float(y.var()) if y.numel() > 1 else 0.0
    all_zero = bool((y == 0).all())
    reason = ""
    if not bool(torch.isfinite(y).all()):
        reason = "the output has NaN/inf values"
    elif all_zero:
        reason = "every output value is 0"
    elif var_out == 0.0:
        reason = f"every output value is {float(y.flatten()[0]):.4g}"
    elif var_in > 0 and var_out < ratio * var_in:
        reason = f"output variance {var_out:.3g} is below {ratio:g} x the input variance {var_in:.3g}"
    return {"collapsed": bool(reason), "reason": reason, "var_in": var_in, "var_out": var_out,
            "ratio": float(ratio), "all_zero": all_zero}


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
