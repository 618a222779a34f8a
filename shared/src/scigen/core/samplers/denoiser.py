"""The x0-denoiser every sampler integrates with, built from a model function of any kind.

A model function is ``model_fn(x: Tensor[B, ...], t: Tensor[B]) -> Tensor`` returning one
prediction kind (``eps``, ``x0``, ``v``, ``velocity``, ``score``; docs/engine-api.md). The samplers
work with the denoiser ``D(x, t) = E[x0 | x_t = x]`` (Karras et al. 2022, Eq. 2-3), obtained from
any kind through the path's exact conversion ``path.convert(pred, x, t, src=kind, dst="x0")``.
Guidance transforms (``scigen.core.guidance``) take a :class:`Denoiser` and return one.
Time convention: ``t = 0`` is data, ``t = 1`` is noise.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

__all__ = ["PREDICTIONS", "Denoiser", "as_denoiser"]

PREDICTIONS = ("eps", "x0", "v", "velocity", "score")


class Denoiser:
    """A callable ``D(x, t) -> x0`` that also knows its ``path`` and the ``prediction`` kind of the model
    it came from (guidance such as classifier-free guidance needs both).

    Args:
        fn: ``fn(x, t) -> x0`` with ``t`` of shape ``[B]``.
        path: the Gaussian path (``alpha``, ``sigma``, ``convert``, ...).
        prediction: the kind the underlying model returns (informational; ``fn`` already returns x0).
    """

    def __init__(self, fn: Callable[[Tensor, Tensor], Tensor], path, prediction: str = "x0"):
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.path = path
        self.prediction = prediction

    @classmethod
    def from_model(cls, model_fn: Callable, path, prediction: str = "eps", name: str = "model_fn") -> Denoiser:
        """Wrap a model function returning ``prediction`` into an x0-denoiser via ``path.convert``.

        Every call checks that the model returns a tensor of ``x``'s shape and raises a
        ``ValueError`` naming ``name`` otherwise.
        """
        if not callable(model_fn):
            raise TypeError(f"{name} must be callable as {name}(x, t), got {type(model_fn).__name__}")
        if prediction not in PREDICTIONS:
            raise ValueError(f"prediction must be one of {PREDICTIONS}, got {prediction!r}")

        checked = []

        def fn(x: Tensor, t: Tensor) -> Tensor:
            out = model_fn(x, t)
            if not isinstance(out, Tensor) or out.shape != x.shape:
                got = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
                raise ValueError(f"{name}(x, t) must return a tensor of x's shape {tuple(x.shape)}, got {got}")
            x0 = out if prediction == "x0" else path.convert(out, x, t, src=prediction, dst="x0")
            if not checked:  # first call only: catch an impossible start (e.g. eps -> x0 where alpha = 0)
                checked.append(True)
                if not bool(torch.isfinite(x0).all()):
                    raise ValueError(
                        f"the x0 estimate from {name} (prediction={prediction!r}) is not finite at the first time "
                        f"t={float(t.reshape(-1)[0])}: converting {prediction!r} to x0 divides by alpha(t), which is 0 "
                        "at t=1 of linear/cosine paths; start at t_max < 1 or use a v/velocity/x0 model"
                    )
            return x0

        return cls(fn, path, prediction)

    def __call__(self, x: Tensor, t: Tensor) -> Tensor:
        return self.fn(x, t)

    def __repr__(self) -> str:
        return f"Denoiser(prediction={self.prediction!r}, path={self.path!r})"


def as_denoiser(obj, like: Denoiser) -> Denoiser:
    """Return ``obj`` as a :class:`Denoiser` (a plain callable inherits ``like``'s path and kind)."""
    if isinstance(obj, Denoiser):
        return obj
    if not callable(obj):
        raise TypeError(f"a guidance transform must return a callable denoiser, got {type(obj).__name__}")
    return Denoiser(obj, like.path, like.prediction)
